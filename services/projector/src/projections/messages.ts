import type pg from 'pg'
import {
  firstSeenCaptured,
  foldMessage,
  type MessageChanges,
  type MessageRow,
  type MessageSteps,
  messageKey,
  messageRow,
  resultsOnly,
  type StoredMessage,
} from './message-fold.ts'
import type { RollupDeltas } from './rollup-deltas.ts'

/**
 * The I/O of rm_messages, set-based. Messages first seen captured are almost always new: they are
 * inserted at once and folded as new; those that turn out to exist, and the messages the batch only
 * brings results for, are written with one upsert per kind, which returns each stored row as it was
 * before (RETURNING OLD), and folded against it (message-fold.ts); before PostgreSQL 18 the stored rows
 * are read and locked by a statement of their own first (MESSAGES_LOCK). Rows are written in key order (ORDER
 * BY in SQL), so concurrent batches lock them in one order.
 */
export async function writeMessages(
  client: pg.ClientBase,
  batch: MessageChanges,
  rollups: RollupDeltas,
): Promise<void> {
  const entries = batch.take()
  if (entries.length === 0) return
  const likelyNew = entries.filter(firstSeenCaptured)
  const others = entries.filter((e) => !firstSeenCaptured(e))
  if (likelyNew.length > 0) {
    // Returns the keys that were not inserted (they exist): usually none, so no row comes back.
    const { rows } = await client.query<{ conversation_id: string; message_id: string }>({
      name: 'cas-messages-insert-new',
      text: `WITH d AS MATERIALIZED (SELECT ${VALUES} FROM ${ROWS}),
       inserted AS (
         INSERT INTO rm_messages (${COLUMNS}) SELECT * FROM d ORDER BY 1, 2
         ON CONFLICT (conversation_id, message_id) DO NOTHING
         RETURNING conversation_id, message_id
       )
       SELECT d.conversation_id, d.message_id FROM d
        WHERE NOT EXISTS (SELECT FROM inserted i
                           WHERE (i.conversation_id, i.message_id) = (d.conversation_id, d.message_id))`,
      values: rowParams(likelyNew),
    })
    const existing = new Set(rows.map((r) => messageKey(r.conversation_id, r.message_id)))
    for (const entry of likelyNew) {
      if (existing.size > 0 && existing.has(messageKey(entry.conversationId, entry.messageId)))
        others.push(entry)
      else foldMessage(entry, null, rollups)
    }
  }
  if (others.length === 0) return
  // Only the columns the batch's events set: a row another consumer of the group created meanwhile
  // keeps the rest (the role is never null in a capture, the sentiment never in a result). Results alone
  // leave the content alone, so that its search vector (a generated column) is not computed again.
  // Each upsert locks its rows (key order) and returns them as they were before it (RETURNING OLD, NULL
  // where it inserted), what the fold depends on: the stored row is read under the write's own row lock,
  // without a statement that locks the rows first.
  const withResultsOnly = others.filter(resultsOnly)
  const withContent = others.filter((e) => !resultsOnly(e))
  const stored = new Map<string, StoredMessage>()
  const returningOld = await serverHasReturningOld(client)
  if (!returningOld) {
    // Before PostgreSQL 18 (no RETURNING OLD): the stored rows are read, locked in key order, first.
    const { rows } = await client.query<StoredMessage & { conversation_id: string; message_id: string }>({
      name: 'cas-messages-lock',
      text: MESSAGES_LOCK,
      values: [JSON.stringify(others.map((e) => ({ cid: e.conversationId, mid: e.messageId })))],
    })
    for (const r of rows) stored.set(messageKey(r.conversation_id, r.message_id), r)
  }
  const upserts = returningOld ? UPSERTS : UPSERTS_PRE18
  if (withResultsOnly.length > 0)
    await upsertReturningStored(client, upserts.results, withResultsOnly, stored)
  if (withContent.length > 0) await upsertReturningStored(client, upserts.content, withContent, stored)
  for (const entry of others)
    foldMessage(entry, stored.get(messageKey(entry.conversationId, entry.messageId)) ?? null, rollups)
}

/**
 * Whether the server has RETURNING OLD (PostgreSQL 18 and later), asked once per server (host and port)
 * and remembered: DATABASE_URL may name any PostgreSQL 14+ (docs/configuration.md), the embedded one is 18.
 */
