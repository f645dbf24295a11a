import type { Pool } from 'pg'
import type { BatchHandler, BatchOrder, SourcedRecord } from './apply-batch.ts'
import { LifecycleTurns } from './lifecycle-turns.ts'
import type { JournalRecord, StreamType } from './records.ts'

/** What every event-log consumer needs, whichever backend delivers the events. */
export interface ConsumerOptions {
  readonly pool: Pool
  /** Consumers sharing a group id split the partitions and share one checkpoint per partition. */
  readonly groupId: string
  readonly streamTypes: readonly StreamType[]
  /** Runs inside the transaction that records the checkpoint; receives each event at most once. */
  readonly handler: BatchHandler
  /**
   * Where the handler counts the events it drops, by reason (ConsumerPipeline.consumerOptions() gives
   * both): exposed as `stats.droppedEvents`, with the consumer's own (undecodable messages).
   */
  readonly droppedEvents?: Record<string, number>
  /** Runs first in that transaction, before it has an id (see `BatchOrder`). */
  readonly orderBatch?: BatchOrder
  /**
   * The handler never appends to the journal (a projector): each batch's transaction is marked so, and
   * journal readers pass it while it runs (markNeverAppends). An append in it fails.
   */
  readonly neverAppends?: boolean
  /** Most events handed to the handler in one transaction (default 500). */
  readonly maxBatchSize?: number
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
  /**
   * Back-pressure from downstream (a job queue that is full): asked before each batch is applied (Kafka,
   * where the fetched batch waits, heartbeating), or before the journal is read again after a read that
   * applied events (not after one that found none, or only other stream types'). While it answers false the
   * consumer reads and applies nothing, counts no error and logs nothing; it sets `stats.paused` and
   * asks again every `pauseIntervalMs` (default 250). The events wait in the log, behind the checkpoint.
   * An admit that throws is a failed batch (logged, counted, retried with a backoff).
   */
  readonly admit?: () => Promise<boolean>
  readonly pauseIntervalMs?: number
  /**
   * Attempts at a failing batch before the consumer looks for the event at fault, and then at that event
   * on its own before it is set aside in the dead-letter store (default DEFAULT_MAX_ATTEMPTS,
   * dead-letters.ts). Failures that retrying can cure (the database away, a lock lost) are retried for as
   * long as they last and set nothing aside.
   */
  readonly maxAttempts?: number
  /** How often the consumer looks for dead letters an operator asked to re-drive (default 2 s). */
  readonly redriveIntervalMs?: number
  /** Called after a batch committed, with the events the handler applied (duplicates left out). */
  readonly onApplied?: (records: readonly JournalRecord[]) => void
  /**
   * How many transactions apply batches at the same time (default 1). Journal backend: each of the
   * member's partitions read in one go has its own. Kafka backend: above 1, the batches of a fetch (one
   * per partition) are applied together in at most this many transactions, grouped by partition number
   * (FetchCombiner in kafka-consumer.ts). kafkajs otherwise applies a fetch's batches one partition
   * after another before fetching again: with a transaction and a commit per partition batch, a fetch
   * over the 36 partitions of three topics took seconds under load, and freshness with it. A stream's
   * events stay in one partition, in order; a key's events in two topics (a conversation's capture and
   * its analysis) have the same partition number, so they share a transaction, while other groups run
   * concurrently, as they already do in two members of a group. Above 1 the topics must have the same
   * partition count (checked at start), so that the handler can order a key's batches by their
   * partition number (`BatchSource.partition`).
   */
  readonly partitionsConcurrently?: number
  /**
   * Events of `streamType` wait for the events of `leader` that come before them in the journal
   * (TrailingOrder in trailing.ts): the projector applies a conversation's analysis after its messages,
   * even when a Kafka fetch of the small analysis events reaches much further into the journal than one
   * of the conversation events. Kafka backend, co-partitioned topics (checked at start); the journal
   * backend reads a stream's events of every type in journal order already (one stream id, one
   * partition), so it ignores this. Speed only: applied in any order, the events give the same result.
   */
  readonly trailing?: {
    readonly streamType: StreamType
    readonly leader: StreamType
    /** Longest a partition is held back (default 30 s): a bound, should the leader stop advancing. */
    readonly maxHoldMs?: number
  }
}

