import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import { hourOf, type RollupBatch, type SentimentLabel } from './rollups.ts'

type MessagesAnalyzed = RecordedEvent<'analysis.messages-analyzed'>
type ConversationAnalyzed = RecordedEvent<'analysis.conversation-analyzed'>

interface PreviousResult {
  message_id: string
  sent_at: Date | null
  sentiment_score: number | null
  sentiment_label: SentimentLabel | null
  topics: string[]
}

/**
 * Per-message results replace the message's previous result. The rollups of the message's hour take the
 * previous result back and add the new one, so they stay exact through re-analysis. A result for a
 * message not projected yet (analysis-events can run ahead of conversation-events) is kept on a row of
 * its own, and counted when the message arrives (conversations.ts).
 */
export async function applyMessagesAnalyzed(
  client: pg.ClientBase,
  e: MessagesAnalyzed,
  rollups: RollupBatch,
) {
  const results = e.payload.results
  const ids = results.map((r) => r.messageId)
  const { rows } = await client.query<PreviousResult>(
    `SELECT message_id, sent_at, sentiment_score, sentiment_label, topics FROM rm_messages
      WHERE conversation_id = $1 AND message_id = ANY($2) FOR UPDATE`,
    [e.streamId, ids],
  )
  const previous = new Map(rows.map((r) => [r.message_id, r]))
  for (const r of results) {
    const before = previous.get(r.messageId)
    if (!before?.sent_at) continue
    const hour = hourOf(before.sent_at)
    if (before.sentiment_label && before.sentiment_score !== null) {
      rollups.addAnalysis(
        e.orgId,
        e.chatbotId,
        hour,
        { score: before.sentiment_score, label: before.sentiment_label },
        before.topics,
        -1,
      )
    }
    rollups.addAnalysis(e.orgId, e.chatbotId, hour, r.sentiment, r.topics, 1)
  }
  await client.query(
    `INSERT INTO rm_messages AS m (conversation_id, message_id, org_id, chatbot_id, sentiment_score, sentiment_label,
       topics, analyzer)
     SELECT $1, r.id, $2, $3, r.score, r.label, ARRAY(SELECT jsonb_array_elements_text(r.topics)), $4
       FROM unnest($5::text[], $6::float8[], $7::text[], $8::jsonb[]) AS r(id, score, label, topics)
     ON CONFLICT (conversation_id, message_id) DO UPDATE SET sentiment_score = EXCLUDED.sentiment_score,
       sentiment_label = EXCLUDED.sentiment_label, topics = EXCLUDED.topics, analyzer = EXCLUDED.analyzer`,
    [
      e.streamId,
      e.orgId,
      e.chatbotId,
      `${e.payload.analyzer.name}@${e.payload.analyzer.version}`,
      ids,
      results.map((r) => r.sentiment.score),
      results.map((r) => r.sentiment.label),
      results.map((r) => JSON.stringify(r.topics)),
    ],
  )
}

export async function applyConversationAnalyzed(
  client: pg.ClientBase,
  e: ConversationAnalyzed,
): Promise<void> {
  const p = e.payload
  await client.query(
    `INSERT INTO rm_conversations AS c (id, org_id, chatbot_id, sentiment_score, sentiment_label, topics)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (id) DO UPDATE SET sentiment_score = EXCLUDED.sentiment_score,
       sentiment_label = EXCLUDED.sentiment_label, topics = EXCLUDED.topics`,
    [e.streamId, e.orgId, e.chatbotId, p.sentiment.score, p.sentiment.label, p.topics],
  )
}
