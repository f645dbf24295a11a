import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import type { MessageAnalysis } from '../analyzer.ts'
import type { TopicRef } from '../summary.ts'
import {
  emptyTopicState,
  type PoolPoint,
  type Topic,
  type TopicDecision,
  type TopicState,
} from './topic-model.ts'
import { normalized } from './vectors.ts'

/** A chatbot's topic state, locked for the caller's transaction. */
export interface LockedTopicState {
  readonly chatbotId: string
  readonly state: TopicState
}

interface ModelRow {
  model: string
  token: string
  seq: string
  added_since_clustering: number
  pool_size_at_clustering: number
}

/**
 * Reads and writes the chatbots' topic states (migrations/0014_topic-discovery.sql) around the pure
 * decision (topic-model.ts). `lock` takes the chatbot's topic_models row FOR UPDATE, so that decisions
 * for one chatbot never interleave, in this process or another. States are cached between commits (a
 * few hundred topics and up to a thousand pooled embeddings: reading them for each commit would cost
 * more than deciding); a cached state is used only while its token is the row's, and leaves the cache
 * while a transaction changes it, so a transaction that fails leaves nothing stale behind.
 */
export class TopicStore {
  private readonly cache = new Map<string, { token: string; state: TopicState }>()

  constructor(private readonly maxCached = 64) {}

  /** Locks and reads the chatbots' states (in id order: concurrent commits lock alike, never deadlock). */
  async lock(
    client: pg.ClientBase,
    chatbots: readonly { chatbotId: string; orgId: string }[],
    model: string,
  ): Promise<Map<string, LockedTopicState>> {
    const result = new Map<string, LockedTopicState>()
    const sorted = [...new Map(chatbots.map((c) => [c.chatbotId, c])).values()].sort((a, b) =>
      a.chatbotId < b.chatbotId ? -1 : 1,
    )
    for (const { chatbotId, orgId } of sorted) {
      const lockRow = async () =>
        (
          await client.query<ModelRow>({
            name: 'cas-topic-models-lock',
            text: `SELECT model, token, seq::text, added_since_clustering, pool_size_at_clustering
               FROM topic_models WHERE chatbot_id = $1 FOR UPDATE`,
            values: [chatbotId],
          })
        ).rows[0]
      // The row exists but for a chatbot's first commit: locked in one statement, created only when
      // missing (a concurrent creator's insert is waited for, then locked as here).
      let row = await lockRow()
      if (!row) {
        await client.query({
          name: 'cas-topic-models-create',
          text: `INSERT INTO topic_models (chatbot_id, org_id, model, token) VALUES ($1, $2, $3, $4)
           ON CONFLICT (chatbot_id) DO NOTHING`,
          values: [chatbotId, orgId, model, randomUUID()],
        })
        row = (await lockRow())!
      }
      const cached = this.cache.get(chatbotId)
      this.cache.delete(chatbotId)
      let state: TopicState
      if (row.model !== model) {
        // Centroids of another embedding model mean nothing to this one: its topics start afresh (the old
        // ones stay in the read models, with the results that named them).
        await client.query('DELETE FROM topic_clusters WHERE chatbot_id = $1', [chatbotId])
        await client.query('DELETE FROM topic_pool WHERE chatbot_id = $1', [chatbotId])
        await client.query('DELETE FROM topic_window WHERE chatbot_id = $1', [chatbotId])
        await client.query('UPDATE topic_models SET model = $2 WHERE chatbot_id = $1', [chatbotId, model])
        state = emptyTopicState(chatbotId)
        state.seq = Number(row.seq)
      } else if (cached && cached.token === row.token) {
        state = cached.state
      } else {
        state = await read(client, chatbotId, row)
      }
      result.set(chatbotId, { chatbotId, state })
    }
    return result
  }

