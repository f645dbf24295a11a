import type pg from 'pg'
import {
  type ConversationChange,
  type ConversationChanges,
  conversationsToRead,
  foldConversations,
  type StoredConversation,
} from './conversation-fold.ts'
import type { RollupDeltas } from './rollup-deltas.ts'

/**
 * The I/O of rm_conversations: reads the stored rows the fold needs (locked, in id order), folds
 * (conversation-fold.ts), and writes what it returns with one multi-row statement per kind: one
 * inserting the new rows, one updating the others.
 */
export async function writeConversations(
  client: pg.ClientBase,
  batch: ConversationChanges,
  rollups: RollupDeltas,
): Promise<void> {
  const entries = batch.take()
  if (entries.length === 0) return
  const toRead = conversationsToRead(entries)
  const stored = new Map<string, StoredConversation>()
  if (toRead.length > 0) {
    const { rows } = await client.query<{ id: string; end_user_id: string | null }>({
      name: 'cas-conversations-lock',
      text: 'SELECT id, end_user_id FROM rm_conversations WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
      values: [toRead],
    })
    for (const r of rows) stored.set(r.id, { endUserId: r.end_user_id })
  }
  const { inserts, updates } = foldConversations(entries, stored, rollups)
  if (inserts.length > 0) {
    const { rows } = await client.query<{ id: string }>({
      name: 'cas-conversations-insert',
      text: `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, created_at, end_user,
         end_user_organization, session, custom, updated_at, stream_version, message_count, first_message_at,
         last_message_at, sentiment_score, sentiment_label, assistant_sentiment_score, assistant_sentiment_label,
         topics, preview, preview_sent_at, preview_arrival)
       SELECT d.id, d.org_id, d.chatbot_id, d.external_id, d.created_at, coalesce(d.end_user, '{}'),
              coalesce(d.end_user_organization, '{}'), coalesce(d.session, '{}'), coalesce(d.custom, '{}'),
              d.updated_at, coalesce(d.stream_version, 0), d.message_count, d.first_message_at,
              d.last_message_at, d.sentiment_score, d.sentiment_label, d.assistant_sentiment_score,
              d.assistant_sentiment_label, coalesce(d.topics, '{}'), d.preview, d.preview_sent_at,
              d.preview_arrival
         FROM ${CHANGES} ORDER BY d.id
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      values: changeParams(inserts),
    })
    // Created meanwhile by another transaction (another consumer of the group): change it instead.
    if (rows.length < inserts.length) {
      const created = new Set(rows.map((r) => r.id))
      updates.push(...inserts.filter((c) => !created.has(c.id)))
    }
  }
  if (updates.length > 0) {
    await client.query({
      name: 'cas-conversations-update',
      text: CONVERSATIONS_UPDATE,
      values: changeParams(updates.sort((a, b) => compare(a.id, b.id))),
    })
  }
}

/**
 * The changes as rows, one JSON parameter: JSON.stringify is far cheaper than node-postgres' array
 * parameters (escaped element by element). A column left out (null) is one the change leaves as it is.
 */
const CHANGES = `json_to_recordset($1::json) AS d(id uuid, org_id uuid, chatbot_id uuid, external_id text,
    created_at timestamptz, end_user jsonb, end_user_organization jsonb, session jsonb, custom jsonb,
    updated_at timestamptz, stream_version int, message_count int, first_message_at timestamptz,
    last_message_at timestamptz, sentiment_score float8, sentiment_label text, assistant_sentiment_score float8,
    assistant_sentiment_label text, topics text[], preview text, preview_sent_at timestamptz,
    preview_arrival numeric, analyzed boolean)`

/**
 * The changed rows' ids, for the update to find them by its primary key: joined on the JSON's rows alone,
 * the planner hashed them and read the whole table while it was small (DSTC11's 1,200 conversations:
 * 0.4 ms a batch against 0.2 with the ids; lookups.int.test.ts).
 */
const CHANGED_IDS = `ARRAY(SELECT (e ->> 'id')::uuid FROM json_array_elements($1::json) AS e)`

const PREVIEW_SET = ['preview', 'preview_sent_at', 'preview_arrival']
const RESULT_SET = [
  'sentiment_score',
  'sentiment_label',
  'assistant_sentiment_score',
  'assistant_sentiment_label',
]
const PREVIEW_EARLIER = `d.preview_sent_at IS NOT NULL AND (c.preview_sent_at IS NULL
             OR (d.preview_sent_at, d.preview_arrival) < (c.preview_sent_at, c.preview_arrival))`

/** The stored rows' update with the batch's changes (one JSON parameter, CHANGES). */
export const CONVERSATIONS_UPDATE = `UPDATE rm_conversations AS c SET
         external_id = coalesce(d.external_id, c.external_id),
         created_at = coalesce(d.created_at, c.created_at),
         end_user = coalesce(d.end_user, c.end_user),
         end_user_organization = coalesce(d.end_user_organization, c.end_user_organization),
         session = coalesce(d.session, c.session),
         custom = coalesce(d.custom, c.custom),
         updated_at = coalesce(d.updated_at, c.updated_at),
         stream_version = GREATEST(c.stream_version, d.stream_version),
         message_count = c.message_count + d.message_count,
         first_message_at = LEAST(c.first_message_at, d.first_message_at),
         last_message_at = GREATEST(c.last_message_at, d.last_message_at),
         -- A new result replaces both roles' figures, null included (no end-user or assistant message).
         ${RESULT_SET.map(
           (column) => `${column} = CASE WHEN d.analyzed THEN d.${column} ELSE c.${column} END`,
         ).join(',\n         ')},
         topics = coalesce(d.topics, c.topics),
         -- The first end-user message so far: the batch's first, if it comes before the row's.
         ${PREVIEW_SET.map(
           (column) => `${column} = CASE WHEN ${PREVIEW_EARLIER} THEN d.${column} ELSE c.${column} END`,
         ).join(',\n         ')}
        FROM ${CHANGES}
       WHERE c.id = d.id AND c.id = ANY (${CHANGED_IDS})`

function changeParams(changes: readonly ConversationChange[]): [string] {
  return [
    JSON.stringify(
      changes.map((c) => ({
        id: c.id,
        org_id: c.orgId,
        chatbot_id: c.chatbotId,
        external_id: c.externalId,
        created_at: c.createdAt,
        end_user: c.metadata?.user,
        end_user_organization: c.metadata?.organization,
        session: c.metadata?.session,
        custom: c.metadata?.custom,
        updated_at: c.updatedAt,
        stream_version: c.streamVersion,
        message_count: c.messages,
        first_message_at: c.firstMessageAt,
        last_message_at: c.lastMessageAt,
        sentiment_score: c.sentiment?.endUser?.score,
        sentiment_label: c.sentiment?.endUser?.label,
        assistant_sentiment_score: c.sentiment?.assistant?.score,
        assistant_sentiment_label: c.sentiment?.assistant?.label,
        topics: c.sentiment?.topics,
        preview: c.preview?.text,
        preview_sent_at: c.preview?.sentAt,
        preview_arrival: c.preview?.arrival,
        analyzed: c.sentiment !== undefined,
      })),
    ),
  ]
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
