import type pg from 'pg'
import { signalOnNow } from './signal-coverage.ts'
import { conversationTopics, type TopicRef } from './topics.ts'

export interface ConversationFilters {
  readonly chatbotId?: string
  readonly from?: string
  readonly to?: string
  readonly userId?: string
  readonly sentiment?: 'positive' | 'neutral' | 'negative'
  /** The topic ids a `topic=` stands for (topicFilterIds). */
  readonly topicIds?: readonly string[]
  /** Conversations with this signal. */
  readonly signal?: string
  readonly q?: string
}

/** Where a page ends: the last row's sort key (last message time, then id). */
export interface PageKey {
  readonly lastMessageAt: string
  readonly id: string
}

interface ConversationRow {
  id: string
  chatbot_id: string
  external_id: string
  end_user: Record<string, unknown>
  end_user_organization: Record<string, unknown>
  session: Record<string, unknown>
  custom: Record<string, unknown>
  message_count: number
  first_message_at: Date
  last_message_at: Date
  created_at: Date | null
  updated_at: Date | null
  sentiment_score: number | null
  sentiment_label: 'positive' | 'neutral' | 'negative' | null
  assistant_sentiment_score: number | null
  assistant_sentiment_label: 'positive' | 'neutral' | 'negative' | null
  topics: string[]
  preview: string | null
}

const COLUMNS = `c.id, c.chatbot_id, c.external_id, c.end_user, c.end_user_organization, c.session, c.custom,
  c.message_count, c.first_message_at, c.last_message_at, c.created_at, c.updated_at, c.sentiment_score,
  c.sentiment_label, c.assistant_sentiment_score, c.assistant_sentiment_label, c.topics, c.preview`

// Rows created by analysis results that overtook their conversation are not conversations yet.
const LISTABLE = 'c.external_id IS NOT NULL AND c.last_message_at IS NOT NULL'

/** API.md's Conversation; `resolved` gives its topics' canonical ids and labels (resolveTopics). */
export function toConversation(r: ConversationRow, resolved: Map<string, TopicRef>) {
  const topics = conversationTopics(r.topics, resolved)
  return {
    id: r.id,
    chatbotId: r.chatbot_id,
    conversationId: r.external_id,
    user: r.end_user,
    organization: r.end_user_organization,
    session: r.session,
    custom: r.custom,
    messageCount: r.message_count,
    firstMessageAt: r.first_message_at.toISOString(),
    lastMessageAt: r.last_message_at.toISOString(),
    createdAt: (r.created_at ?? r.first_message_at).toISOString(),
    updatedAt: (r.updated_at ?? r.last_message_at).toISOString(),
    sentiment:
      r.sentiment_label && r.sentiment_score !== null
        ? { score: r.sentiment_score, label: r.sentiment_label }
        : null,
    assistantSentiment:
      r.assistant_sentiment_label && r.assistant_sentiment_score !== null
        ? { score: r.assistant_sentiment_score, label: r.assistant_sentiment_label }
        : null,
    topics: topics.map((t) => t.label),
    topicIds: topics.map((t) => t.id),
    preview: r.preview,
  }
}

export type Conversation = ReturnType<typeof toConversation>

/**
 * The text-search configuration of `q`: the one rm_messages.content_search is indexed with (migrations
 * 0026 and 0058: English stems, accents dropped), so that a word finds its inflections (crash, crashes,
 * crashed, crashing) and its spellings with or without accents (devolución, devolucion) through the GIN index.
 */
export const SEARCH_CONFIG = 'cas_search'

/**
 * One page of the organization's conversations, newest last message first (ties by id), after `after`.
 * Returns one row more than `limit` when there is a next page.
 */
export async function listConversations(
  client: pg.ClientBase,
  orgId: string,
  filters: ConversationFilters,
  limit: number,
  after?: PageKey,
): Promise<ConversationRow[]> {
  const { sql, params } = listConversationsQuery(orgId, filters, limit, after)
  const { rows } = await client.query<ConversationRow>(sql, params)
  return rows
}

