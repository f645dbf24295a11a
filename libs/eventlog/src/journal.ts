import { randomUUID } from 'node:crypto'
import { advisoryLockKey, RetryableTransactionError } from '@cas/db'
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
 *
 * Transactions that never append. A long transaction that writes elsewhere (a projector's batch) has an
 * id too, and would hold every reader back for as long as it runs although no event can come from it. It
 * can say so with `markNeverAppends`: readers then leave it out of their bound (READABLE_POSITION_BOUND),
 * and the journal refuses any append in it (migrations/0023_journal-never-appends.sql), so the promise
 * cannot be broken.
 */

const EVENTS_PER_TRANSACTION = 1n << 16n

const streamKey = (r: { streamType: string; streamId: string }) =>
  `${r.streamType}/${r.streamId.toLowerCase()}`
// xid8 << 16 must fit a signed bigint: 2^47 transactions, about 445 years at 10,000 per second.
const MAX_XID = 1n << 47n

/**
 * First key of the transaction-scoped advisory lock that marks a transaction as never appending; the
 * second is the transaction's id, its low 32 bits read as an int4 (pg_locks shows them as `objid`).
 */
export const NEVER_APPENDS_LOCK = advisoryLockKey('journal:never-appends')

/**
 * Marks the caller's transaction (`client` in BEGIN, before any savepoint) as one that will never
 * append to the journal, so that journal readers pass it while it runs. It gets its transaction id here
 * if it had none. An append later in the same transaction fails, and the transaction with it.
 */
export async function markNeverAppends(client: ClientBase): Promise<void> {
  await client.query({
    name: 'journal-mark-never-appends',
    text: `SELECT pg_advisory_xact_lock($1, (x - CASE WHEN x >= 2147483648 THEN 4294967296 ELSE 0 END)::int),
                  set_config('cas.never_appends', 'on', true)
             FROM (SELECT pg_current_xact_id()::text::bigint % 4294967296 AS x) t`,
    values: [NEVER_APPENDS_LOCK],
  })
}

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
 * per request, in one statement whatever their number (group commit of concurrent captures uses it).
 * Each stream may appear once. Results are in the order of the requests. A version conflict on any
 * stream throws, and the caller's transaction must then roll back (the statement has written).
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
  const occurredAt = now().toISOString()

  // Every event in request order, numbered within this append (`n`) and within its request (`i`).
  let n = 0
  const events = requests.map((req, r) =>
    req.events.map((e, i) => ({
      n: n++,
      r,
      i,
      id: e.id ?? newId(),
      type: e.type,
      version: e.version,
      payload: e.payload,
      metadata: { ...req.metadata, ...e.metadata },
    })),
  )
  const streams = requests.map((req, r) => ({
    r,
    stream_type: req.streamType,
    stream_id: req.streamId,
    org_id: req.orgId,
    chatbot_id: req.chatbotId,
    count: req.events.length,
  }))
  const { rows } = await client.query<{ r: number; version: number; first: string; tx: string }>({
    name: 'journal-append',
    text: APPEND_SQL,
    values: [JSON.stringify(streams), JSON.stringify(events.flat()), occurredAt],
  })
  if (rows.length !== requests.length) {
    // A stream's last appending transaction is later than this one: its row was left as it was.
    throw new RetryableTransactionError(
      'stream_order',
      'a stream was appended by a later transaction; run again',
    )
  }
  const tx = BigInt(rows[0]!.tx)
  if (tx >= MAX_XID) throw new Error('transaction id too large for journal positions')
  const first = BigInt(rows[0]!.first)
  if (first + BigInt(n) > (tx + 1n) * EVENTS_PER_TRANSACTION) {
    throw new Error(`more than ${EVENTS_PER_TRANSACTION} events in one transaction`)
  }
  const versionAfter = new Map(rows.map((row) => [row.r, row.version]))
  return requests.map((req, r): AppendResult => {
    const streamVersion = versionAfter.get(r)!
    const before = streamVersion - req.events.length
    const expected = req.expectedVersion
    if ((typeof expected === 'number' && expected !== before) || (expected === 'no_stream' && before !== 0)) {
      throw new StreamVersionConflictError(req.streamType, req.streamId, expected, before)
    }
    const records = events[r]!.map(
      (e): JournalRecord => ({
        id: e.id,
        type: e.type,
        version: e.version,
        occurredAt,
        orgId: req.orgId,
        chatbotId: req.chatbotId,
        streamType: req.streamType,
        streamId: req.streamId,
        streamVersion: before + e.i + 1,
        position: (first + BigInt(e.n)).toString(),
        payload: e.payload,
        metadata: e.metadata,
      }),
    )
    return { streamVersion, records }
  })
}

