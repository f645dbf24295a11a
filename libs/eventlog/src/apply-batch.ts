import { withTransaction } from '@cas/db'
import type { Pool, PoolClient } from 'pg'
import { markNeverAppends } from './journal.ts'
import { recordJournalConflicts } from './journal-conflicts.ts'
import type { JournalRecord } from './records.ts'

/** Where a batch comes from: a Kafka topic's partition, or one of the journal's virtual partitions. */
export interface BatchSource {
  readonly topic: string
  readonly partition: number
}

/**
 * Runs first in a batch's transaction, with every record of the batch (duplicates too) and the sources
 * it comes from (several when batches of one Kafka fetch are applied together): before the checkpoint
 * rows are locked, so before the transaction has an id. A wait here (for a lock ordering this batch
 * after another) therefore holds back no journal reader, whose readable bound is the oldest transaction
 * id still running.
 */
export type BatchOrder = (
  records: readonly JournalRecord[],
  client: PoolClient,
  sources: readonly BatchSource[],
) => Promise<void>

/** Applies deduplicated records inside the transaction that also records the checkpoints. */
export type BatchHandler = (
  records: readonly JournalRecord[],
  client: PoolClient,
  sources: readonly BatchSource[],
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
  /**
   * Events left out because the journal does not hold them (`verifyInJournal`): Kafka has them from a
   * journal that a restored backup has lost. Recorded in `journal_conflicts`, never applied.
   */
  readonly notInJournal?: readonly SourcedRecord[]
}

export interface ApplyBatchOptions {
  readonly order?: BatchOrder
  /**
   * The handler never appends to the journal: the transaction is marked so (markNeverAppends), and
   * journal readers, the relay among them, pass it while it runs.
   */
  readonly neverAppends?: boolean
  /**
   * Apply only events the journal holds (Kafka backend): each event must be in the journal under its
   * stream and version, or be one the journal deleted (a deleted chatbot's, an erased conversation's:
   * the stream's version is at or past it and no other event holds that version). Kafka keeps what the
   * relay published; after an older backup of Postgres is restored it holds events the journal lost, and
   * the journal's next events take their stream versions. Applying the lost ones would have the group
   * skip the new ones as duplicates (bench/FINDINGS.md, trial4); they are left out instead and recorded
   * in `journal_conflicts` (docs/operations.md, Backups).
   */
  readonly verifyInJournal?: boolean
}

/** One source's part of a transaction: its records in order. */
export interface BatchPart {
  readonly source: BatchSource
  readonly batch: readonly SourcedRecord[]
  /** Move the checkpoint at least this far: the source read up to here and found nothing else for us. */
  readonly upTo?: string
}

/**
 * Applies one batch from one (topic, partition) and records its checkpoint in the same transaction.
 * See applyBatches.
 */
export function applyBatch(
  pool: Pool,
  groupId: string,
  source: BatchSource,
  batch: readonly SourcedRecord[],
  handler: BatchHandler,
  opts: ApplyBatchOptions & { readonly upTo?: string } = {},
): Promise<BatchOutcome> {
  return applyBatches(pool, groupId, [{ source, batch, upTo: opts.upTo }], handler, opts)
}

/**
 * Applies batches of one or more (topic, partition) sources and records their checkpoints, all in one
 * transaction.
 *
 * The checkpoint rows are locked first, in (topic, partition) order. Two consumers that both believe
 * they own a partition (a rebalance in progress, a zombie that lost its session) therefore apply one
 * after the other, and the second finds the checkpoint moved and skips what the first applied. Then
 * events whose stream version this group has already applied are dropped: the relay may have published
 * them twice. The handler gets the sources' records in the order of `parts`, so each stream's events in
 * order (a stream is in one source).
 */
