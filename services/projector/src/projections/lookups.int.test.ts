/**
 * The projector's reads and writes of stored rows find the batch's rows by their keys, not by reading
 * the table, whatever the table's statistics say (a small table's made the planner hash the batch's keys
 * and read every row, for every batch).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { rowsRead } from '../../../../test/support/plan-rows.ts'
import { CONVERSATIONS_UPDATE } from './conversations.ts'
import { MESSAGES_LOCK, UPSERT_RESULTS, UPSERT_RESULTS_PRE18 } from './messages.ts'

/** PostgreSQL 18's RETURNING OLD: before it, the stored rows are read by MESSAGES_LOCK (messages.ts). */
const returningOld = inject('postgresVersion') >= 180_000

let db: TestDatabase
const org = randomUUID()
const chatbot = randomUUID()
let conversations: string[] = []
beforeAll(async () => {
  db = await createTestDatabase()
  // 1,200 conversations of three messages, as DSTC11's analysis leaves them.
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, created_at, updated_at, preview)
     SELECT gen_random_uuid(), $1, $2, 'c-' || i, now(), now(), repeat('a word ', 12) FROM generate_series(1, 1200) i
     RETURNING id`,
    [org, chatbot],
  )
  conversations = rows.map((r) => r.id)
  await db.pool.query(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival, topics)
     SELECT c.id, 'm-' || n, $2, $3, 'user', repeat('a word ', 12), now(), n, '{}'
       FROM unnest($1::uuid[]) AS c(id), generate_series(1, 3) n`,
    [conversations, org, chatbot],
  )
  await db.pool.query('ANALYZE rm_conversations')
  await db.pool.query('ANALYZE rm_messages')
})
afterAll(() => db.drop())

/** rowsRead inside a transaction rolled back (the statements lock or write). */
async function readInTransaction(table: string, sql: string, params: unknown[]): Promise<number> {
  const client = await db.pool.connect()
  try {
    await client.query('BEGIN')
    return await rowsRead(client, table, sql, params)
  } finally {
    await client.query('ROLLBACK')
    client.release()
  }
}

it('upserts the batch’s results by a probe of each stored message, and reads the rows as they were', async () => {
  const keys = conversations.slice(0, 12).map((cid, i) => ({ cid, mid: `m-${(i % 3) + 1}` }))
  const results = JSON.stringify({
    conversation_id: keys.map((k) => k.cid),
    message_id: keys.map((k) => k.mid),
    org_id: keys.map(() => org),
    chatbot_id: keys.map(() => chatbot),
    role: keys.map(() => null),
    content: keys.map(() => null),
    sent_at: keys.map(() => null),
    arrival: keys.map(() => null),
    sentiment_score: keys.map(() => 0.5),
    sentiment_label: keys.map(() => 'positive'),
    topics: keys.map(() => '{"t-1"}'),
    analyzer: keys.map(() => 'test@1'),
  })
  const keyList = JSON.stringify(keys)
  // The rows as they were before the upsert: returned by it (RETURNING OLD), or read and locked first.
  const upsert = async () => {
    if (returningOld) return (await db.pool.query(UPSERT_RESULTS, [results])).rows
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      const { rows } = await client.query(MESSAGES_LOCK, [keyList])
      await client.query(UPSERT_RESULTS_PRE18, [results])
      await client.query('COMMIT')
      return rows
    } finally {
      client.release()
    }
  }
  if (returningOld) {
    expect(await readInTransaction('rm_messages', UPSERT_RESULTS, [results])).toBeLessThanOrEqual(keys.length)
  } else {
    expect(await readInTransaction('rm_messages', MESSAGES_LOCK, [keyList])).toBeLessThanOrEqual(keys.length)
    expect(await readInTransaction('rm_messages', UPSERT_RESULTS_PRE18, [results])).toBeLessThanOrEqual(
      keys.length,
    )
  }
  const first = await upsert()
  expect(first.map((r) => `${r.conversation_id}|${r.message_id}`).sort()).toEqual(
    keys.map((k) => `${k.cid}|${k.mid}`).sort(),
  )
  // As they were before it: no result yet, then the first upsert's.
  expect(first.every((r) => r.role === 'user' && r.sentiment_label === null)).toBe(true)
  const second = await upsert()
  expect(second.every((r) => r.sentiment_label === 'positive' && r.topics[0] === 't-1')).toBe(true)
})

it('updates the batch’s conversations found by their ids, not by reading the table', async () => {
  const changes = conversations
    .slice(0, 5)
    .map((id) => ({ id, org_id: org, chatbot_id: chatbot, message_count: 2 }))
  expect(
    await readInTransaction('rm_conversations', CONVERSATIONS_UPDATE, [JSON.stringify(changes)]),
  ).toBeLessThanOrEqual(changes.length)
  await db.pool.query(CONVERSATIONS_UPDATE, [JSON.stringify(changes)])
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM rm_conversations WHERE message_count = 2',
  )
  expect(rows[0]!.n).toBe(5)
})
