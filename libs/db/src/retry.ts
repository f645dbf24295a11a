/**
 * The one retry policy: exponential backoff, capped, with jitter. Every wait before trying again (a
 * consumer's failed batch, the relay, a Kafka send, a serialization failure, an analysis job, an LLM
 * call) is `retryDelayMs` of a policy; `retry` runs a function under one.
 */
export interface RetryPolicy {
  /** The wait before the second try (before jitter); each further try doubles it. */
  readonly baseMs: number
  /** No wait is longer than this (before jitter). */
  readonly maxMs: number
  /**
   * `full`: anywhere in [0, wait) (AWS's "full jitter", spreads retrying processes the most); `equal`:
   * in [wait/2, wait); `none`: the wait itself.
   */
  readonly jitter: 'full' | 'equal' | 'none'
  /** Tries after the first before `retry` gives up (default: no limit). */
  readonly retries?: number
}

/** The wait before try `attempt + 1`, `attempt` counting the failures so far from 0. */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const wait = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt))
  switch (policy.jitter) {
    case 'full':
      return random() * wait
    case 'equal':
      return wait / 2 + (random() * wait) / 2
    case 'none':
      return wait
  }
}

export interface RetryOptions {
  /** Whether a failure is worth another try (default: every failure is). */
  readonly retryable?: (err: unknown) => boolean
  /** Told of each failure that will be tried again, before the wait. */
  readonly onRetry?: (err: unknown, attempt: number, delayMs: number) => void
  /** Injected for tests; a timer otherwise. */
  readonly sleep?: (ms: number) => Promise<void>
  readonly random?: () => number
}

/**
 * Runs `fn` until it succeeds, waiting `retryDelayMs` between tries; throws the last failure once the
 * policy's retries are spent or a failure is not retryable.
 */
export async function retry<T>(
  policy: RetryPolicy,
  fn: (attempt: number) => Promise<T>,
  opts: RetryOptions = {},
): Promise<T> {
  const sleep = opts.sleep ?? delay
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (attempt >= (policy.retries ?? Number.POSITIVE_INFINITY)) throw err
      if (opts.retryable && !opts.retryable(err)) throw err
      const ms = retryDelayMs(policy, attempt, opts.random)
      opts.onRetry?.(err, attempt, ms)
      await sleep(ms)
    }
  }
}

/** A plain sleep (several may run at once, unlike one Waiter's). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
