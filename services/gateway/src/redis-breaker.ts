/**
 * When to stop asking a Redis that does not answer. Each rate-limit command waits up to its timeout (0.5 s)
 * before its limit is skipped; under a hang that is every request's 0.5 s for as long as the hang lasts.
 * After `timeoutsToOpen` consecutive timeouts the breaker opens: requests skip Redis at once (their limits
 * not enforced, as when a command times out) for `firstOpenMs`, then one request probes it. An answer
 * closes the breaker; another timeout opens it again for twice as long, up to `maxOpenMs`, so a long hang
 * costs one request's wait per interval and a Redis that is back is used again within `maxOpenMs`.
 */
export interface BreakerPolicy {
  readonly timeoutsToOpen: number
  readonly firstOpenMs: number
  readonly maxOpenMs: number
}

export const REDIS_BREAKER: BreakerPolicy = { timeoutsToOpen: 3, firstOpenMs: 1_000, maxOpenMs: 30_000 }

/** Whether a command went to Redis as usual (`closed`) or as the probe of an open breaker. */
export type Permit = 'closed' | 'probe'

/** What a command to Redis came to. */
export type Outcome = 'answered' | 'timed-out' | 'failed'

export interface BreakerEvents {
  /** Closed to open: Redis is skipped from now on (not called again when a probe fails). */
  opened(): void
  /** A probe was answered: Redis is used again. */
  closed(): void
}

/**
 * The breaker's state machine: closed (every command goes to Redis), open (none does until `openUntil`),
 * probing (one command went; the others skip it until its outcome). Outcomes of commands sent under an
 * earlier state are ignored: a burst's commands all time out together, and those count as one opening.
 */
export class RedisBreaker {
  private state: 'closed' | 'open' | 'probing' = 'closed'
  private consecutiveTimeouts = 0
  private openMs: number
  private openUntil = 0

  constructor(
    private readonly policy: BreakerPolicy,
    private readonly now: () => number,
    private readonly events: BreakerEvents,
  ) {
    this.openMs = policy.firstOpenMs
  }

  /** Whether Redis is being skipped (open, or one probe out). */
  get isOpen(): boolean {
    return this.state !== 'closed'
  }

  /** Whether a command may go to Redis now, and as what; undefined: skip it. */
  admit(): Permit | undefined {
    if (this.state === 'closed') return 'closed'
    if (this.state === 'open' && this.now() >= this.openUntil) {
      this.state = 'probing'
      return 'probe'
    }
    return undefined
  }

  report(permit: Permit, outcome: Outcome): void {
    if (permit === 'probe') {
      if (this.state !== 'probing') return
      if (outcome === 'answered') {
        this.state = 'closed'
        this.consecutiveTimeouts = 0
        this.openMs = this.policy.firstOpenMs
        this.events.closed()
      } else {
        this.openMs = Math.min(this.openMs * 2, this.policy.maxOpenMs)
        this.open()
      }
      return
    }
    if (this.state !== 'closed') return
    if (outcome === 'answered') this.consecutiveTimeouts = 0
    if (outcome !== 'timed-out') return
    this.consecutiveTimeouts += 1
    if (this.consecutiveTimeouts < this.policy.timeoutsToOpen) return
    this.open()
    this.events.opened()
  }

  private open(): void {
    this.state = 'open'
    this.openUntil = this.now() + this.openMs
  }
}
