import { isDatabaseUnavailable, withTransaction } from '@cas/db'
import { AppError } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import type pg from 'pg'
import { type CaptureOutcome, type CaptureRequest, type CaptureResult, captureGroup } from './capture.ts'

export interface GroupCommitOptions {
  /** Capture transactions running at once (each holds one pooled connection). */
  readonly maxTransactions: number
  /** The most captures one transaction takes. */
  readonly maxGroup: number
  /** Called with each committed group's size (for the metrics). */
  readonly onCommit?: (size: number) => void
}

interface Pending {
  readonly request: CaptureRequest
  readonly resolve: (result: CaptureResult) => void
  readonly reject: (err: unknown) => void
}

/**
 * Group commit of concurrent captures. A capture waits in a queue; while fewer than `maxTransactions`
 * transactions run, the queue goes into a new one, up to `maxGroup` captures at a time. Under light load
 * a capture therefore has a transaction of its own at once; under heavy load the captures that arrived
 * while the transactions were busy share the next one: one commit (one WAL flush) and one statement per
 * step for all of them, instead of one each. Each capture's answer is given once its group has committed,
 * so a 200 still means durable.
 *
 * A conversation is in one running transaction at most: its later captures wait for the next turn, so
 * captures of a conversation commit in the order they arrived. A group that fails for a reason other than the database being unreachable is run again
 * one capture per transaction, so that only the capture at fault gets the error.
 */
export class CaptureCommitter {
  private readonly queue: Pending[] = []
  private running = 0
  /** The conversations of the running transactions: their next captures wait for the next turn. */
  private readonly busy = new Set<string>()
  private scheduled = false

  constructor(
    private readonly pool: pg.Pool,
    private readonly keyring: Keyring,
    private readonly now: () => Date,
    private readonly opts: GroupCommitOptions,
  ) {}

  capture(request: CaptureRequest): Promise<CaptureResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject })
      this.schedule()
    })
  }

  /** Captures waiting for a transaction. */
  get waiting(): number {
    return this.queue.length
  }

  // Starting on the next turn of the event loop lets the requests read in the same turn share a group.
  private schedule(): void {
    if (this.scheduled || this.running >= this.opts.maxTransactions || this.queue.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      while (this.running < this.opts.maxTransactions && this.queue.length > 0) {
        const group = this.takeGroup()
        if (group.length === 0) break
        this.running++
        void this.commit(group).finally(() => {
          this.running--
          for (const pending of group) this.busy.delete(pending.request.body.conversationId)
          this.schedule()
        })
      }
    })
  }

  private takeGroup(): Pending[] {
    const group: Pending[] = []
    const rest: Pending[] = []
    for (const pending of this.queue) {
      // The conversation's id as sent; a capture of another chatbot with the same id just waits a turn.
      const conversation = pending.request.body.conversationId
      if (group.length < this.opts.maxGroup && !this.busy.has(conversation)) {
        this.busy.add(conversation)
        group.push(pending)
      } else rest.push(pending)
    }
    this.queue.splice(0, this.queue.length, ...rest)
    return group
  }

  private async commit(group: readonly Pending[]): Promise<void> {
    let outcomes: CaptureOutcome[]
    try {
      outcomes = await this.run(group)
    } catch (err) {
      if (group.length === 1 || isDatabaseUnavailable(err)) {
        for (const pending of group) pending.reject(err)
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

  private run(group: readonly Pending[]): Promise<CaptureOutcome[]> {
    return withTransaction(this.pool, (client) =>
      captureGroup(
        client,
        this.keyring,
        group.map((p) => p.request),
        this.now,
      ),
    )
  }
}

function settle(pending: Pending, outcome: CaptureOutcome): void {
  if (outcome instanceof AppError) pending.reject(outcome)
  else pending.resolve(outcome)
}
