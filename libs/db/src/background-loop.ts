import { type RetryPolicy, retryDelayMs } from './retry.ts'
import { Waiter } from './waiter.ts'

export interface BackgroundLoopOptions {
  /**
   * One turn. Returning `true` says there is more to do at once (the next turn starts without waiting);
   * anything else waits `intervalMs` (or until `wake()`).
   */
  readonly run: () => Promise<unknown>
  readonly intervalMs: number
  /** Told of a turn that threw, with the failures in a row before it (0 for the first). */
  readonly onError?: (err: unknown, failures: number) => void
  /** The wait after a failed turn (default: `intervalMs`). */
  readonly retry?: RetryPolicy
  /** Whether the first turn waits an interval (a sweep every N minutes) or runs at once (default). */
  readonly firstRunAfterInterval?: boolean
  /** The waits do not keep the process alive on their own (housekeeping). */
  readonly unref?: boolean
  /** Injected for tests: how a wait is made (the loop's Waiter otherwise). `wake()` ends it early. */
  readonly sleep?: (ms: number, waiter: Waiter) => Promise<void>
}

export interface BackgroundLoop {
  start(): void
  /** Ends the wait under way so that the next turn starts now; during a turn, the next starts without a wait. */
  wake(): void
  /** Stops starting turns, ends the wait under way and resolves once the turn under way (if any) is done. */
  stop(): Promise<void>
  readonly running: boolean
}

/** The start/stop loop every background task runs: a turn, a wait, again, until stopped. */
export function backgroundLoop(opts: BackgroundLoopOptions): BackgroundLoop {
  const waiter = new Waiter({ unref: opts.unref })
  const sleep = (ms: number) => (opts.sleep ? opts.sleep(ms, waiter) : waiter.sleep(ms))
  let running = false
  let loop: Promise<void> | undefined
  // A wake while a turn runs (work came after the turn looked for it) is kept: the next turn starts at once
  // instead of the wait ending early, which a wake that found no wait under way could not do (the analysis
  // job runner's claim, looked at every 10 minutes in a test, missed a job queued during its signal sweep).
  let turnUnderWay = false
  let wokenDuringTurn = false
  const turns = async () => {
    let failures = 0
    if (opts.firstRunAfterInterval) await sleep(opts.intervalMs)
    while (running) {
      let wait = opts.intervalMs
      turnUnderWay = true
      wokenDuringTurn = false
      try {
        const more = await opts.run()
        failures = 0
        if (more === true || wokenDuringTurn) continue
      } catch (err) {
        opts.onError?.(err, failures)
        if (opts.retry) wait = retryDelayMs(opts.retry, failures)
        failures++
      } finally {
        turnUnderWay = false
      }
      if (running) await sleep(wait)
    }
  }
  return {
    start() {
      if (running) return
      running = true
      loop = turns()
    },
    wake: () => {
      if (turnUnderWay) wokenDuringTurn = true
      waiter.wake()
    },
    async stop() {
      running = false
      waiter.wake()
      await loop
    },
    get running() {
      return running
    },
  }
}