  /** Writes what the decision changed, and keeps the state cached under the row's new token. */
  async save(client: pg.ClientBase, locked: LockedTopicState, decision: TopicDecision): Promise<void> {
    const { chatbotId, state } = locked
    const topics = [...decision.changedTopics].map((id) => state.topics.get(id)!)
    if (topics.length > 0) {
      await client.query({
        name: 'cas-topic-clusters-upsert',
        text: `INSERT INTO topic_clusters AS t (chatbot_id, id, label, keywords, configured, merged_into, embedding_sum,
           size, terms, labelled_at_size, seq, spread_count, spread_sum, spread_squares, retired, pinned, hidden)
         SELECT $1, d.id, d.label, d.keywords, d.configured, d.merged_into, decode(d.embedding_sum, 'base64'),
                d.size, d.terms, d.labelled_at_size, d.seq, d.spread_count, d.spread_sum, d.spread_squares, d.retired,
                d.pinned, d.hidden
           FROM json_to_recordset($2::json) AS d(id uuid, label text, keywords text[], configured boolean,
                merged_into uuid, embedding_sum text, size int, terms jsonb, labelled_at_size int, seq bigint,
                spread_count int, spread_sum double precision, spread_squares double precision, retired boolean,
                pinned boolean, hidden boolean)
         ON CONFLICT (chatbot_id, id) DO UPDATE SET label = EXCLUDED.label, keywords = EXCLUDED.keywords,
           configured = EXCLUDED.configured, merged_into = EXCLUDED.merged_into, retired = EXCLUDED.retired,
           embedding_sum = EXCLUDED.embedding_sum, size = EXCLUDED.size, terms = EXCLUDED.terms,
           labelled_at_size = EXCLUDED.labelled_at_size, spread_count = EXCLUDED.spread_count,
           spread_sum = EXCLUDED.spread_sum, spread_squares = EXCLUDED.spread_squares, pinned = EXCLUDED.pinned,
           hidden = EXCLUDED.hidden`,
        values: [
          chatbotId,
          JSON.stringify(
            topics.map((t) => ({
              id: t.id,
              label: t.label,
              keywords: t.keywords,
              configured: t.configured,
              merged_into: t.mergedInto,
              embedding_sum: bytesOf(t.sum).toString('base64'),
              size: t.size,
              terms: Object.fromEntries(t.terms),
              labelled_at_size: t.labelledAtSize,
              seq: t.seq,
              spread_count: t.spread.count,
              spread_sum: t.spread.sum,
              spread_squares: t.spread.squares,
              retired: t.retired,
              pinned: t.pinned,
              hidden: t.hidden,
            })),
          ),
        ],
      })
    }
    const removed = [...decision.removedPool.values()]
    if (removed.length > 0) {
      await client.query({
        name: 'cas-topic-pool-delete',
        text: `DELETE FROM topic_pool WHERE chatbot_id = $1
           AND (conversation_id, message_id) IN (SELECT * FROM unnest($2::uuid[], $3::text[]))`,
        values: [chatbotId, removed.map((p) => p.conversationId), removed.map((p) => p.messageId)],
      })
    }
    const changed = [...decision.changedPool.values()]
    if (changed.length > 0) {
      await client.query({
        name: 'cas-topic-pool-upsert',
        text: `INSERT INTO topic_pool AS p (chatbot_id, conversation_id, message_id, embedding, terms, attached_to, seq)
         SELECT $1, d.conversation_id, d.message_id, decode(d.embedding, 'base64'), d.terms, d.attached_to, d.seq
           FROM json_to_recordset($2::json) AS d(conversation_id uuid, message_id text, embedding text,
                terms text[], attached_to text, seq bigint)
         ON CONFLICT (chatbot_id, conversation_id, message_id) DO UPDATE SET attached_to = EXCLUDED.attached_to`,
        values: [
          chatbotId,
          JSON.stringify(
            changed.map((p) => ({
              conversation_id: p.conversationId,
              message_id: p.messageId,
              embedding: bytesOf(p.embedding).toString('base64'),
              terms: p.terms,
              attached_to: p.attachedTo,
              seq: p.seq,
            })),
          ),
        ],
      })
    }
    const token = randomUUID()
    await client.query({
      name: 'cas-topic-models-save',
      text: `UPDATE topic_models SET token = $2, seq = $3, added_since_clustering = $4, pool_size_at_clustering = $5
        WHERE chatbot_id = $1`,
      values: [chatbotId, token, state.seq, state.addedSinceClustering, state.poolSizeAtClustering],
    })
    // Should the transaction fail after this, the row keeps its old token and the cached copy is not used.
    this.cache.set(chatbotId, { token, state })
    while (this.cache.size > this.maxCached) this.cache.delete(this.cache.keys().next().value!)
  }
}

async function read(client: pg.ClientBase, chatbotId: string, row: ModelRow): Promise<TopicState> {
  const state = emptyTopicState(chatbotId)
  state.seq = Number(row.seq)
  state.addedSinceClustering = row.added_since_clustering
  state.poolSizeAtClustering = row.pool_size_at_clustering
  const { rows: topics } = await client.query<{
    id: string
    label: string
    keywords: string[]
    configured: boolean
    merged_into: string | null
    embedding_sum: Buffer
    size: number
    terms: Record<string, number>
    labelled_at_size: number
    seq: string
    spread_count: number
    spread_sum: number
    spread_squares: number
    retired: boolean
    pinned: boolean
    hidden: boolean
  }>(
    `SELECT id, label, keywords, configured, merged_into, embedding_sum, size, terms, labelled_at_size, seq::text,
            spread_count, spread_sum, spread_squares, retired, pinned, hidden
       FROM topic_clusters WHERE chatbot_id = $1 ORDER BY topic_clusters.seq`,
    [chatbotId],
  )
  for (const t of topics) {
    const sum = vectorOf(t.embedding_sum)
    const topic: Topic = {
      id: t.id,
      label: t.label,
      keywords: t.keywords,
      configured: t.configured,
      mergedInto: t.merged_into,
      retired: t.retired,
      pinned: t.pinned,
      hidden: t.hidden,
      sum,
      centroid: normalized(sum),
      size: t.size,
      terms: new Map(Object.entries(t.terms)),
      labelledAtSize: t.labelled_at_size,
      spread: { count: t.spread_count, sum: t.spread_sum, squares: t.spread_squares },
      seq: Number(t.seq),
    }
    state.topics.set(topic.id, topic)
  }
  const { rows: pool } = await client.query<{
    conversation_id: string
    message_id: string
    embedding: Buffer
    terms: string[]
    attached_to: string
    seq: string
  }>(
    `SELECT conversation_id, message_id, embedding, terms, attached_to, seq::text
       FROM topic_pool WHERE chatbot_id = $1 ORDER BY topic_pool.seq`,
    [chatbotId],
  )
  state.pool = pool.map(
    (p): PoolPoint => ({
      conversationId: p.conversation_id,
      messageId: p.message_id,
      embedding: vectorOf(p.embedding),
      terms: p.terms,
      attachedTo: p.attached_to,
      seq: Number(p.seq),
    }),
  )
  return state
}

