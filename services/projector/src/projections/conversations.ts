import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import { hourOf, type Role, type RollupBatch, type SentimentLabel } from './rollups.ts'

type Started = RecordedEvent<'conversation.started'>
type MetadataUpdated = RecordedEvent<'conversation.metadata-updated'>
type MessagesCaptured = RecordedEvent<'conversation.messages-captured'>
type ConversationAnalyzed = RecordedEvent<'analysis.conversation-analyzed'>

/** The events that change a conversation row. */
export type ConversationEvent = Started | MetadataUpdated | MessagesCaptured | ConversationAnalyzed

/**
 * What a run of events does to one rm_conversations row, relative to whatever the row holds: fields set
 * (undefined: left as they are), messages added, bounds widened. Applied to the column defaults, it is
 * the row the events create.
 */
interface ConversationChange {
  id: string
  orgId: string
  chatbotId: string
  /** conversation.started: the caller's id and the creation time. */
  externalId?: string
  createdAt?: string
  /** conversation.started or metadata-updated: all the metadata, as of the last one. */
  metadata?: { user: object; organization: object; session: object; custom: object }
  /** Set by every conversation-stream event. */
  updatedAt?: string
  streamVersion?: number
  messages: number
  firstMessageAt?: string
  lastMessageAt?: string
  /** analysis.conversation-analyzed: the last result (topics by id). */
  sentiment?: {
    score: number
    label: SentimentLabel
    assistant: { score: number; label: SentimentLabel } | null
    topics: readonly string[]
  }
}

interface Pending {
  readonly id: string
  readonly orgId: string
  readonly chatbotId: string
  readonly events: ConversationEvent[]
}

/**
 * The batch's changes to rm_conversations, written set-based: the events of each conversation are
 * folded into one change per row, then one multi-row statement inserts the new rows and one updates
 * the others. Row for row the same as applying the events one at a time:
 * - conversation.started, messages-captured and conversation-analyzed create the row when it is missing
 *   (analysis results can arrive before the conversation); metadata-updated changes an existing row only;
 * - messages are counted on the conversation and go into their hours' rollups (messages by role, and
 *   activity with the end user the conversation had when they were captured).
 */
export class ConversationChanges {
  private readonly pending = new Map<string, Pending>()

  add(event: ConversationEvent): void {
    let entry = this.pending.get(event.streamId)
    if (!entry) {
      entry = { id: event.streamId, orgId: event.orgId, chatbotId: event.chatbotId, events: [] }
      this.pending.set(event.streamId, entry)
    }
    entry.events.push(event)
  }