/**
 * One append, one statement (one round trip), its parameters JSON documents ($1 the streams, $2 their
 * events, $3 occurred_at), prepared once per connection:
 *
 * 1. `tx`, `start`: the transaction's id, and where its events start: after any it appended already.
 * 2. `streams`: every stream row created (at the append's count) or moved on by it, in key order, so
 *    concurrent appends to overlapping streams never deadlock. A row whose last appending transaction is
 *    later than this one is locked but left as it was and not returned (see the header: its events
 *    would sort before ones this transaction built upon); the caller then refuses, retryably.
 * 3. `appended`: the events into the journal, numbered on from each stream's version before the append.
 *
 * Versions are checked against `expectedVersion` after the statement: a conflict throws, and the
 * caller's transaction rolls back what was written.
 */
const APPEND_SQL = `
WITH tx AS MATERIALIZED (
  SELECT pg_current_xact_id() AS id,
         (pg_current_xact_id()::text::numeric * ${EVENTS_PER_TRANSACTION})::bigint AS base
), start AS MATERIALIZED (
  SELECT coalesce(
           (SELECT max(j.position) + 1 FROM event_journal j
             WHERE j.position >= tx.base AND j.position < tx.base + ${EVENTS_PER_TRANSACTION}),
           tx.base) AS first
    FROM tx
), req AS MATERIALIZED (
  SELECT * FROM json_to_recordset($1::json)
           AS r(r int, stream_type text, stream_id uuid, org_id uuid, chatbot_id uuid, count int)
), streams AS (
  INSERT INTO event_streams AS s (stream_type, stream_id, version, last_tx, org_id, chatbot_id)
  SELECT req.stream_type, req.stream_id, req.count, tx.id, req.org_id, req.chatbot_id
    FROM req, tx ORDER BY req.stream_type, req.stream_id
  ON CONFLICT (stream_type, stream_id) DO UPDATE
     SET version = s.version + excluded.version, last_tx = excluded.last_tx
   WHERE s.last_tx <= excluded.last_tx
  RETURNING s.stream_type, s.stream_id, s.version
), moved AS MATERIALIZED (
  SELECT req.r, req.count, streams.version FROM req
    JOIN streams ON streams.stream_type = req.stream_type AND streams.stream_id = req.stream_id
), appended AS (
  INSERT INTO event_journal
    (position, event_id, stream_type, stream_id, stream_version, type, version, occurred_at, org_id,
     chatbot_id, payload, metadata)
  SELECT start.first + e.n, e.id, req.stream_type, req.stream_id, moved.version - moved.count + e.i + 1,
         e.type, e.version, $3::timestamptz, req.org_id, req.chatbot_id, e.payload, e.metadata
    FROM json_to_recordset($2::json)
         AS e(n int, r int, i int, id uuid, type text, version int, payload jsonb, metadata jsonb)
    JOIN req ON req.r = e.r JOIN moved ON moved.r = e.r CROSS JOIN start
   ORDER BY e.n
)
SELECT moved.r, moved.version, start.first::text AS first, tx.id::text AS tx FROM moved, start, tx`

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
  // The events set aside by consumers hold the same personal data (dead-letters.ts).
  await client.query('DELETE FROM dead_letters WHERE stream_type = $1 AND stream_id = $2', [
    streamType,
    streamId,
  ])
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
  await client.query('DELETE FROM dead_letters WHERE chatbot_id = $1', [chatbotId])
  return rowCount ?? 0
}
