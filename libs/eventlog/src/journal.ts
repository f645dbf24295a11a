import { randomUUID } from 'node:crypto'
import { RetryableTransactionError } from '@cas/db'
import type { ClientBase, Pool } from 'pg'
import type { JournalRecord, StreamType } from './records.ts'

/**
 * The Postgres event journal (see migrations/0001_event-journal.sql).
 *
 * Ordering. A position is `(xid8 << 16) | n`: the appending transaction's id, then the event's index
 * within that transaction. Transaction ids are handed out as transactions first write, not as they
 * commit, so a reader must never read past a transaction still in flight: it reads only positions below
 * `pg_snapshot_xmin(pg_current_snapshot()) << 16`, under which every transaction has finished. Once a
 * reader has passed a position, nothing can ever appear before it.
 *
 * Per-stream order. Sorting by transaction id alone would let a transaction that got its id early, then
 * read a stream after a later transaction had appended to it, slot its events *before* the ones it
 * built upon. So an append locks the stream's row and refuses (retryably) when the stream's last
 * appending transaction has a higher id than its own; `withTransaction` runs it again with a fresh id.
 */

const EVENTS_PER_TRANSACTION = 1n << 16n

const streamKey = (r: { streamType: string; streamId: string }) =>
  `${r.streamType}/${r.streamId.toLowerCase()}`
// xid8 << 16 must fit a signed bigint: 2^47 transactions, about 445 years at 10,000 per second.
const MAX_XID = 1n << 47n

export type ExpectedVersion = number | 'any' | 'no_stream'

export interface EventToAppend {
  readonly type: string
  readonly version: number
  readonly payload: unknown
  readonly metadata?: Readonly<Record<string, string>>
  /** Defaults to a random UUID. */
  readonly id?: string
}

export interface AppendRequest {
  readonly streamType: StreamType
  readonly streamId: string
  readonly orgId: string
  readonly chatbotId: string
  /** The stream version the command was decided against: 0 for a new stream, or 'any' / 'no_stream'. */
  readonly expectedVersion: ExpectedVersion
  readonly events: readonly EventToAppend[]
  /**
   * Tracing metadata for every event of this append (correlationId, causationId, requestId); an event's
   * own metadata wins key by key.
   */
  readonly metadata?: Readonly<Record<string, string>>
}

export interface AppendResult {
  /** The stream's version after the append (its last event's streamVersion). */
  readonly streamVersion: number
  readonly records: readonly JournalRecord[]
}