  async flush(client: pg.ClientBase, rollups: RollupBatch): Promise<void> {
    if (this.pending.size === 0) return
    const entries = [...this.pending.values()].sort((a, b) => compare(a.id, b.id))
    this.pending.clear()
    // A conversation whose first event here is conversation.started is almost always new, and the
    // started event sets everything the rest depends on: no need to read the row first.
    const fresh = entries.filter((e) => e.events[0]!.type === 'conversation.started')
    const others = entries.filter((e) => e.events[0]!.type !== 'conversation.started')
    const stored = new Map<string, { end_user_id: string | null }>()
    if (others.length > 0) {
      const { rows } = await client.query<{ id: string; end_user_id: string | null }>(
        'SELECT id, end_user_id FROM rm_conversations WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
        [others.map((e) => e.id)],
      )
      for (const r of rows) stored.set(r.id, r)
    }

    const inserts: ConversationChange[] = []
    const updates: ConversationChange[] = []
    for (const entry of fresh) inserts.push(fold(entry, entry.events, null, rollups))
    for (const entry of others) {
      const row = stored.get(entry.id)
      if (row) {
        updates.push(fold(entry, entry.events, row.end_user_id, rollups))
        continue
      }
      // metadata-updated changes nothing on a row that does not exist (yet).
      const creating = entry.events.findIndex((e) => e.type !== 'conversation.metadata-updated')
      if (creating >= 0) inserts.push(fold(entry, entry.events.slice(creating), null, rollups))
    }

    if (inserts.length > 0) {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, created_at, end_user,
           end_user_organization, session, custom, updated_at, stream_version, message_count, first_message_at,
           last_message_at, sentiment_score, sentiment_label, assistant_sentiment_score, assistant_sentiment_label,
           topics)
         SELECT d.id, d.org_id, d.chatbot_id, d.external_id, d.created_at, coalesce(d.end_user, '{}'),
                coalesce(d.end_user_organization, '{}'), coalesce(d.session, '{}'), coalesce(d.custom, '{}'),
                d.updated_at, coalesce(d.stream_version, 0), d.message_count, d.first_message_at,
                d.last_message_at, d.sentiment_score, d.sentiment_label, d.assistant_sentiment_score,
                d.assistant_sentiment_label, coalesce(d.topics, '{}')
           FROM ${CHANGES} ORDER BY d.id
         ON CONFLICT (id) DO NOTHING
         RETURNING id`,
        changeParams(inserts),
      )
      // Created meanwhile by another transaction (another consumer of the group): change it instead.
      if (rows.length < inserts.length) {
        const created = new Set(rows.map((r) => r.id))
        updates.push(...inserts.filter((c) => !created.has(c.id)))
      }
    }
    if (updates.length > 0) {
      await client.query(
        `UPDATE rm_conversations AS c SET
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
           sentiment_score = coalesce(d.sentiment_score, c.sentiment_score),
           sentiment_label = coalesce(d.sentiment_label, c.sentiment_label),
           -- A new result replaces the assistant's figures too, null included (no assistant message yet).
           assistant_sentiment_score = CASE WHEN d.sentiment_label IS NULL THEN c.assistant_sentiment_score
                                            ELSE d.assistant_sentiment_score END,
           assistant_sentiment_label = CASE WHEN d.sentiment_label IS NULL THEN c.assistant_sentiment_label
                                            ELSE d.assistant_sentiment_label END,
           topics = coalesce(d.topics, c.topics)
          FROM ${CHANGES}
         WHERE c.id = d.id`,
        changeParams(updates.sort((a, b) => compare(a.id, b.id))),
      )
    }
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
    assistant_sentiment_label text, topics text[])`

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
        sentiment_score: c.sentiment?.score,
        sentiment_label: c.sentiment?.label,
        assistant_sentiment_score: c.sentiment?.assistant?.score,
        assistant_sentiment_label: c.sentiment?.assistant?.label,
        topics: c.sentiment?.topics,
      })),
    ),
  ]
}

/**
 * Folds a conversation's events, in order, into one change, and adds their messages to the rollups.
 * `endUserId` is the row's end user before them (null for a new row): activity rows get the end user
 * the conversation had when each capture was applied.
 */
function fold(
  entry: Pending,
  events: readonly ConversationEvent[],
  endUserId: string | null,
  rollups: RollupBatch,
): ConversationChange {
  const change: ConversationChange = {
    id: entry.id,
    orgId: entry.orgId,
    chatbotId: entry.chatbotId,
    messages: 0,
  }
  let endUser = endUserId
  const stream = (e: ConversationEvent) => {
    change.updatedAt = e.occurredAt
    change.streamVersion = Math.max(change.streamVersion ?? 0, e.streamVersion)
  }
  for (const e of events) {
    switch (e.type) {
      case 'conversation.started': {
        const { conversationId, ...metadata } = e.payload
        change.externalId = conversationId
        change.createdAt = e.occurredAt
        change.metadata = metadata
        endUser = metadata.user.id ?? null
        stream(e)
        break
      }
      case 'conversation.metadata-updated':
        change.metadata = e.payload
        endUser = e.payload.user.id ?? null
        stream(e)
        break
      case 'conversation.messages-captured': {
        const messages = e.payload.messages
        change.messages += messages.length
        for (const m of messages) {
          if (change.firstMessageAt === undefined || earlier(m.sentAt, change.firstMessageAt))
            change.firstMessageAt = m.sentAt
          if (change.lastMessageAt === undefined || earlier(change.lastMessageAt, m.sentAt))
            change.lastMessageAt = m.sentAt
          const hour = hourOf(m.sentAt)
          rollups.addMessage(e.orgId, e.chatbotId, hour, m.role as Role)
          rollups.addActivity(e.orgId, e.chatbotId, hour, e.streamId, endUser)
        }
        stream(e)
        break
      }
      case 'analysis.conversation-analyzed':
        change.sentiment = {
          score: e.payload.sentiment.score,
          label: e.payload.sentiment.label,
          assistant: e.payload.assistantSentiment,
          topics: e.payload.topics.map((t) => t.id),
        }
        break
    }
  }
  return change
}

const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Whether one ISO 8601 UTC timestamp is before another (they may differ in their fractions' digits). */
function earlier(a: string, b: string): boolean {
  // As toISOString() writes them (what events carry), they compare as strings.
  if (CANONICAL_UTC.test(a) && CANONICAL_UTC.test(b)) return a < b
  return Date.parse(a) < Date.parse(b)
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
