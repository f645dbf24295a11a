import type pg from 'pg'
import { withTransaction } from './transaction.ts'
import { isDatabaseUnavailable } from './unavailable.ts'

/** What one request of a group gets: its value, or the error it alone answers with. */
export type GroupOutcome<R> =
  | { readonly ok: true; readonly value: R }
  | { readonly ok: false; readonly error: unknown }

export interface GroupCommitOptions {
  /** Transactions running at once (each holds one pooled connection). */
  readonly maxTransactions: number
  /** The most requests one transaction takes; 1 gives every request its own transaction. */
  readonly maxGroup: number
  /** Called with each committed group's size (for the metrics). */
  readonly onCommit?: (size: number) => void
  /**
   * Hold the queue back while this says more requests are about to come (given how many wait): the
   * next transaction then takes them too. Held at most `holdMs` from the oldest waiting request; call
   * `reconsider()` when the answer may have changed without a submit.
   */
  readonly holdWhile?: (waiting: number) => boolean
  /** The longest a request is held back by `holdWhile` (default 0: never held). */
  readonly holdMs?: number
}

export interface GroupWork<T, R> {
  /**
   * Requests with the same key are never in running transactions at the same time, so they commit in
   * the order they were submitted.
   */
  readonly keyOf: (request: T) => string
  /** Does a group's work inside its transaction: one outcome per request, in order. */
  readonly run: (client: pg.PoolClient, group: readonly T[]) => Promise<GroupOutcome<R>[]>
}

interface Pending<T, R> {
  readonly request: T
  /** When it was submitted (performance.now()). */
  readonly at: number
  readonly resolve: (value: R) => void
  readonly reject: (err: unknown) => void
}

/**
 * The fewest requests a transaction takes when the queue is spread over the free transactions (when
 * fewer are queued, it takes them all). Smaller groups cost more per request: a group of four captures
 * spent about 1.7 times the CPU per capture of a group of sixteen.
 */
export const MIN_SPREAD_GROUP = 8

/**
 * Group commit. A request waits in a queue; while fewer than `maxTransactions` transactions run, the queue
 * goes into new ones, spread evenly over the transactions free at the time (each takes at least
 * `MIN_SPREAD_GROUP` and at most `maxGroup` requests). Under light load a request therefore has a
 * transaction of its own at once; under heavy load the requests that arrived while the transactions were
 * busy share the next ones: one commit (one WAL flush) per group and, when `run` is written set-based,
 * one statement per step for all of a group. Each request's promise settles once its group has committed
 * (or failed).
 *
 * Spread rather than all in one: N clients that each send again once answered would otherwise travel
 * in one group forever, the others idle, and a group's work in this process and in Postgres would never
 * overlap another's (the measurements: bench/FINDINGS.md, "From source comments").
 *
 * A group that fails as a whole, for a reason other than the database being unreachable, is run again
 * one request per transaction, so that only the request at fault gets the error. Retryable failures
 * (deadlocks, serialization) are retried by `withTransaction` first. When the database is unreachable,
 * the group and every request still queued fail at once with that error, rather than each waiting in
 * turn for a connection that will not come.
 */
export class GroupCommitter<T, R> {
  private readonly queue: Pending<T, R>[] = []
  private running = 0
  private scheduled = false
  /** The keys of the running transactions' requests: their next requests wait for the next turn. */
  private readonly busy = new Set<string>()
  /** The timer that ends a hold (holdWhile), while one is set. */
  private holdTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly pool: pg.Pool,
    private readonly work: GroupWork<T, R>,
    private readonly opts: GroupCommitOptions,
  ) {}

  submit(request: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, at: performance.now(), resolve, reject })
      this.schedule()
    })
  }

  /** Looks again whether to start a transaction (holdWhile's answer may have changed). */
  reconsider(): void {
    this.schedule()
  }

  /** Requests waiting for a transaction. */
  get waiting(): number {
    return this.queue.length
  }

  // Starting on the next turn of the event loop lets the requests read in the same turn share a group.
  private schedule(): void {
    if (this.scheduled || this.running >= this.opts.maxTransactions || this.queue.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      if (this.held()) return
      while (this.running < this.opts.maxTransactions && this.queue.length > 0) {
        const group = this.takeGroup()
        if (group.length === 0) break
        this.running++
        void this.commit(group).finally(() => {
          this.running--
          for (const pending of group) this.busy.delete(this.work.keyOf(pending.request))
          this.schedule()
        })
      }
    })
  }

  /**
   * Whether to wait for more requests (holdWhile), at most holdMs from the oldest waiting one; a timer
   * looks again when that time is up.
   */
  private held(): boolean {
    const { holdWhile, holdMs = 0 } = this.opts
    const oldest = this.queue[0]
    if (!holdWhile || holdMs <= 0 || !oldest) return false
    const left = oldest.at + holdMs - performance.now()
    if (left <= 0 || !holdWhile(this.queue.length)) {
      // The hold is over (reconsider() found nothing more coming, or its time is up): its timer has
      // nothing left to do.
      clearTimeout(this.holdTimer)
      this.holdTimer = undefined
      return false
    }
    this.holdTimer ??= setTimeout(() => {
      this.holdTimer = undefined
      this.schedule()
    }, Math.ceil(left))
    return true
  }

  private takeGroup(): Pending<T, R>[] {
    const free = this.opts.maxTransactions - this.running
    const size = Math.min(this.opts.maxGroup, Math.max(MIN_SPREAD_GROUP, Math.ceil(this.queue.length / free)))
    const group: Pending<T, R>[] = []
    const rest: Pending<T, R>[] = []
    for (const pending of this.queue) {
      const key = this.work.keyOf(pending.request)
      if (group.length < size && !this.busy.has(key)) {
        this.busy.add(key)
        group.push(pending)
      } else rest.push(pending)
    }
    this.queue.splice(0, this.queue.length, ...rest)
    return group
  }

  private async commit(group: readonly Pending<T, R>[]): Promise<void> {
    let outcomes: GroupOutcome<R>[]
    try {
      outcomes = await this.run(group)
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // The requests waiting for a transaction would only wait for the same dead database in turn:
        // they get the answer now (a 503 for the callers), as each would have alone.
        for (const pending of [...group, ...this.queue.splice(0)]) pending.reject(err)
        return
      }
      if (group.length === 1) {
        group[0]!.reject(err)
        return
      }
      for (const pending of group) {
        try {
          settle(pending, (await this.run([pending]))[0]!)
          this.opts.onCommit?.(1)
        } catch (alone) {
          pending.reject(alone)
        }
      }
      return
    }
    this.opts.onCommit?.(group.length)
    for (const [i, pending] of group.entries()) settle(pending, outcomes[i]!)
  }

  private run(group: readonly Pending<T, R>[]): Promise<GroupOutcome<R>[]> {
    return withTransaction(this.pool, (client) =>
      this.work.run(
        client,
        group.map((p) => p.request),
      ),
    )
  }
}

function settle<T, R>(pending: Pending<T, R>, outcome: GroupOutcome<R>): void {
  if (outcome.ok) pending.resolve(outcome.value)
  else pending.reject(outcome.error)
}
