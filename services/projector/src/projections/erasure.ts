import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import { CONVERSATION_TABLES } from './registry.ts'
import { hourOf, type Role, type RollupDeltas, type SentimentLabel } from './rollup-deltas.ts'
import type { RollupBatch } from './rollups.ts'

type Erased = RecordedEvent<'conversation.erased'>

export interface ErasedMessage {
  role: Role
  sent_at: Date
  sentiment_score: number | null
  sentiment_label: SentimentLabel | null
  topics: string[]
}

/**
 * An erased conversation leaves no row behind: its messages are taken back out of the hourly rollups,
 * its activity rows, messages and conversation row are deleted, and a tombstone drops analysis results
 * still on their way. `rollups` must hold no pending delta of this conversation (the caller flushes).
 */
export async function applyErased(client: pg.ClientBase, e: Erased, rollups: RollupBatch): Promise<void> {
  const { rows } = await client.query<ErasedMessage>(
    `SELECT role, sent_at, sentiment_score, sentiment_label, topics FROM rm_messages
      WHERE conversation_id = $1 AND sent_at IS NOT NULL`,
    [e.streamId],
  )
  foldErasure(e, rows, rollups)
  await rollups.eraseConversation(client, e.streamId)
  // The tables registry.ts declares `rows-deleted` on erasure (its messages, its signals), then its row.
  for (const table of CONVERSATION_TABLES)
    await client.query(`DELETE FROM ${table} WHERE conversation_id = $1`, [e.streamId])
  await client.query('DELETE FROM rm_conversations WHERE id = $1', [e.streamId])
  await client.query(
    `INSERT INTO rm_erased_conversations (conversation_id, org_id, chatbot_id, erased_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [e.streamId, e.orgId, e.chatbotId, e.occurredAt],
  )
}

/**
 * The erasure's fold: each of the conversation's stored messages (captured ones: they have an hour)
 * taken back out of its hour, with its result if it has one.
 */
export function foldErasure(e: Erased, messages: readonly ErasedMessage[], rollups: RollupDeltas): void {
  for (const m of messages) {
    const hour = hourOf(m.sent_at)
    rollups.addMessage(e.orgId, e.chatbotId, hour, m.role, -1)
    if (m.sentiment_label && m.sentiment_score !== null) {
      rollups.addAnalysis(
        e.orgId,
        e.chatbotId,
        hour,
        m.role,
        { score: m.sentiment_score, label: m.sentiment_label },
        m.topics,
        -1,
      )
    }
  }
}
