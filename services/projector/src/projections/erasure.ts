import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import { countedLanguage } from './message-fold.ts'
import { hourOf, type Role, type RollupDeltas, type SentimentLabel } from './rollup-deltas.ts'
import type { RollupChanges } from './rollups.ts'

type Erased = RecordedEvent<'conversation.erased'>

export interface ErasedMessage {
  role: Role
  sent_at: Date
  sentiment_score: number | null
  sentiment_label: SentimentLabel | null
  topics: string[]
  language: string | null
}

/**
 * The rollups' part of an erasure (registry.ts: `counts-taken-out`, `relinked`): its captured messages are
 * taken back out of their hours, with their results, and its activity rows out of the distinct-count
 * chains. Runs before its rows go (it reads its messages); `rollups` must hold no pending delta of this
 * conversation (the caller flushes). The rest of the erasure (its rows, its tombstone) is derived from
 * the registry (barriers.ts).
 */
export async function takeOutErased(client: pg.ClientBase, e: Erased, rollups: RollupChanges): Promise<void> {
  const { rows } = await client.query<ErasedMessage>(
    `SELECT role, sent_at, sentiment_score, sentiment_label, topics, language FROM rm_messages
      WHERE conversation_id = $1 AND sent_at IS NOT NULL`,
    [e.streamId],
  )
  foldErasure(e, rows, rollups)
  await rollups.eraseConversation(client, e.streamId)
}

/**
 * The erasure's fold: each of the conversation's stored messages (captured ones: they have an hour)
 * taken back out of its hour, with its result if it has one, and its language if it counts one.
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
    const counted = countedLanguage(m)
    if (counted) rollups.addLanguage(e.orgId, e.chatbotId, counted.hour, counted.language, -1)
  }
}
