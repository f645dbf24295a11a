import type { ClientBase } from 'pg'
import type { BatchHandler } from './apply-batch.ts'
import type { JournalRecord } from './records.ts'

/**
 * What one step of a consumer does with one event (the model is PostHog's ingestion `results.ts`):
 *
 * - `ok(value)`: the event goes on to the next step with `value`;
 * - `drop(reason)`: the event stops here, on purpose or because it cannot be read; counted by consumer
 *   and reason (`cas_consumer_dropped_events_total`) and logged, unless the reason is a quiet one;
 * - `retry(reason)`: the whole batch fails and is tried again with the consumer's backoff, for as long as
 *   it takes; never dead-lettered (`isTransientError` holds for it);
 * - `deadLetter(reason)`: the event cannot be applied, now or ever: the consumer sets it aside in the
 *   dead-letter store (dead-letters.ts) with `reason` as its error, at once, and applies the rest.
 */
export type StepResult<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'drop'; readonly reason: string; readonly detail?: string }
  | { readonly kind: 'retry'; readonly reason: string }
  | { readonly kind: 'deadLetter'; readonly reason: string }

export const ok = <T>(value: T): StepResult<T> => ({ kind: 'ok', value })
export const drop = (reason: string, detail?: string): StepResult<never> =>
  detail === undefined ? { kind: 'drop', reason } : { kind: 'drop', reason, detail }
export const retry = (reason: string): StepResult<never> => ({ kind: 'retry', reason })
export const deadLetter = (reason: string): StepResult<never> => ({ kind: 'deadLetter', reason })

/** For the `default` of an exhaustive switch: a value the types say cannot be there. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`)
}

/** An event on its way through a consumer's steps: the record it came as, and what the steps made of it. */
export interface StepItem<T> {
  readonly record: JournalRecord
  readonly value: T
}

/**
 * One step over a batch (set-based, as the consumers are: one query opens a batch, one statement per
 * table writes it): a result for each item, in order. Runs inside the batch's transaction.
 */
export type Step<I, O> = (
  items: readonly StepItem<I>[],
  client: ClientBase,
) => Promise<readonly StepResult<O>[]>

/** A step that looks at one event at a time, in order, and needs no database. */
export function eachEvent<I, O>(fn: (value: I, record: JournalRecord) => StepResult<O>): Step<I, O> {
  return async (items) => items.map((item) => fn(item.value, item.record))
}

/** Thrown by the runner for `retry`: a failure retrying cures (its code makes `isTransientError` true). */
export class RetryBatchError extends Error {
  readonly code = 'ERETRY'
  constructor(reason: string, record: JournalRecord) {
    super(`${reason} (event ${record.id}, ${record.type}): retrying the batch`)
  }
}

/**
 * Thrown by the runner for `deadLetter`: the consumer applies the batch an event at a time at once, and
 * sets this event aside without trying it again (dead-letters.ts).
 */
export class DeadLetterError extends Error {
  constructor(
    readonly reason: string,
    readonly record: JournalRecord,
  ) {
    super(reason)
  }
}

export interface PipelineOptions {
  /** The consumer's name in the metrics and logs: its group id. */
  readonly consumer: string
  /** Drop reasons that are how things are meant to go (a deleted chatbot's events): counted, not logged. */
  readonly quiet?: readonly string[]
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
  /** Where the drops are counted by reason (default a new record): the consumer's `stats.droppedEvents`. */
  readonly drops?: Record<string, number>
}

/**
 * A consumer's steps (decode, open, skip the deleted, handle), run over each batch by one runner: every
 * drop counted by reason in `drops` (which the consumer exposes as `stats.droppedEvents`, in Prometheus
 * as `cas_consumer_dropped_events_total{group, reason}`) and logged, retries and dead letters turned
 * into what the consumer does with them. Built with `pipeline(opts).pipe(step)…`, each step typed by
 * what the one before it gives.
 */
export class ConsumerPipeline<T> {
  readonly drops: Record<string, number>

  private constructor(
    private readonly opts: PipelineOptions,
    private readonly steps: readonly Step<unknown, unknown>[],
    drops: Record<string, number>,
  ) {
    this.drops = drops
  }

  static start(opts: PipelineOptions): ConsumerPipeline<JournalRecord> {
    return new ConsumerPipeline<JournalRecord>(opts, [], opts.drops ?? {})
  }

  /** This pipeline with one more step. */
  pipe<U>(step: Step<T, U>): ConsumerPipeline<U> {
    return new ConsumerPipeline<U>(this.opts, [...this.steps, step as Step<unknown, unknown>], this.drops)
  }

  /**
   * Runs the steps over the batch, inside its transaction. Returns the items every step passed. The drops
   * are counted once the steps are through, so a batch retried or dead-lettered counts none twice.
   */
  async run(records: readonly JournalRecord[], client: ClientBase): Promise<StepItem<T>[]> {
    let items: StepItem<unknown>[] = records.map((record) => ({ record, value: record }))
    const dropped: { reason: string; detail?: string; record: JournalRecord }[] = []
    for (const step of this.steps) {
      if (items.length === 0) break
      const results = await step(items, client)
      if (results.length !== items.length)
        throw new Error(`a step gave ${results.length} results for ${items.length} events`)
      const next: StepItem<unknown>[] = []
      for (const [i, result] of results.entries()) {
        const record = items[i]!.record
        switch (result.kind) {
          case 'ok':
            next.push({ record, value: result.value })
            break
          case 'drop':
            dropped.push({ reason: result.reason, detail: result.detail, record })
            break
          case 'retry':
            throw new RetryBatchError(result.reason, record)
          case 'deadLetter':
            throw new DeadLetterError(result.reason, record)
          default:
            assertNever(result, 'step result')
        }
      }
      items = next
    }
    const quiet = new Set(this.opts.quiet ?? [])
    for (const { reason, detail, record } of dropped) {
      this.drops[reason] = (this.drops[reason] ?? 0) + 1
      if (!quiet.has(reason))
        this.opts.log?.('dropped an event', {
          consumer: this.opts.consumer,
          reason,
          detail,
          eventId: record.id,
          type: record.type,
        })
    }
    return items as StepItem<T>[]
  }

  /** The consumer's handler and where it counts drops: spread into `createEventConsumer`'s options. */
  consumerOptions(): { handler: BatchHandler; droppedEvents: Record<string, number> } {
    return {
      handler: async (records, client) => {
        await this.run(records, client)
      },
      droppedEvents: this.drops,
    }
  }
}

export function pipeline(opts: PipelineOptions): ConsumerPipeline<JournalRecord> {
  return ConsumerPipeline.start(opts)
}
