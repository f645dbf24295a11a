/**
 * The topic store keeps each topic's spread (issue 31, migration 0028), and reads a topic stored before
 * there was one as a topic without a spread of its own: judged by the pooled spread of the others.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { poolClusters } from './agglomerative.ts'
import { decideTopics, type NewPoint, OTHER_TOPIC } from './topic-model.ts'
import { TopicStore } from './topic-store.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

const DIM = 8
function unit(k: number, noise = 0): Float32Array {
  const v = new Float32Array(DIM)
  v[k] = 1
  v[(k + 1) % DIM] = noise
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}

it('reads a topic stored before topics had a spread, and keeps the spread of those found since', async () => {
  const chatbotId = randomUUID()
  const orgId = randomUUID()
  const oldTopic = randomUUID()
  // As an earlier version left it: no spread columns written, a pooled message counted in its nearest topic.
  await db.pool.query(
    `INSERT INTO topic_models (chatbot_id, org_id, model, token, seq) VALUES ($1, $2, 'm', $3, 2)`,
    [chatbotId, orgId, randomUUID()],
  )
  const sum = Buffer.from(new Float32Array([3, 0, 0, 0, 0, 0, 0, 0]).buffer)
  await db.pool.query(
    `INSERT INTO topic_clusters (chatbot_id, id, label, keywords, configured, merged_into, embedding_sum, size,
       terms, labelled_at_size, seq)
     VALUES ($1, $2, 'old', '{old}', false, NULL, $3, 3, '{"old": 3}', 3, 0)`,
    [chatbotId, oldTopic, sum],
  )
  const waitingConversation = randomUUID()
  await db.pool.query(
    `INSERT INTO topic_pool (chatbot_id, conversation_id, message_id, embedding, terms, attached_to, seq)
     VALUES ($1, $2, 'q', $3, '{near}', $4, 1)`,
    [chatbotId, waitingConversation, Buffer.from(unit(0, 2).buffer), oldTopic],
  )

  const client = await db.pool.connect()
  try {
    await client.query('BEGIN')
    const store = new TopicStore()
    const locked = (await store.lock(client, [{ chatbotId, orgId }], 'm')).get(chatbotId)!
    expect(locked.state.topics.get(oldTopic)!.spread).toEqual({ count: 0, sum: 0, squares: 0 })
    // Two new requests, three messages each: a topic with a spread of its own, the old one's pooled.
    const points: NewPoint[] = [3, 5].flatMap((k) =>
      [0, 0.1, 0.2].map((noise) => ({
        conversationId: randomUUID(),
        messageId: 'q',
        embedding: unit(k, noise),
        terms: [`word${k}`],
        text: '',
      })),
    )
    let next = 0
    const decision = await decideTopics(locked.state, points, [], {
      newId: () => `00000000-0000-4000-8000-${String(next++).padStart(12, '0')}`,
      cluster: async (vectors, references) => poolClusters(vectors, references),
    })
    await store.save(client, locked, decision)
    await client.query('COMMIT')

    const fresh = (await new TopicStore().lock(client, [{ chatbotId, orgId }], 'm')).get(chatbotId)!.state
    const found = [...fresh.topics.values()].filter((t) => t.id !== oldTopic)
    expect(found.length).toBeGreaterThan(0)
    for (const t of found) {
      expect(t.spread).toEqual(locked.state.topics.get(t.id)!.spread)
      expect(t.spread.count).toBeGreaterThanOrEqual(3)
    }
    // The message an earlier version counted in its nearest topic counts in "other" once the pool is clustered.
    const waiting = fresh.pool.find((p) => p.conversationId === waitingConversation)
    expect(waiting?.attachedTo ?? OTHER_TOPIC).toBe(OTHER_TOPIC)
    expect(decision.reassigned).toContainEqual({
      conversationId: waitingConversation,
      messageId: 'q',
      topicId: OTHER_TOPIC,
    })
  } finally {
    client.release()
  }
})

// Regression: every commit ran the row's INSERT … ON CONFLICT DO NOTHING before locking it, a statement
// that did nothing but for a chatbot's first commit.
it('creates a chatbot’s state row at its first lock, and locks it in one statement after', async () => {
  const chatbotId = randomUUID()
  const orgId = randomUUID()
  const store = new TopicStore()
  const client = await db.pool.connect()
  const statements: string[] = []
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const counted = Object.assign(Object.create(client), {
    query: (...args: unknown[]) => {
      const first = args[0] as string | { text: string }
      statements.push(typeof first === 'string' ? first : first.text)
      return query(...args)
    },
  })
  try {
    for (let commit = 0; commit < 2; commit++) {
      await client.query('BEGIN')
      const locked = (await store.lock(counted, [{ chatbotId, orgId }], 'm')).get(chatbotId)!
      expect(locked.state.topics.size).toBe(0)
      await store.save(counted, locked, {
        assigned: new Map(),
        reassigned: [],
        events: [],
        changedTopics: new Set(),
        changedPool: new Map(),
        removedPool: new Map(),
      })
      await client.query('COMMIT')
    }
  } finally {
    client.release()
  }
  const reads = statements.filter((s) => s.includes('FROM topic_models'))
  const creates = statements.filter((s) => s.includes('INSERT INTO topic_models'))
  // First commit: looked for, created, locked; second: locked.
  expect({ reads: reads.length, creates: creates.length }).toEqual({ reads: 3, creates: 1 })
  const { rows } = await db.pool.query('SELECT org_id, model FROM topic_models WHERE chatbot_id = $1', [
    chatbotId,
  ])
  expect(rows).toEqual([{ org_id: orgId, model: 'm' }])
})