/** listConversations' statement and parameters (the plan tests read its plan). */
export function listConversationsQuery(
  orgId: string,
  filters: ConversationFilters,
  limit: number,
  after?: PageKey,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [orgId]
  const where = ['c.org_id = $1', LISTABLE]
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value)
    where.push(sql(`$${params.length}`))
  }
  // The chatbot a signal is on for: the one asked for (its parameter), or each conversation's.
  let chatbot = { id: 'c.chatbot_id', orgId: 'c.org_id' }
  if (filters.chatbotId) {
    add((p) => `c.chatbot_id = ${p}`, filters.chatbotId)
    chatbot = { id: `$${params.length}`, orgId: '$1' }
  }
  if (filters.from) add((p) => `c.last_message_at >= ${p}`, filters.from)
  if (filters.to) add((p) => `c.last_message_at <= ${p}`, filters.to)
  if (filters.userId) add((p) => `c.end_user_id = ${p}`, filters.userId)
  if (filters.sentiment) add((p) => `c.sentiment_label = ${p}`, filters.sentiment)
  if (filters.topicIds) add((p) => `c.topics && ${p}::text[]`, filters.topicIds)
  if (filters.signal) {
    // As the signals report counts them (issue 32): not for a chatbot that has the signal off now
    // (signalOnNow; its stored signals are kept and count again once it is back on); a chatbot without a
    // read-model row yet counts every signal, as before settings (signalsOn's `configured`). For one
    // chatbot that test names no column of c: Postgres runs it once, before the scan (a One-Time Filter),
    // and reads no conversation of a chatbot that has the signal off.
    add(
      (p) =>
        `EXISTS (SELECT 1 FROM rm_conversation_signals s WHERE s.conversation_id = c.id AND s.signal = ${p})
         AND (NOT EXISTS (SELECT 1 FROM rm_chatbots b WHERE b.id = ${chatbot.id} AND b.org_id = ${chatbot.orgId})
              OR ${signalOnNow(chatbot.id, p)})`,
      filters.signal,
    )
  }
  if (filters.q) {
    add(
      (p) => `EXISTS (SELECT 1 FROM rm_messages m WHERE m.conversation_id = c.id
                AND m.content_search @@ websearch_to_tsquery('${SEARCH_CONFIG}', ${p}))`,
      filters.q,
    )
  }
  if (after) {
    params.push(after.lastMessageAt, after.id)
    where.push(`(c.last_message_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`)
  }
  params.push(limit + 1)
  return {
    sql: `SELECT ${COLUMNS} FROM rm_conversations c WHERE ${where.join(' AND ')}
      ORDER BY c.last_message_at DESC, c.id DESC LIMIT $${params.length}`,
    params,
  }
}

export async function findConversation(client: pg.ClientBase, orgId: string, id: string) {
  const { rows } = await client.query<ConversationRow & { stream_version: number }>(
    `SELECT ${COLUMNS}, c.stream_version FROM rm_conversations c WHERE c.id = $1 AND c.org_id = $2 AND ${LISTABLE}`,
    [id, orgId],
  )
  return rows[0]
}

interface MessageRow {
  message_id: string
  role: string
  content: string
  sent_at: Date
  sentiment_score: number | null
  sentiment_label: 'positive' | 'neutral' | 'negative' | null
  analyzer: string | null
}

/**
 * A conversation's messages ($1, of organization $2) in sentAt order, ties in arrival order: found through
 * the primary key's conversation_id, then sorted (no index holds that order: migration 0024).
 */
export const CONVERSATION_MESSAGES = `SELECT message_id, role, content, sent_at, sentiment_score, sentiment_label,
          analyzer
   FROM rm_messages WHERE conversation_id = $1 AND org_id = $2 AND content IS NOT NULL ORDER BY sent_at, arrival`

/** The conversation's messages in sentAt order, ties in arrival order. */
export async function conversationMessages(client: pg.ClientBase, orgId: string, conversationId: string) {
  const { rows } = await client.query<MessageRow>(CONVERSATION_MESSAGES, [conversationId, orgId])
  return rows.map((m) => ({
    id: m.message_id,
    role: m.role,
    content: m.content,
    sentAt: m.sent_at.toISOString(),
    sentiment:
      m.sentiment_label && m.sentiment_score !== null
        ? { score: m.sentiment_score, label: m.sentiment_label }
        : null,
    analyzer: m.analyzer,
  }))
}

/** The conversation stream's version on the write side: what a read after a capture must wait for. */
export async function writtenVersion(client: pg.ClientBase, orgId: string, conversationId: string) {
  const { rows } = await client.query<{ version: number }>(
    // A deleted chatbot's conversations are gone, whatever is left of their streams (its data key destroyed:
    // deleted_chatbots, from the moment the deletion commits); so is an erased one.
    `SELECT s.version FROM event_streams s
      WHERE s.stream_type = 'conversation' AND s.stream_id = $1 AND s.org_id = $2
        AND NOT EXISTS (SELECT 1 FROM deleted_chatbots d WHERE d.chatbot_id = s.chatbot_id)
        AND NOT EXISTS (SELECT 1 FROM rm_erased_conversations e WHERE e.conversation_id = s.stream_id)`,
    [conversationId, orgId],
  )
  return rows[0]?.version
}

export async function projectedVersion(client: pg.ClientBase, orgId: string, conversationId: string) {
  const { rows } = await client.query<{ stream_version: number }>(
    'SELECT stream_version FROM rm_conversations WHERE id = $1 AND org_id = $2',
    [conversationId, orgId],
  )
  return rows[0]?.stream_version ?? 0
}