export function serverHasReturningOld(client: pg.ClientBase): Promise<boolean> {
  const { host, port } = client as pg.ClientBase & { host?: string; port?: number }
  const server = `${host}:${port}`
  let known = returningOldByServer.get(server)
  if (known === undefined) {
    known = client
      .query<{ version: number }>("SELECT current_setting('server_version_num')::int AS version")
      .then(({ rows }) => rows[0]!.version >= 180_000)
    // A failed look is asked again by the next batch (this one fails with it, and is retried).
    known.catch(() => returningOldByServer.delete(server))
    returningOldByServer.set(server, known)
  }
  return known
}
const returningOldByServer = new Map<string, Promise<boolean>>()

/**
 * Before PostgreSQL 18: the stored rows of the batch's messages, locked in key order, an index probe per
 * message. Joined plainly, the planner hashed the keys and read the whole table while it was small; a
 * subquery that locks its rows is never merged into a join, so its only plan is the probe.
 */
export const MESSAGES_LOCK = `SELECT m.conversation_id, m.message_id, m.role, m.sent_at, m.sentiment_score,
       m.sentiment_label, m.topics, m.language
  FROM (SELECT * FROM json_to_recordset($1::json) AS k(cid uuid, mid text) ORDER BY 1, 2) k
  CROSS JOIN LATERAL (
    SELECT m.conversation_id, m.message_id, m.role, m.sent_at, m.sentiment_score, m.sentiment_label, m.topics,
           m.language
      FROM rm_messages m WHERE m.conversation_id = k.cid AND m.message_id = k.mid
       FOR UPDATE
  ) m`

interface Statement {
  readonly name: string
  readonly text: string
}

async function upsertReturningStored(
  client: pg.ClientBase,
  { name, text }: Statement,
  entries: readonly MessageSteps[],
  stored: Map<string, StoredMessage>,
): Promise<void> {
  // The key is NULL where the upsert inserted (and no row comes back before PostgreSQL 18).
  const { rows } = await client.query<StoredMessage & { conversation_id: string | null; message_id: string }>(
    { name, text, values: rowParams(entries) },
  )
  for (const r of rows)
    if (r.conversation_id !== null) stored.set(messageKey(r.conversation_id, r.message_id), r)
}

const COLUMNS = `conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival, sentiment_score,
  sentiment_label, topics, analyzer, language`
const VALUES = `d.conversation_id, d.message_id, d.org_id, d.chatbot_id, d.role, d.content, d.sent_at, d.arrival,
  d.sentiment_score, d.sentiment_label, coalesce(d.topics::text[], '{}'), d.analyzer, d.language`
/**
 * The rows as one JSON parameter holding an array per column: JSON.stringify is far cheaper than
 * node-postgres' array parameters (escaped element by element), and Postgres reads arrays of values
 * faster than an array of objects (about a third less per row: no key lookups). A row's topics are
 * one array literal each (a column of arrays cannot be ragged).
 */
const ROWS = `json_to_record($1::json) AS x(conversation_id uuid[], message_id text[], org_id uuid[],
    chatbot_id uuid[], role text[], content text[], sent_at timestamptz[], arrival numeric[],
    sentiment_score float8[], sentiment_label text[], topics text[], analyzer text[], language text[]),
  unnest(x.conversation_id, x.message_id, x.org_id, x.chatbot_id, x.role, x.content, x.sent_at, x.arrival,
    x.sentiment_score, x.sentiment_label, x.topics, x.analyzer, x.language)
    AS d(conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival, sentiment_score,
      sentiment_label, topics, analyzer, language)`

/**
 * The stored row's columns the fold reads, as they were before the upsert (PostgreSQL 18's RETURNING
 * OLD): all NULL for a row the upsert inserted.
 */
const RETURNING_STORED = `RETURNING old.conversation_id, old.message_id, old.role, old.sent_at, old.sentiment_score,
    old.sentiment_label, old.topics, old.language`

const UPSERT_RESULTS_BODY = `INSERT INTO rm_messages AS m (${COLUMNS}) SELECT ${VALUES} FROM ${ROWS} ORDER BY 1, 2
  ON CONFLICT (conversation_id, message_id) DO UPDATE SET sentiment_score = EXCLUDED.sentiment_score,
    sentiment_label = EXCLUDED.sentiment_label, topics = EXCLUDED.topics,
    analyzer = coalesce(EXCLUDED.analyzer, m.analyzer), language = coalesce(EXCLUDED.language, m.language)`

