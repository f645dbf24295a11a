import { withTransaction } from '@cas/db'
import type { Pool, PoolClient } from 'pg'
import { markNeverAppends } from './journal.ts'
import type { JournalRecord } from './records.ts'

/** Where a batch comes from: a Kafka topic's partition, or one of the journal's virtual partitions. */
export interface BatchSource {
  readonly topic: string
  readonly partition: number
}

/**
 * Runs first in a batch's transaction, with every record of the batch (duplicates too): before the
 * checkpoint row is locked, so before the transaction has an id. A wait here (for a lock ordering this
 * batch after another) therefore holds back no journal reader, whose readable bound is the oldest
 * transaction id still running.
 */
export type BatchOrder = (
  records: readonly JournalRecord[],
  client: PoolClient,
  source: BatchSource,
) => Promise<void>

/** Applies deduplicated records inside the transaction that also records the checkpoint. */
export type BatchHandler = (
  records: readonly JournalRecord[],
  client: PoolClient,
  source: BatchSource,
) => Promise<void>

export interface SourcedRecord {
  readonly record: JournalRecord
  /** Kafka offset, or journal position for the journal backend. */
  readonly offset: string
}

export interface BatchOutcome {
  /** The events handed to the handler, in order. */
  readonly applied: readonly JournalRecord[]
  /** Already applied: at or below the checkpoint, or a stream version this group has seen. */
  readonly duplicates: number
}

export interface ApplyBatchOptions {
  /** Move the checkpoint at least this far: the source read up to here and found nothing else for us. */
  readonly upTo?: string
  readonly order?: BatchOrder
  /**
   * The handler never appends to the journal: the transaction is marked so (markNeverAppends), and
   * journal readers, the relay among them, pass it while it runs.
   */
  readonly neverAppends?: boolean
}

/**
 * Applies one batch from one (topic, partition) and records its checkpoint in the same transaction.
 *
 * The checkpoint row is locked first. Two consumers that both believe they own a partition (a rebalance
 * in progress, a zombie that lost its session) therefore apply one after the other, and the second finds
 * the checkpoint moved and skips what the first applied. Then events whose stream version this group has
 * already applied are dropped: the relay may have published them twice.
 */
export async function applyBatch(
  pool: Pool,
  groupId: string,
  source: BatchSource,
  batch: readonly SourcedRecord[],
  handler: BatchHandler,
  opts: ApplyBatchOptions = {},
): Promise<BatchOutcome> {
  const { upTo, order } = opts
  if (batch.length === 0 && upTo === undefined) return { applied: [], duplicates: 0 }
  return withTransaction(pool, async (client) => {
    if (order && batch.length > 0)
      await order(
        batch.map((b) => b.record),
        client,
        source,
      )
    // Before the checkpoint row is written: the transaction gets its id marked.
    if (opts.neverAppends) await markNeverAppends(client)
    await client.query(
      `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, $3, -1)
       ON CONFLICT DO NOTHING`,
      [groupId, source.topic, source.partition],
    )
    const { rows } = await client.query<{ last_offset: string }>(
      `SELECT last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2 AND partition = $3
       FOR UPDATE`,
      [groupId, source.topic, source.partition],
    )
    const checkpoint = BigInt(rows[0]!.last_offset)
    const fresh = batch.filter((b) => BigInt(b.offset) > checkpoint).map((b) => b.record)
    const records = await dropSeenStreamVersions(client, groupId, fresh)
    if (records.length > 0) {
      await handler(records, client, source)
      await recordStreamVersions(client, groupId, records)
    }
    const lastRecord = batch[batch.length - 1]
    const lastInBatch = lastRecord ? BigInt(lastRecord.offset) : -1n
    const last = upTo !== undefined && BigInt(upTo) > lastInBatch ? BigInt(upTo) : lastInBatch
    if (last > checkpoint) {
      // With the offset, when the last event passed was committed: whatever this partition holds past the
      // checkpoint was committed after it (progress.ts estimates how far behind a Kafka group is from it).
      await client.query(
        `UPDATE consumer_checkpoints
            SET last_offset = $4, last_occurred_at = coalesce($5, last_occurred_at), updated_at = now()
          WHERE group_id = $1 AND topic = $2 AND partition = $3`,
        [groupId, source.topic, source.partition, last.toString(), lastRecord?.record.occurredAt ?? null],
      )
    }
    return { applied: records, duplicates: batch.length - records.length }
  })
}

async function dropSeenStreamVersions(
  client: PoolClient,
  groupId: string,
  records: readonly JournalRecord[],
) {
  if (records.length === 0) return []
  const { rows } = await client.query<{ stream_type: string; stream_id: string; version: number }>(
    `SELECT v.stream_type, v.stream_id, v.version
       FROM consumer_stream_versions v
       JOIN unnest($2::text[], $3::uuid[]) AS s(stream_type, stream_id)
         ON v.stream_type = s.stream_type AND v.stream_id = s.stream_id
      WHERE v.group_id = $1`,
    [groupId, records.map((r) => r.streamType), records.map((r) => r.streamId)],
  )
  const seen = new Map(rows.map((r) => [`${r.stream_type}/${r.stream_id}`, r.version]))
  return records.filter((r) => {
    const key = `${r.streamType}/${r.streamId}`
    if ((seen.get(key) ?? 0) >= r.streamVersion) return false
    seen.set(key, r.streamVersion)
    return true
  })
}

async function recordStreamVersions(client: PoolClient, groupId: string, records: readonly JournalRecord[]) {
  const latest = new Map<string, JournalRecord>()
  for (const r of records) latest.set(`${r.streamType}/${r.streamId}`, r)
  const rows = [...latest.values()]
  await client.query(
    `INSERT INTO consumer_stream_versions (group_id, stream_type, stream_id, version)
     SELECT $1, * FROM unnest($2::text[], $3::uuid[], $4::int[])
     ON CONFLICT (group_id, stream_type, stream_id)
     DO UPDATE SET version = GREATEST(consumer_stream_versions.version, EXCLUDED.version)`,
    [groupId, rows.map((r) => r.streamType), rows.map((r) => r.streamId), rows.map((r) => r.streamVersion)],
  )
}
