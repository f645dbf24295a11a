import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import { hourOf, type Role, type RollupBatch, type SentimentLabel } from './rollups.ts'

type Started = RecordedEvent<'conversation.started'>
type MetadataUpdated = RecordedEvent<'conversation.metadata-updated'>
type MessagesCaptured = RecordedEvent<'conversation.messages-captured'>

// Every conversation-stream event moves the read model's stream version: reads wait on it.
const BUMP_VERSION = 'stream_version = GREATEST(rm_conversations.stream_version, EXCLUDED.stream_version)'

export async function applyStarted(client: pg.ClientBase, e: Started): Promise<void> {
  const p = e.payload
  await client.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, end_user, end_user_organization, session,
       custom, created_at, updated_at, stream_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)
     ON CONFLICT (id) DO UPDATE SET external_id = EXCLUDED.external_id, end_user = EXCLUDED.end_user,
       end_user_organization = EXCLUDED.end_user_organization, session = EXCLUDED.session,
       custom = EXCLUDED.custom, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, ${BUMP_VERSION}`,
    [
      e.streamId,
      e.orgId,
      e.chatbotId,
      p.conversationId,
      p.user,
      p.organization,
      p.session,
      p.custom,
      e.occurredAt,
      e.streamVersion,
    ],
  )
}

export async function applyMetadataUpdated(client: pg.ClientBase, e: MetadataUpdated): Promise<void> {
  const p = e.payload
  await client.query(
    `UPDATE rm_conversations SET end_user = $2, end_user_organization = $3, session = $4, custom = $5,
       updated_at = $6, stream_version = GREATEST(stream_version, $7)
     WHERE id = $1`,
    [e.streamId, p.user, p.organization, p.session, p.custom, e.occurredAt, e.streamVersion],
  )
}

interface StoredMessage {
  message_id: string
  inserted: boolean
  sentiment_score: number | null
  sentiment_label: SentimentLabel | null
  topics: string[]
}

/**
 * New messages: stored, counted on the conversation, and added to their hours' rollups (messages by role,
 * activity). A message whose analysis arrived first (another topic) already has a row holding only the
 * result; it gets its content now, and its result goes into the rollups of the hour it now has.
 */
export async function applyMessagesCaptured(
  client: pg.ClientBase,
  e: MessagesCaptured,
  rollups: RollupBatch,
) {
  const messages = e.payload.messages
  const { rows } = await client.query<StoredMessage>(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival)
     SELECT $1, m.id, $2, $3, m.role, m.content, m.sent_at, $4::numeric * 1000 + m.ord
       FROM unnest($5::text[], $6::text[], $7::text[], $8::timestamptz[]) WITH ORDINALITY
            AS m(id, role, content, sent_at, ord)
     ON CONFLICT (conversation_id, message_id) DO UPDATE SET role = EXCLUDED.role, content = EXCLUDED.content,
       sent_at = EXCLUDED.sent_at, arrival = EXCLUDED.arrival
     RETURNING message_id, (xmax = 0) AS inserted, sentiment_score, sentiment_label, topics`,
    [
      e.streamId,
      e.orgId,
      e.chatbotId,
      e.position,
      messages.map((m) => m.id),
      messages.map((m) => m.role),
      messages.map((m) => m.content),
      messages.map((m) => m.sentAt),
    ],
  )
  const sentAts = messages.map((m) => m.sentAt).sort()
  const { rows: conversation } = await client.query<{ end_user_id: string | null }>(
    `INSERT INTO rm_conversations AS c (id, org_id, chatbot_id, message_count, first_message_at, last_message_at,
       updated_at, stream_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET message_count = c.message_count + EXCLUDED.message_count,
       first_message_at = LEAST(c.first_message_at, EXCLUDED.first_message_at),
       last_message_at = GREATEST(c.last_message_at, EXCLUDED.last_message_at),
       updated_at = EXCLUDED.updated_at, stream_version = GREATEST(c.stream_version, EXCLUDED.stream_version)
     RETURNING end_user_id`,
    [
      e.streamId,
      e.orgId,
      e.chatbotId,
      messages.length,
      sentAts[0],
      sentAts.at(-1),
      e.occurredAt,
      e.streamVersion,
    ],
  )
  const endUserId = conversation[0]?.end_user_id ?? null
  const analyzedEarly = new Map(
    rows.filter((r) => !r.inserted && r.sentiment_label).map((r) => [r.message_id, r]),
  )
  for (const m of messages) {
    const hour = hourOf(m.sentAt)
    rollups.addMessage(e.orgId, e.chatbotId, hour, m.role as Role)
    rollups.addActivity(e.orgId, e.chatbotId, hour, e.streamId, endUserId)
    const early = analyzedEarly.get(m.id)
    if (early?.sentiment_label && early.sentiment_score !== null) {
      rollups.addAnalysis(
        e.orgId,
        e.chatbotId,
        hour,
        { score: early.sentiment_score, label: early.sentiment_label },
        early.topics,
        1,
      )
    }
  }
}
