import type { ClientBase, Pool } from 'pg'
import { NEVER_APPENDS_LOCK } from './journal.ts'
import type { JournalRecord, StreamType } from './records.ts'

/**
 * The lowest checkpoint of a consumer group's partitions (0 when it has none), read in the read's own
 * statement: a look of the journal consumer is one statement, where reading its checkpoints first was a
 * second round trip on every look, idle ones included (bench/FINDINGS.md, "perf7").
 */
export interface CheckpointFloor {
  readonly groupId: string
  readonly topic: string
  readonly partitions: readonly number[]
}

export interface ReadJournalOptions {
  /** Read positions strictly above this one ('0' or '-1' from the start), or above those checkpoints. */
  readonly after: string | { readonly lowestCheckpointOf: CheckpointFloor }
  /** How many positions to look at past `after`. */
  readonly limit: number
  /**
   * Return at most this many of the events found (all when omitted); when more matched, the read ends
   * at the last one returned (`scannedTo`).
   */
  readonly maxRecords?: number
  /** Only these stream types (all when omitted). */
  readonly streamTypes?: readonly StreamType[]
  /** Only the streams hashed to these of `count` virtual partitions (see journal-consumer.ts). */
  readonly partitions?: { readonly of: readonly number[]; readonly count: number }
}

interface JournalRow {
  position: string
  event_id: string
  stream_type: StreamType
  stream_id: string
  stream_version: number
  type: string
  version: number
  occurred_at: Date
  org_id: string
  chatbot_id: string
  payload: unknown
  metadata: Record<string, string>
  partition: number
}

/**
 * SQL for the exclusive upper bound of readable positions: below the oldest transaction still running
 * (shifted like positions are), every appending transaction has finished. See journal.ts.
 *
 * Running transactions marked as never appending (markNeverAppends) are left out: their mark is read
 * from pg_locks, only when some transaction is running at all. One read a little after the snapshot: a
 * transaction whose mark is gone by then has finished, and counting it running only holds the bound
 * back, as it would have without the mark.
 */
export const READABLE_POSITION_BOUND = `(SELECT coalesce(
     (SELECT min(x::text::bigint) FROM pg_snapshot_xip(s) AS x
       WHERE x::text::bigint % 4294967296 NOT IN (
         SELECT objid::bigint FROM pg_locks
          WHERE locktype = 'advisory' AND classid = ${NEVER_APPENDS_LOCK} AND objsubid = 2 AND granted)),
     pg_snapshot_xmax(s)::text::bigint) * 65536
   FROM pg_current_snapshot() AS s)`

export interface JournalPage {
  readonly records: JournalRecord[]
  /** The virtual partition of each record, by index (0 for a read that is not by partitions). */
  readonly partitionOf: readonly number[]
  /**
   * The last position this read looked at, matching or not ('' when it found nothing past `after`).
   * A filtered reader can move its checkpoint here even when no event matched.
   */
  readonly scannedTo: string
}

/**
 * Reads journal events in position order, never passing a transaction still in flight: only positions
 * below the oldest running transaction id (shifted like positions are) are read. See journal.ts.
 *
 * It looks at the next `limit` positions and returns those that match the filters, so a filtered read
 * costs the same however rare its events are.
 *
 * Call it outside any transaction that has written, or the caller's own transaction id holds it back.
 */
export async function readJournal(db: Pool | ClientBase, opts: ReadJournalOptions): Promise<JournalPage> {
  const all = await queryJournal<JournalRow>(db, opts, PARSED_COLUMNS)
  const rows = all.filter((r) => r.position !== null)
  return {
    records: rows.map(toRecord),
    partitionOf: rows.map((r) => r.partition),
    scannedTo: scannedTo(all, opts),
  }
}

/** Where a read ended: the last position it looked at, or its last event when `maxRecords` cut it short. */
function scannedTo(
  rows: readonly { position: string | null; scanned_to: string }[],
  opts: ReadJournalOptions,
): string {
  const last = rows.at(-1)?.position
  if (opts.maxRecords !== undefined && rows.length === opts.maxRecords && last) return last
  return rows[0]?.scanned_to ?? ''
}

/** A journal record with its payload and metadata as the JSON text Postgres sent, not parsed. */
export interface RawJournalRecord extends Omit<JournalRecord, 'payload' | 'metadata'> {
  readonly payloadJson: string
  readonly metadataJson: string
}

/**
 * `readJournal` for a reader that passes the events on without looking into them (the relay): the payload
 * and metadata stay JSON text, which spares parsing them only to serialise them again.
 */
export async function readJournalRaw(
  db: Pool | ClientBase,
  opts: ReadJournalOptions,
): Promise<{ readonly records: RawJournalRecord[]; readonly scannedTo: string }> {
  const rows = await queryJournal<RawJournalRow>(db, opts, RAW_COLUMNS)
  return {
    records: rows
      .filter((r) => r.position !== null)
      .map(({ payload_json, metadata_json, ...r }) => ({
        ...toEnvelope(r),
        payloadJson: payload_json,
        metadataJson: metadata_json,
      })),
    scannedTo: scannedTo(rows, opts),
  }
}

type RawJournalRow = Omit<JournalRow, 'payload' | 'metadata'> & {
  payload_json: string
  metadata_json: string
}

const PARSED_COLUMNS = 'j.payload, j.metadata'
const RAW_COLUMNS = 'j.payload::text AS payload_json, j.metadata::text AS metadata_json'

