import type { Pool } from 'pg'
import type { BatchHandler } from './apply-batch.ts'
import type { StreamType } from './records.ts'

/** What every event-log consumer needs, whichever backend delivers the events. */
export interface ConsumerOptions {
  readonly pool: Pool
  /** Consumers sharing a group id split the partitions and share one checkpoint per partition. */
  readonly groupId: string
  readonly streamTypes: readonly StreamType[]
  /** Runs inside the transaction that records the checkpoint; receives each event at most once. */
  readonly handler: BatchHandler
  /** Most events handed to the handler in one transaction (default 500). */
  readonly maxBatchSize?: number
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
}

export interface ConsumerStats {
  /** Events handed to the handler and committed. */
  applied: number
  /** Events skipped as already applied (redelivery, relay duplicates). */
  duplicates: number
  /** Messages that could not be read as events, each logged with its reason. */
  dropped: number
  batches: number
  errors: number
  /** Partitions this member owns right now (Kafka partitions of its topics, or journal partitions). */
  partitions: string[]
}

export interface EventConsumer {
  start(): Promise<void>
  /** Finishes the batch in flight, commits it, and leaves the group. */
  stop(): Promise<void>
  readonly stats: ConsumerStats
}

export function newConsumerStats(): ConsumerStats {
  return { applied: 0, duplicates: 0, dropped: 0, batches: 0, errors: 0, partitions: [] }
}