export interface ConsumerStats {
  /** Events handed to the handler and committed. */
  applied: number
  /** Events skipped as already applied (redelivery, relay duplicates). */
  duplicates: number
  /** Messages that could not be read as events, each logged with its reason. */
  dropped: number
  /**
   * Events dropped by the consumer's steps (decode, open, skip the deleted, handle: consumer-pipeline.ts),
   * by reason. Undecodable messages are counted here too, as `undecodable`.
   */
  readonly droppedEvents: Record<string, number>
  batches: number
  errors: number
  /** Events set aside in the dead-letter store by this member (dead-letters.ts). */
  deadLettered: number
  /** Dead letters this member applied again on an operator's request. */
  redriven: number
  /**
   * Times the backend stopped on its own and the consumer started it again: kafkajs stops a consumer for
   * good after an error it holds non-retriable (ConsumerLifecycle.restart).
   */
  restarts: number
  /** Whether `admit` holds the consumer back right now (back-pressure, not a failure). */
  paused: boolean
  /** Partitions this member owns right now (Kafka partitions of its topics, or journal partitions). */
  partitions: string[]
  /** `occurredAt` of the last event this member applied (null before the first). */
  lastAppliedOccurredAt: string | null
}

/** How far one partition this member owns is behind: events in the log past its checkpoint. */
export interface PartitionLag {
  readonly topic: string
  readonly partition: number
  readonly lag: number
}

/**
 * A consumer's `start()` and `stop()` around its own `begin` (join the group, start applying) and `end`
 * (stop applying, give back what was taken), as EventConsumer describes them; both backends use it.
 * Starts and stops run in the order they were asked for, each once the ones before it have ended
 * (LifecycleTurns, as the relay's): a start asked for during a stop begins after that stop's `end`.
 * `running` is true from a start's turn to the next stop asked for: `begin` checks it after each step
 * that waits, and starts nothing more once a stop was asked for (the stop, next in turn, gives back what
 * it took). A start that fails is no longer running and gives back what it took (`end`) before it
 * rejects: kept, the journal's lock connection stayed lent out with its locks, the Kafka consumer
 * connected, and a start asked for again returned at once and started nothing.
 */
export class ConsumerLifecycle {
  running = false
  private readonly turns = new LifecycleTurns()
  /** The start (or restart) asked for last: what a start asked for again while it runs or waits shares. */
  private starting: Promise<void> | undefined
  /** A start was asked for and its turn has not come yet. */
  private startWaiting = false

  constructor(
    private readonly begin: () => Promise<void>,
    private readonly end: () => Promise<void>,
  ) {}

  start(): Promise<void> {
    // Asked for again while one is under way or waits for its turn: the same start, its outcome too.
    if ((this.running || this.startWaiting) && this.starting) return this.starting
    this.startWaiting = true
    this.starting = this.turns.start(async (stopped) => {
      // A stop asked for since (which also ended the wait): this start starts nothing.
      if (stopped()) return
      this.startWaiting = false
      this.running = true
      try {
        await this.begin()
      } catch (err) {
        this.running = false
        await this.end()
        throw err
      }
    })
    return this.starting
  }

  stop(): Promise<void> {
    this.running = false
    this.startWaiting = false
    return this.turns.stop(() => this.end())
  }