/** The upsert of messages the batch brings only results for. */
export const UPSERT_RESULTS = `${UPSERT_RESULTS_BODY}
  ${RETURNING_STORED}`
/** The same before PostgreSQL 18, after MESSAGES_LOCK; returns nothing. */
export const UPSERT_RESULTS_PRE18 = UPSERT_RESULTS_BODY

const UPSERT_CONTENT_BODY = `INSERT INTO rm_messages AS m (${COLUMNS}) SELECT ${VALUES} FROM ${ROWS} ORDER BY 1, 2
  ON CONFLICT (conversation_id, message_id) DO UPDATE SET
    role = coalesce(EXCLUDED.role, m.role),
    content = CASE WHEN EXCLUDED.role IS NULL THEN m.content ELSE EXCLUDED.content END,
    sent_at = CASE WHEN EXCLUDED.role IS NULL THEN m.sent_at ELSE EXCLUDED.sent_at END,
    arrival = CASE WHEN EXCLUDED.role IS NULL THEN m.arrival ELSE EXCLUDED.arrival END,
    sentiment_score = CASE WHEN EXCLUDED.sentiment_label IS NULL THEN m.sentiment_score ELSE EXCLUDED.sentiment_score END,
    sentiment_label = coalesce(EXCLUDED.sentiment_label, m.sentiment_label),
    topics = CASE WHEN EXCLUDED.sentiment_label IS NULL THEN m.topics ELSE EXCLUDED.topics END,
    analyzer = coalesce(EXCLUDED.analyzer, m.analyzer),
    language = coalesce(EXCLUDED.language, m.language)`

/** The upsert of messages the batch captures (again), with or without results. */
export const UPSERT_CONTENT = `${UPSERT_CONTENT_BODY}
  ${RETURNING_STORED}`
/** The same before PostgreSQL 18, after MESSAGES_LOCK; returns nothing. */
export const UPSERT_CONTENT_PRE18 = UPSERT_CONTENT_BODY

/** The two upserts by server: with RETURNING OLD (PostgreSQL 18 and later), and without (after MESSAGES_LOCK). */
const UPSERTS = {
  results: { name: 'cas-messages-upsert-results', text: UPSERT_RESULTS },
  content: { name: 'cas-messages-upsert', text: UPSERT_CONTENT },
}
const UPSERTS_PRE18 = {
  results: { name: 'cas-messages-upsert-results-pre18', text: UPSERT_RESULTS_PRE18 },
  content: { name: 'cas-messages-upsert-pre18', text: UPSERT_CONTENT_PRE18 },
}

function rowParams(entries: readonly MessageSteps[]): [string] {
  const n = entries.length
  const columns = {
    conversation_id: new Array<string>(n),
    message_id: new Array<string>(n),
    org_id: new Array<string>(n),
    chatbot_id: new Array<string>(n),
    role: new Array<string | null>(n),
    content: new Array<string | null>(n),
    sent_at: new Array<string | null>(n),
    arrival: new Array<string | null>(n),
    sentiment_score: new Array<number | null>(n),
    sentiment_label: new Array<string | null>(n),
    topics: new Array<string | null>(n),
    analyzer: new Array<string | null>(n),
    language: new Array<string | null>(n),
  }
  for (let i = 0; i < n; i++) {
    const row: MessageRow = messageRow(entries[i]!)
    columns.conversation_id[i] = row.conversationId
    columns.message_id[i] = row.messageId
    columns.org_id[i] = row.orgId
    columns.chatbot_id[i] = row.chatbotId
    columns.role[i] = row.role ?? null
    columns.content[i] = row.content ?? null
    columns.sent_at[i] = row.sentAt ?? null
    columns.arrival[i] = row.arrival ?? null
    columns.sentiment_score[i] = row.sentimentScore ?? null
    columns.sentiment_label[i] = row.sentimentLabel ?? null
    columns.topics[i] = row.topics ? arrayLiteral(row.topics) : null
    columns.analyzer[i] = row.analyzer ?? null
    columns.language[i] = row.language ?? null
  }
  return [JSON.stringify(columns)]
}

/** A Postgres array literal of strings ({"a","b"}), every element quoted and escaped. */
export function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`
}
