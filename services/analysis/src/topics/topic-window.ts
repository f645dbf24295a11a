import type pg from 'pg'
import type { WindowPoint } from './recluster.ts'
import { OTHER_TOPIC } from './topic-model.ts'
import { bytesOf, vectorOf } from './topic-store.ts'

/**
 * The window (migrations/0029_topic-reclustering.sql): each chatbot's most recent end-user requests, with
 * their embeddings and terms, which re-clustering clusters (reclusterer.ts). Written in the transaction
 * that places them, which also counts them toward the chatbot's next re-clustering. Returns whether these
 * are the first requests since the chatbot's topics were last re-clustered: its topics are settling from
 * now (analysis.topics-settling, which the caller appends).
 */
export async function addToWindow(
  client: pg.ClientBase,
  chatbot: { chatbotId: string; orgId: string },
  points: readonly {
    conversationId: string
    messageId: string
    embedding: Float32Array
    terms: readonly string[]
  }[],
  now: Date,
): Promise<boolean> {
  if (points.length === 0) return false
  await client.query({
    name: 'cas-topic-window-insert',
    text: `INSERT INTO topic_window (chatbot_id, conversation_id, message_id, embedding, terms)
     SELECT $1, d.conversation_id, d.message_id, decode(d.embedding, 'base64'), d.terms
       FROM json_to_recordset($2::json) AS d(conversation_id uuid, message_id text, embedding text, terms text[])
     ON CONFLICT DO NOTHING`,
    values: [
      chatbot.chatbotId,
      JSON.stringify(
        points.map((p) => ({
          conversation_id: p.conversationId,
          message_id: p.messageId,
          embedding: bytesOf(p.embedding).toString('base64'),
          terms: p.terms,
        })),
      ),
    ],
  })
  // The caller holds the chatbot's topic state lock, which each re-clustering's commit takes too.
  const { rows: before } = await client.query<{ waiting: number }>({
    name: 'cas-topic-reclustering-waiting',
    text: 'SELECT requests_since_run AS waiting FROM topic_reclustering WHERE chatbot_id = $1',
    values: [chatbot.chatbotId],
  })
  await client.query({
    name: 'cas-topic-reclustering-request',
    text: `INSERT INTO topic_reclustering AS r (chatbot_id, org_id, requests_since_run, pending_since)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (chatbot_id) DO UPDATE SET requests_since_run = r.requests_since_run + EXCLUDED.requests_since_run,
       pending_since = coalesce(r.pending_since, EXCLUDED.pending_since)`,
    values: [chatbot.chatbotId, chatbot.orgId, points.length, now],
  })
  return (before[0]?.waiting ?? 0) === 0
}

/**
 * The chatbot's window, oldest first, at most `size` requests, each with the topic its latest result
 * names; requests older than the window leave it. Requests whose result is gone (erased) are left out.
 */
export async function readWindow(
  client: pg.ClientBase,
  chatbotId: string,
  size: number,
): Promise<WindowPoint[]> {
  const { rows } = await client.query<{
    conversation_id: string
    message_id: string
    embedding: Buffer
    terms: string[]
    seq: string
    topic: string | null
  }>({
    name: 'cas-topic-window-read',
    text: `SELECT w.conversation_id, w.message_id, w.embedding, w.terms, w.seq::text, r.topics[1] AS topic
       FROM (SELECT * FROM topic_window WHERE chatbot_id = $1 ORDER BY seq DESC LIMIT $2) w
       LEFT JOIN analysis_results r ON r.conversation_id = w.conversation_id AND r.message_id = w.message_id
      ORDER BY w.seq`,
    values: [chatbotId, size],
  })
  const oldest = rows[0]?.seq
  if (oldest !== undefined) {
    await client.query({
      name: 'cas-topic-window-trim',
      text: 'DELETE FROM topic_window WHERE chatbot_id = $1 AND seq < $2',
      values: [chatbotId, oldest],
    })
  }
  return rows.map((r) => ({
    conversationId: r.conversation_id,
    messageId: r.message_id,
    embedding: vectorOf(r.embedding),
    terms: r.terms,
    topicId: r.topic ?? OTHER_TOPIC,
  }))
}