  /**
   * Begins again after the backend stopped on its own while running (kafkajs gives up on an error it
   * holds non-retriable, such as "Failed to find group coordinator" while a broker restarts, and starts
   * nothing again): in turn after any start under way, ends what is left, waits `backoff(attempt)` and
   * begins. A begin that fails is reported with `failed`, and one during which the backend stopped again
   * (asked for while this runs) is followed by another, the backoff growing, for as long as the consumer
   * runs. A stop asked for meanwhile waits for the attempt under way (its turn is next), which begins
   * nothing more.
   */
  restart(backoff: (attempt: number) => Promise<void>, failed: (err: unknown) => void): Promise<void> {
    if (!this.running) return Promise.resolve()
    this.stoppedAgain = true
    if (this.restarting) return this.restarting
    const again = async () => {
      for (let attempt = 0; this.running && this.stoppedAgain; attempt++) {
        this.stoppedAgain = false
        await this.end()
        await backoff(attempt)
        if (!this.running) return
        try {
          await this.begin()
        } catch (err) {
          failed(err)
          this.stoppedAgain = true
        }
      }
    }
    const restarting = this.turns.start(again).finally(() => {
      this.restarting = undefined
    })
    this.restarting = restarting
    this.starting = restarting
    return restarting
  }

  private restarting: Promise<void> | undefined
  /** The backend stopped (again) since the restart under way last began it. */
  private stoppedAgain = false
}

export interface EventConsumer {
  readonly groupId: string
  /**
   * Joins the group and starts applying. One that fails gives back what it took before it rejects (the
   * Kafka consumer disconnected; journal backend: the lock connection and its locks back to the pool), and
   * may be asked for again. Asked for while one is under way, it shares that start's outcome; asked for
   * while a stop is under way, it starts once the stop has ended (starts and stops run in call order).
   */
  start(): Promise<void>
  /**
   * Finishes the batch in flight, commits it, and leaves the group. Asked for while `start()` is under
   * way, it waits for the start to end, which then starts nothing more, and leaves (journal backend: the
   * lock connection goes back to the pool).
   */
  stop(): Promise<void>
  readonly stats: ConsumerStats
  /**
   * Lag of each partition this member owns now: Kafka's high-water mark (or the readable end of the
   * journal) against the checkpoint in Postgres. Kafka's committed offsets are never used.
   */
  lag(): Promise<PartitionLag[]>
}

export function newConsumerStats(droppedEvents: Record<string, number> = {}): ConsumerStats {
  return {
    applied: 0,
    duplicates: 0,
    dropped: 0,
    droppedEvents,
    batches: 0,
    errors: 0,
    deadLettered: 0,
    redriven: 0,
    restarts: 0,
    paused: false,
    partitions: [],
    lastAppliedOccurredAt: null,
  }
}

/** The drop reason (`stats.droppedEvents`) of events left out as not in the journal (apply-batch.ts). */
export const NOT_IN_JOURNAL = 'not_in_journal'

/** Counts a committed batch in the stats and tells the consumer's owner. */
export function recordOutcome(
  stats: ConsumerStats,
  opts: ConsumerOptions,
  outcome: {
    readonly applied: readonly JournalRecord[]
    readonly duplicates: number
    readonly deadLettered?: readonly JournalRecord[]
    readonly notInJournal?: readonly SourcedRecord[]
  },
): void {
  const lost = outcome.notInJournal ?? []
  if (lost.length > 0) {
    stats.droppedEvents[NOT_IN_JOURNAL] = (stats.droppedEvents[NOT_IN_JOURNAL] ?? 0) + lost.length
    opts.log?.(
      'left out events the journal does not hold: Kafka has them from a journal this database lost (an older backup restored under the same KAFKA_TOPIC_PREFIX?); they are listed in journal_conflicts, see docs/operations.md, Backups',
      {
        group: opts.groupId,
        events: lost.length,
        first: { eventId: lost[0]!.record.id, streamId: lost[0]!.record.streamId, offset: lost[0]!.offset },
      },
    )
  }
  stats.applied += outcome.applied.length
  stats.duplicates += outcome.duplicates
  stats.deadLettered += outcome.deadLettered?.length ?? 0
  stats.batches++
  const last = outcome.applied[outcome.applied.length - 1]
  if (last) stats.lastAppliedOccurredAt = last.occurredAt
  if (outcome.applied.length > 0) opts.onApplied?.(outcome.applied)
}