export async function applyBatches(
  pool: Pool,
  groupId: string,
  parts: readonly BatchPart[],
  handler: BatchHandler,
  opts: ApplyBatchOptions = {},
): Promise<BatchOutcome> {
  const active = parts.filter((p) => p.batch.length > 0 || p.upTo !== undefined)
  if (active.length === 0) return { applied: [], duplicates: 0 }
  const sources = active.map((p) => p.source)
  return withTransaction(pool, async (client) => {
    const all = active.flatMap((p) => p.batch.map((b) => b.record))
    if (opts.order && all.length > 0) await opts.order(all, client, sources)
    // Before the checkpoint rows are written: the transaction gets its id marked.
    if (opts.neverAppends) await markNeverAppends(client)
    const topics = sources.map((s) => s.topic)
    const partitions = sources.map((s) => s.partition)
    await client.query({
      name: 'cas-consumer-checkpoints-create',
      text: `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset)
       SELECT $1, s.topic, s.partition, -1 FROM unnest($2::text[], $3::int[]) AS s(topic, partition)
        ORDER BY s.topic, s.partition
       ON CONFLICT DO NOTHING`,
      values: [groupId, topics, partitions],
    })
    const { rows } = await client.query<{ topic: string; partition: number; last_offset: string }>({
      name: 'cas-consumer-checkpoints-lock',
      text: `SELECT c.topic, c.partition, c.last_offset::text FROM consumer_checkpoints c
         JOIN unnest($2::text[], $3::int[]) AS s(topic, partition)
           ON c.topic = s.topic AND c.partition = s.partition
        WHERE c.group_id = $1
        ORDER BY c.topic, c.partition
          FOR UPDATE OF c`,
      values: [groupId, topics, partitions],
    })
    const checkpoints = new Map(rows.map((r) => [`${r.topic}/${r.partition}`, BigInt(r.last_offset)]))
    const checkpointOf = (s: BatchSource) => checkpoints.get(`${s.topic}/${s.partition}`) ?? -1n
    const freshSourced = active.flatMap((p) => {
      const checkpoint = checkpointOf(p.source)
      return p.batch.filter((b) => BigInt(b.offset) > checkpoint).map((b) => ({ ...b, source: p.source }))
    })
    const fresh = freshSourced.map((b) => b.record)
    const { records, notInJournal } = await dropSeenStreamVersions(
      client,
      groupId,
      fresh,
      opts.verifyInJournal,
    )
    const lost = freshSourced.filter((b) => notInJournal.has(b.record))
    if (lost.length > 0) await recordJournalConflicts(client, groupId, lost)
    if (records.length > 0) {
      await handler(records, client, sources)
      await recordStreamVersions(client, groupId, records)
    }
    // With the offset, when the last event passed was committed: whatever a partition holds past the
    // checkpoint was committed after it (progress.ts estimates how far behind a Kafka group is from it).
    const moves = active.flatMap((p) => {
      const lastRecord = p.batch[p.batch.length - 1]
      const lastInBatch = lastRecord ? BigInt(lastRecord.offset) : -1n
      const last = p.upTo !== undefined && BigInt(p.upTo) > lastInBatch ? BigInt(p.upTo) : lastInBatch
      return last > checkpointOf(p.source)
        ? [{ source: p.source, last: last.toString(), occurredAt: lastRecord?.record.occurredAt ?? null }]
        : []
    })
    if (moves.length > 0) {
      await client.query({
        name: 'cas-consumer-checkpoints-move',
        text: `UPDATE consumer_checkpoints c
            SET last_offset = m.last_offset, last_occurred_at = coalesce(m.occurred_at, c.last_occurred_at),
                updated_at = now()
           FROM unnest($2::text[], $3::int[], $4::bigint[], $5::timestamptz[])
                AS m(topic, partition, last_offset, occurred_at)
          WHERE c.group_id = $1 AND c.topic = m.topic AND c.partition = m.partition`,
        values: [
          groupId,
          moves.map((m) => m.source.topic),
          moves.map((m) => m.source.partition),
          moves.map((m) => m.last),
          moves.map((m) => m.occurredAt),
        ],
      })
    }
    return {
      applied: records,
      duplicates: all.length - records.length - lost.length,
      ...(lost.length > 0 ? { notInJournal: lost } : {}),
    }
  })
}

/**
 * The stream versions this group has applied, for the given (distinct) streams: one index probe per
 * stream. A plain join of the table with the keys lets the planner choose to read every row of the
 * group instead (a hash or merge join): a rebuild's new group, whose statistics say it is small, read
 * all of its rows per batch, its time per batch growing with the log (40,000–76,000 rows per batch at
 * 300,000 events), and a live group of 100,000 to 300,000 streams took 37–214 ms a batch that way,
 * against 5–6 ms by probes. A `LIMIT` keeps the lookup a subquery the planner cannot merge into a
 * join, so its only plan is the probe (apply-batch.int.test.ts; bench/FINDINGS.md, eighth session).
 */
export const SEEN_STREAM_VERSIONS = `SELECT s.stream_type, s.stream_id, v.version${seenStreamVersionsFrom()}`

/** The streams' probes of SEEN_STREAM_VERSIONS, shared with SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL. */
function seenStreamVersionsFrom(): string {
  return `
       FROM unnest($2::text[], $3::uuid[]) AS s(stream_type, stream_id)
       CROSS JOIN LATERAL (
         SELECT c.version FROM consumer_stream_versions c
          WHERE c.group_id = $1 AND c.stream_type = s.stream_type AND c.stream_id = s.stream_id
          LIMIT 1
       ) v`
}

