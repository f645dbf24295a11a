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
  if (req.events.length === 0) throw new Error('appendToStream needs at least one event')
  const now = deps.now ?? (() => new Date())
  const newId = deps.newId ?? randomUUID

  const tx = BigInt(
    (await client.query<{ tx: string }>('SELECT pg_current_xact_id()::text AS tx')).rows[0]!.tx,
  )
  if (tx >= MAX_XID) throw new Error('transaction id too large for journal positions')

  const current = await lockStream(client, req, tx)
  if (current.lastTx !== null && current.lastTx > tx) {
    throw new RetryableTransactionError(
      'stream_order',
      `stream ${req.streamType}/${req.streamId} was appended by a later transaction; run again`,
    )
  }
  const expected = req.expectedVersion
  if (
    (typeof expected === 'number' && expected !== current.version) ||
    (expected === 'no_stream' && current.version !== 0)
  ) {
    throw new StreamVersionConflictError(req.streamType, req.streamId, expected, current.version)
  }

  const base = tx * EVENTS_PER_TRANSACTION
  const { rows } = await client.query<{ next: string }>(
    'SELECT coalesce(max(position) + 1, $1::bigint)::text AS next FROM event_journal WHERE position >= $1::bigint AND position < $2::bigint',
    [base.toString(), (base + EVENTS_PER_TRANSACTION).toString()],
  )
  const first = BigInt(rows[0]!.next)
  if (first + BigInt(req.events.length) > base + EVENTS_PER_TRANSACTION) {
    throw new Error(`more than ${EVENTS_PER_TRANSACTION} events in one transaction`)
  }

  const occurredAt = now().toISOString()
  const records: JournalRecord[] = req.events.map((e, i) => ({
    id: e.id ?? newId(),
    type: e.type,
    version: e.version,
    occurredAt,
    orgId: req.orgId,
    chatbotId: req.chatbotId,
    streamType: req.streamType,
    streamId: req.streamId,
    streamVersion: current.version + i + 1,
    position: (first + BigInt(i)).toString(),
    payload: e.payload,
    metadata: e.metadata ?? {},
  }))
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
  const streamVersion = current.version + records.length
  await client.query(
    'UPDATE event_streams SET version = $3, last_tx = pg_current_xact_id() WHERE stream_type = $1 AND stream_id = $2',
    [req.streamType, req.streamId, streamVersion],
  )
  return { streamVersion, records }
}

/** Locks the stream's row for the rest of the transaction, creating it (at version 0) when it is new. */
async function lockStream(
  client: ClientBase,
  req: AppendRequest,
  tx: bigint,
): Promise<{ version: number; lastTx: bigint | null }> {
  const created = await client.query(
    `INSERT INTO event_streams (stream_type, stream_id, version, last_tx, org_id, chatbot_id)
     VALUES ($1, $2, 0, $3::text::xid8, $4, $5) ON CONFLICT DO NOTHING`,
    [req.streamType, req.streamId, tx.toString(), req.orgId, req.chatbotId],
  )
  if (created.rowCount === 1) return { version: 0, lastTx: null }
  const { rows } = await client.query<{ version: number; last_tx: string }>(
    'SELECT version, last_tx::text FROM event_streams WHERE stream_type = $1 AND stream_id = $2 FOR UPDATE',
    [req.streamType, req.streamId],
  )
  const row = rows[0]
  if (!row) throw new Error(`stream ${req.streamType}/${req.streamId} vanished while being locked`)
  return { version: row.version, lastTx: BigInt(row.last_tx) }
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