/** Embeddings are stored as their float32 bytes (this machine's byte order: little-endian everywhere we run). */
export function bytesOf(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength)
}

export function vectorOf(bytes: Buffer): Float32Array {
  // A copy: the driver's Buffer may not be aligned for a Float32Array view.
  const copy = new Uint8Array(bytes)
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4)
}

/** Removes a conversation's pooled and windowed messages (erasure): its chatbot's state changes, so its token does. */
export async function forgetPooledConversation(
  client: pg.ClientBase,
  chatbotId: string,
  conversationId: string,
): Promise<void> {
  // Under the chatbot's lock: a decision in progress must not write the messages back.
  await client.query('SELECT 1 FROM topic_models WHERE chatbot_id = $1 FOR UPDATE', [chatbotId])
  const window = await client.query(
    'DELETE FROM topic_window WHERE chatbot_id = $1 AND conversation_id = $2',
    [chatbotId, conversationId],
  )
  // Its topics' keywords and labels were made with its words: the next re-clustering remakes them.
  if (window.rowCount) {
    await client.query(
      'UPDATE topic_reclustering SET erasures_since_run = erasures_since_run + 1 WHERE chatbot_id = $1',
      [chatbotId],
    )
  }
  const { rowCount } = await client.query(
    'DELETE FROM topic_pool WHERE chatbot_id = $1 AND conversation_id = $2',
    [chatbotId, conversationId],
  )
  if (rowCount) {
    await client.query('UPDATE topic_models SET token = gen_random_uuid() WHERE chatbot_id = $1', [chatbotId])
  }
}

/** A stored result that changes topic: a new topic took it, or a re-clustering moved it. */
export interface ResultMove {
  readonly conversationId: string
  readonly messageId: string
  readonly topic: TopicRef
  /** The trace of what moved it, for the events that say so. */
  readonly metadata: Record<string, string>
}

/** One conversation's moved results, as an analysis.messages-analyzed event carries them. */
export interface MovedResults {
  readonly orgId: string
  readonly chatbotId: string
  readonly metadata: Record<string, string>
  readonly results: {
    readonly messageId: string
    readonly sentiment: MessageAnalysis['sentiment']
    readonly topics: TopicRef[]
  }[]
}

/**
 * Gives the moved messages' stored results their new topic, and returns them by conversation (the
 * metadata of a conversation's first move), for the caller's events: conversations change topic by
 * events, so that a replay applies the same. Messages gone meanwhile (erased) are left out. Both the
 * analysis worker (a new topic takes waiting messages) and the re-clustering job call it.
 */
export async function moveResults(
  client: pg.ClientBase,
  moves: readonly ResultMove[],
): Promise<Map<string, MovedResults>> {
  const moved = new Map<string, MovedResults>()
  if (moves.length === 0) return moved
  const { rows } = await client.query<{
    conversation_id: string
    message_id: string
    org_id: string
    chatbot_id: string
    score: number
    label: MessageAnalysis['sentiment']['label']
  }>(
    `UPDATE analysis_results r SET topics = ARRAY[m.topic_id], topic_labels = ARRAY[m.topic_label]
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS m(conversation_id, message_id, topic_id, topic_label)
      WHERE r.conversation_id = m.conversation_id AND r.message_id = m.message_id
      RETURNING r.conversation_id, r.message_id, r.org_id, r.chatbot_id, r.score, r.label`,
    [
      moves.map((m) => m.conversationId),
      moves.map((m) => m.messageId),
      moves.map((m) => m.topic.id),
      moves.map((m) => m.topic.label),
    ],
  )
  const moveOf = new Map(moves.map((m) => [`${m.conversationId}|${m.messageId}`, m]))
  for (const row of rows) {
    const move = moveOf.get(`${row.conversation_id}|${row.message_id}`)!
    let entry = moved.get(row.conversation_id)
    if (!entry) {
      entry = { orgId: row.org_id, chatbotId: row.chatbot_id, metadata: move.metadata, results: [] }
      moved.set(row.conversation_id, entry)
    }
    entry.results.push({
      messageId: row.message_id,
      sentiment: { score: row.score, label: row.label },
      topics: [move.topic],
    })
  }
  return moved
}