/** The stream is not at the version the command was decided against. Not retryable as is: decide again. */
export class StreamVersionConflictError extends Error {
  readonly code = 'conflict'
  readonly retryable = false
  constructor(
    readonly streamType: StreamType,
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamType}/${streamId} is at version ${actual}, expected ${expected}`)
    this.name = 'StreamVersionConflictError'
  }
}

export interface JournalDeps {
  readonly now?: () => Date
  readonly newId?: () => string
}

/**
 * Appends events to one stream inside the caller's transaction (`client` must be in BEGIN). Commit or
 * roll back is the caller's: the events become visible exactly when the caller's state changes do.
 */
export async function appendToStream(
  client: ClientBase,
  req: AppendRequest,
  deps: JournalDeps = {},
): Promise<AppendResult> {
  const [result] = await appendToStreams(client, [req], deps)
  return result!
}

/**
 * Appends to several streams at once, inside the caller's transaction: the same as one `appendToStream`
 * per request, in four statements whatever their number (group commit of concurrent captures uses it).
 * Each stream may appear once. Results are in the order of the requests. A version conflict on any
 * stream throws, and the caller's transaction should then roll back.
 */
export async function appendToStreams(
  client: ClientBase,
  requests: readonly AppendRequest[],
  deps: JournalDeps = {},
): Promise<AppendResult[]> {
  if (requests.length === 0) return []
  if (requests.some((r) => r.events.length === 0)) throw new Error('appendToStream needs at least one event')
  if (new Set(requests.map(streamKey)).size !== requests.length) {
    throw new Error('appendToStreams takes each stream once')
  }
  const now = deps.now ?? (() => new Date())
  const newId = deps.newId ?? randomUUID

  // The transaction's id, and where its events start: after any it appended already.
  const { rows: txRows } = await client.query<{ tx: string; next: string | null }>(
    `SELECT t.tx::text,
            (SELECT max(position) + 1 FROM event_journal
              WHERE position >= t.base AND position < t.base + ${EVENTS_PER_TRANSACTION})::text AS next
       FROM (SELECT pg_current_xact_id() AS tx,
                    (pg_current_xact_id()::text::numeric * ${EVENTS_PER_TRANSACTION})::bigint AS base) t`,
  )
  const tx = BigInt(txRows[0]!.tx)
  if (tx >= MAX_XID) throw new Error('transaction id too large for journal positions')
  const base = tx * EVENTS_PER_TRANSACTION
  const first = txRows[0]!.next === null ? base : BigInt(txRows[0]!.next)
  const total = requests.reduce((n, r) => n + r.events.length, 0)
  if (first + BigInt(total) > base + EVENTS_PER_TRANSACTION) {
    throw new Error(`more than ${EVENTS_PER_TRANSACTION} events in one transaction`)
  }

  const current = await lockStreams(client, requests, tx)
  for (const req of requests) {
    const stream = current.get(streamKey(req))!
    if (stream.lastTx > tx) {
      throw new RetryableTransactionError(
        'stream_order',
        `stream ${req.streamType}/${req.streamId} was appended by a later transaction; run again`,
      )
    }
    const expected = req.expectedVersion
    if (
      (typeof expected === 'number' && expected !== stream.version) ||
      (expected === 'no_stream' && stream.version !== 0)
    ) {
      throw new StreamVersionConflictError(req.streamType, req.streamId, expected, stream.version)
    }
  }

  const occurredAt = now().toISOString()
  let next = first
  const results = requests.map((req): AppendResult => {
    const version = current.get(streamKey(req))!.version
    const records: JournalRecord[] = req.events.map((e, i) => ({
      id: e.id ?? newId(),
      type: e.type,
      version: e.version,
      occurredAt,
      orgId: req.orgId,
      chatbotId: req.chatbotId,
      streamType: req.streamType,
      streamId: req.streamId,
      streamVersion: version + i + 1,
      position: (next++).toString(),
      payload: e.payload,
      metadata: { ...req.metadata, ...e.metadata },
    }))
    return { streamVersion: version + records.length, records }
  })
  const records = results.flatMap((r) => r.records)
  await client.query(
    `INSERT INTO event_journal
       (position, event_id, stream_type, stream_id, stream_version, type, version, occurred_at, org_id,
        chatbot_id, payload, metadata)
     SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::uuid[], $5::int[], $6::text[], $7::int[],
                          $8::timestamptz[], $9::uuid[], $10::uuid[], $11::jsonb[], $12::jsonb[])`,
    [
      records.map((r) => r.position),
      records.map((r) => r.id),
      records.map((r) => r.streamType),
      records.map((r) => r.streamId),
      records.map((r) => r.streamVersion),
      records.map((r) => r.type),
      records.map((r) => r.version),
      records.map((r) => r.occurredAt),
      records.map((r) => r.orgId),
      records.map((r) => r.chatbotId),
      records.map((r) => JSON.stringify(r.payload)),
      records.map((r) => JSON.stringify(r.metadata)),
    ],
  )
  await client.query(
    `UPDATE event_streams s SET version = u.version, last_tx = pg_current_xact_id()
       FROM unnest($1::text[], $2::uuid[], $3::int[]) AS u(stream_type, stream_id, version)
      WHERE s.stream_type = u.stream_type AND s.stream_id = u.stream_id`,
    [requests.map((r) => r.streamType), requests.map((r) => r.streamId), results.map((r) => r.streamVersion)],
  )
  return results
}

/**
 * Locks the streams' rows for the rest of the transaction, creating the new ones (at version 0), in one
 * statement: a conflicting insert that updates nothing still locks the existing row and returns it. Rows
 * are taken in key order (the statement's ORDER BY), so concurrent appends to overlapping streams never
 * deadlock on them.
 */
async function lockStreams(
  client: ClientBase,
  requests: readonly AppendRequest[],
  tx: bigint,
): Promise<Map<string, { version: number; lastTx: bigint }>> {
  const { rows } = await client.query<{
    stream_type: string
    stream_id: string
    version: number
    last_tx: string
  }>(
    `INSERT INTO event_streams AS s (stream_type, stream_id, version, last_tx, org_id, chatbot_id)
     SELECT u.stream_type, u.stream_id, 0, $3::text::xid8, u.org_id, u.chatbot_id
       FROM unnest($1::text[], $2::uuid[], $4::uuid[], $5::uuid[]) AS u(stream_type, stream_id, org_id, chatbot_id)
      ORDER BY u.stream_type, u.stream_id
     ON CONFLICT (stream_type, stream_id) DO UPDATE SET version = s.version
     RETURNING s.stream_type, s.stream_id::text, s.version, s.last_tx::text`,
    [
      requests.map((r) => r.streamType),
      requests.map((r) => r.streamId),
      tx.toString(),
      requests.map((r) => r.orgId),
      requests.map((r) => r.chatbotId),
    ],
  )
  const streams = new Map(
    rows.map((r) => [
      streamKey({ streamType: r.stream_type, streamId: r.stream_id }),
      { version: r.version, lastTx: BigInt(r.last_tx) },
    ]),
  )
  if (streams.size !== requests.length) throw new Error('a stream vanished while being locked')
  return streams
}

/**
 * Locks an existing stream for the rest of the caller's transaction and returns its version (0 when the
 * stream does not exist yet, and then nothing is locked). Command handlers take it before loading state,
 * so concurrent commands on one stream take turns instead of failing their version check.
 */
export async function lockStreamForUpdate(client: ClientBase, streamType: StreamType, streamId: string) {
  const { rows } = await client.query<{ version: number }>(
    'SELECT version FROM event_streams WHERE stream_type = $1 AND stream_id = $2 FOR UPDATE',
    [streamType, streamId],
  )
  return rows[0]?.version ?? 0
}

/** The current version of a stream (0 when it has no events). */
export async function streamVersion(db: Pool | ClientBase, streamType: StreamType, streamId: string) {
  const { rows } = await db.query<{ version: number }>(
    'SELECT version FROM event_streams WHERE stream_type = $1 AND stream_id = $2',
    [streamType, streamId],
  )
  return rows[0]?.version ?? 0
}

/**
 * Deletes every journal event of the chatbot except those of `keepTypes` (its `chatbot.deleted`, which
 * consumers still need to see). Events not yet relayed are then never published. Stream rows stay, so
 * versions keep increasing should anything be appended later. Returns how many events were deleted.
 */
/**
 * Deletes one stream's events from the journal except those of `keepTypes` (deleting an organization
 * keeps only its organization.deleted). Consumers that already read them keep what they applied.
 */
export async function purgeStreamEvents(
  client: ClientBase,
  streamType: StreamType,
  streamId: string,
  keepTypes: readonly string[],
): Promise<number> {
  const { rowCount } = await client.query(
    `DELETE FROM event_journal WHERE stream_type = $1 AND stream_id = $2 AND type <> ALL($3::text[])`,
    [streamType, streamId, keepTypes],
  )
  return rowCount ?? 0
}

export async function purgeChatbotEvents(
  client: ClientBase,
  chatbotId: string,
  keepTypes: readonly string[],
): Promise<number> {
  const { rowCount } = await client.query(
    `DELETE FROM event_journal j USING event_streams s
      WHERE s.chatbot_id = $1 AND j.stream_type = s.stream_type AND j.stream_id = s.stream_id
        AND j.type <> ALL($2::text[])`,
    [chatbotId, keepTypes],
  )
  return rowCount ?? 0
}