async function queryJournal<Row>(
  db: Pool | ClientBase,
  opts: ReadJournalOptions,
  bodyColumns: typeof PARSED_COLUMNS | typeof RAW_COLUMNS,
): Promise<(Row & { scanned_to: string })[]> {
  const { rows } = await db.query<Row & { scanned_to: string }>(journalReadStatement(opts, bodyColumns))
  return rows
}

/**
 * The read's statement. The events come by their positions only: the scan reads each looked-at position's
 * stream type and id (from the heap pages it reads anyway), the filters pick among those, and the picked
 * events are fetched by primary key. Joined to the journal by a position range with the filters as join
 * conditions, the planner could read the stream-type filter from the index on (stream_type, stream_id,
 * stream_version) and AND it with the range: every event of those types in the journal, on each read (an
 * idle poll included). It did whenever the journal had no statistics yet (a new or restored database,
 * until autovacuum's first analyze): 1.7–5.8 ms a read with 25,000 events (bench/FINDINGS.md, "perf3").
 * Exported for the test that pins what a read looks at.
 */
export function journalReadStatement(
  opts: ReadJournalOptions,
  bodyColumns: typeof PARSED_COLUMNS | typeof RAW_COLUMNS = PARSED_COLUMNS,
): { name: string; text: string; values: unknown[] } {
  // The statement's shape: which options are given (their values are its parameters).
  const fromCheckpoints = typeof opts.after !== 'string'
  const partitioned = opts.partitions !== undefined && opts.partitions.count > 1
  const limited = opts.maxRecords !== undefined
  const params: unknown[] = []
  let after = '$1::bigint'
  if (typeof opts.after === 'string') {
    params.push(opts.after)
  } else {
    const { groupId, topic, partitions } = opts.after.lowestCheckpointOf
    params.push(groupId, topic, partitions)
    after = `(SELECT coalesce(min(last_offset), 0) FROM consumer_checkpoints
                  WHERE group_id = $1 AND topic = $2 AND partition = ANY($3::int[]))`
  }
  params.push(opts.limit)
  const limitParam = `$${params.length}`
  let filter = ''
  if (opts.streamTypes) {
    params.push(opts.streamTypes)
    filter += ` AND s.stream_type = ANY($${params.length}::text[])`
  }
  let partition = '0'
  if (partitioned) {
    params.push(opts.partitions!.count, opts.partitions!.of)
    partition = partitionExpression(`$${params.length - 1}::int`, 'j.stream_id')
    filter += ` AND ${partitionExpression(`$${params.length - 1}::int`, 's.stream_id')} = ANY($${params.length}::int[])`
  }
  let limit = ''
  if (limited) {
    params.push(opts.maxRecords)
    limit = ` LIMIT $${params.length}`
  }
  // Prepared once per connection (parsed and planned once): the text varies only with which options are
  // given and which columns are read, so each such shape has its name.
  const shape = `${fromCheckpoints ? 'c' : ''}${opts.streamTypes ? 't' : ''}${partitioned ? 'p' : ''}${limited ? 'l' : ''}`
  const name = `cas-journal-read-${bodyColumns === RAW_COLUMNS ? 'raw' : 'parsed'}-${shape}`
  return {
    name,
    text: `WITH scan AS (
       SELECT position, stream_type, stream_id FROM event_journal
        WHERE position > ${after}
          AND position < ${READABLE_POSITION_BOUND}
        ORDER BY position
        LIMIT ${limitParam}
     ), bound AS (SELECT max(position) AS scanned_to FROM scan)
     SELECT j.position::text, j.event_id, j.stream_type, j.stream_id, j.stream_version, j.type, j.version,
            j.occurred_at, j.org_id, j.chatbot_id, ${bodyColumns}, b.scanned_to::text,
            ${partition}::int AS partition
       FROM bound b
       LEFT JOIN event_journal j ON j.position = ANY(ARRAY(
         SELECT s.position FROM scan s WHERE true${filter} ORDER BY s.position${limit}))
      ORDER BY j.position`,
    values: params,
  }
}

/**
 * Every event of one stream in version order, as committed so far. For command handlers loading state
 * inside their transaction (lock the stream first, or decide against a version and let the append check).
 */
export async function readStream(
  db: Pool | ClientBase,
  streamType: StreamType,
  streamId: string,
): Promise<JournalRecord[]> {
  const { rows } = await db.query<JournalRow>(
    `SELECT position::text, event_id, stream_type, stream_id, stream_version, type, version, occurred_at,
            org_id, chatbot_id, payload, metadata
       FROM event_journal WHERE stream_type = $1 AND stream_id = $2 ORDER BY stream_version`,
    [streamType, streamId],
  )
  return rows.map(toRecord)
}

/** SQL for the virtual partition of `stream_id` among `countParam` partitions. */
export function partitionExpression(countParam: string, streamIdColumn = 'stream_id'): string {
  return `(abs(hashtext(${streamIdColumn}::text)::bigint) % ${countParam})`
}

function toRecord(r: JournalRow): JournalRecord {
  return { ...toEnvelope(r), payload: r.payload, metadata: r.metadata }
}

function toEnvelope(
  r: Omit<JournalRow, 'payload' | 'metadata'>,
): Omit<JournalRecord, 'payload' | 'metadata'> {
  return {
    id: r.event_id,
    type: r.type,
    version: r.version,
    occurredAt: r.occurred_at.toISOString(),
    orgId: r.org_id,
    chatbotId: r.chatbot_id,
    streamType: r.stream_type,
    streamId: r.stream_id,
    streamVersion: r.stream_version,
    position: r.position,
  }
}