/**
 * SEEN_STREAM_VERSIONS, and in the same statement the events ($4…$7: stream types, ids, versions, event
 * ids; 1-based `n`) that the journal does not hold (see ApplyBatchOptions.verifyInJournal): neither under
 * their id at their stream and version, nor deleted from it (the stream's version at or past theirs, no
 * event at that version). One probe of the journal's (stream, version) index per event, a lookup the
 * `LIMIT` keeps from becoming a join over the whole journal (as SEEN_STREAM_VERSIONS); the stream row is
 * read only for an event whose version the journal has no event at.
 */
export const SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL = `SELECT s.stream_type, s.stream_id, v.version, NULL::int AS n${seenStreamVersionsFrom()}
     UNION ALL
     SELECT NULL, NULL, NULL, e.n::int
       FROM unnest($4::text[], $5::uuid[], $6::int[], $7::uuid[]) WITH ORDINALITY
            AS e(stream_type, stream_id, version, event_id, n)
       LEFT JOIN LATERAL (
         SELECT j.event_id FROM event_journal j
          WHERE j.stream_type = e.stream_type AND j.stream_id = e.stream_id AND j.stream_version = e.version
          LIMIT 1
       ) j ON true
      WHERE j.event_id IS DISTINCT FROM e.event_id
        AND (j.event_id IS NOT NULL
          OR NOT EXISTS (
               SELECT 1 FROM event_streams s
                WHERE s.stream_type = e.stream_type AND s.stream_id = e.stream_id AND s.version >= e.version))`

async function dropSeenStreamVersions(
  client: PoolClient,
  groupId: string,
  records: readonly JournalRecord[],
  verifyInJournal = false,
): Promise<{ records: JournalRecord[]; notInJournal: ReadonlySet<JournalRecord> }> {
  const notInJournal = new Set<JournalRecord>()
  if (records.length === 0) return { records: [], notInJournal }
  const byStream = new Map<string, JournalRecord>()
  for (const r of records) byStream.set(`${r.streamType}/${r.streamId}`, r)
  const streams = [...byStream.values()]
  const seenValues = [groupId, streams.map((r) => r.streamType), streams.map((r) => r.streamId)]
  const { rows } = await client.query<{
    stream_type: string | null
    stream_id: string | null
    version: number | null
    /** Only from SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL, and only on its rows of events. */
    n?: number | null
  }>(
    verifyInJournal
      ? {
          name: 'cas-consumer-stream-versions-seen-in-journal',
          text: SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL,
          values: [
            ...seenValues,
            records.map((r) => r.streamType),
            records.map((r) => r.streamId),
            records.map((r) => r.streamVersion),
            records.map((r) => r.id),
          ],
        }
      : { name: 'cas-consumer-stream-versions-seen', text: SEEN_STREAM_VERSIONS, values: seenValues },
  )
  const seen = new Map<string, number>()
  for (const r of rows) {
    if (typeof r.n === 'number') notInJournal.add(records[r.n - 1]!)
    else seen.set(`${r.stream_type}/${r.stream_id}`, r.version!)
  }
  const kept = records.filter((r) => {
    // Left out before the versions: a lost event must not make the journal's event of its version a
    // duplicate.
    if (notInJournal.has(r)) return false
    const key = `${r.streamType}/${r.streamId}`
    if ((seen.get(key) ?? 0) >= r.streamVersion) return false
    seen.set(key, r.streamVersion)
    return true
  })
  return { records: kept, notInJournal }
}

/** Records the latest stream version of each record's stream as applied by the group. */
export async function recordStreamVersions(
  client: PoolClient,
  groupId: string,
  records: readonly JournalRecord[],
) {
  const latest = new Map<string, JournalRecord>()
  for (const r of records) latest.set(`${r.streamType}/${r.streamId}`, r)
  const rows = [...latest.values()]
  await client.query({
    name: 'cas-consumer-stream-versions-record',
    text: `INSERT INTO consumer_stream_versions (group_id, stream_type, stream_id, version)
     SELECT $1, * FROM unnest($2::text[], $3::uuid[], $4::int[])
     ON CONFLICT (group_id, stream_type, stream_id)
     DO UPDATE SET version = GREATEST(consumer_stream_versions.version, EXCLUDED.version)`,
    values: [
      groupId,
      rows.map((r) => r.streamType),
      rows.map((r) => r.streamId),
      rows.map((r) => r.streamVersion),
    ],
  })
}
