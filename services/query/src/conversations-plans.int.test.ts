/**
 * A conversation's messages are found through rm_messages' primary key (conversation_id first) and sorted
 * by sentAt and arrival: no index holds that order (migration 0024). These reads must still touch only
 * the conversations asked for, in a table of many.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { rowsRead, scansOf } from '../../../test/support/plan-rows.ts'
import { CONVERSATION_MESSAGES, listConversationsQuery } from './repositories/conversations.ts'
import { TOPIC_EXCERPTS } from './repositories/topics.ts'

const ORG = randomUUID()
const CHATBOT = randomUUID()
let db: TestDatabase
let conversations: string[]
let crashing: string[]

beforeAll(async () => {
  db = await createTestDatabase()
  // 20,000 conversations of 10 messages. Message i was sent at minute (10 - i) / 3, rounded down, so
  // three share a minute and their arrival (i) orders them; the ids' own order (m-1, m-10, m-2, …) is
  // neither. Odd messages are the end user's, each on topic t-(i % 3).
  const { rows } = await db.pool.query<{ id: string }>(
    'SELECT gen_random_uuid() AS id FROM generate_series(1, 20000)',
  )
  conversations = rows.map((r) => r.id)
  await db.pool.query(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival,
       topics)
     SELECT c, 'm-' || i, $2, $3, CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END, 'message ' || i,
            timestamptz '2026-01-01T00:00:00Z' + ((10 - i) / 3) * interval '1 minute', i, ARRAY['t-' || (i % 3)]
       FROM unnest($1::uuid[]) AS c, generate_series(1, 10) AS i`,
    [conversations, ORG, CHATBOT],
  )
  // Their conversations, the last message of conversation n at minute n; in three of them (far apart in
  // that order) the end user's message 3 says the app crashed, crashes or kept crashing.
  await db.pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, message_count, first_message_at,
       last_message_at)
     SELECT c, $2, $3, 'c-' || n, 10, timestamptz '2026-01-01T00:00:00Z' + n * interval '1 minute',
            timestamptz '2026-01-01T00:00:00Z' + n * interval '1 minute'
       FROM unnest($1::uuid[]) WITH ORDINALITY AS x(c, n)`,
    [conversations, ORG, CHATBOT],
  )
  crashing = [conversations[100]!, conversations[10_000]!, conversations[19_000]!]
  await db.pool.query(
    `UPDATE rm_messages SET content = (ARRAY['the app crashed', 'it crashes', 'it keeps crashing'])[n]
      FROM unnest($1::uuid[]) WITH ORDINALITY AS x(c, n) WHERE conversation_id = x.c AND message_id = 'm-3'`,
    [crashing],
  )
  await db.pool.query('ANALYZE rm_messages, rm_conversations')
})
afterAll(() => db.drop())

it('reads one conversation’s messages in sentAt then arrival order, touching only its rows', async () => {
  const conversation = conversations[12_345]!
  const { rows } = await db.pool.query<{ message_id: string }>(CONVERSATION_MESSAGES, [conversation, ORG])
  expect(rows.map((r) => r.message_id)).toEqual([
    'm-8',
    'm-9',
    'm-10',
    'm-5',
    'm-6',
    'm-7',
    'm-2',
    'm-3',
    'm-4',
    'm-1',
  ])
  expect(await rowsRead(db.pool, 'rm_messages', CONVERSATION_MESSAGES, [conversation, ORG])).toBe(10)
  // The control: with the key out of reach of any index, the same read goes through the whole table.
  const unindexed = CONVERSATION_MESSAGES.replace('conversation_id = $1', 'conversation_id::text = $1::text')
  expect(await rowsRead(db.pool, 'rm_messages', unindexed, [conversation, ORG])).toBeGreaterThan(150_000)
})

it('finds each topic example’s first end-user message on the topic, touching only its conversation’s rows', async () => {
  const asked = [conversations[1]!, conversations[9_999]!, conversations[19_999]!]
  const params = [ORG, ['t-1', 't-2', 't-0'], asked]
  const { rows } = await db.pool.query<{ topic: string; conversation_id: string; content: string }>(
    TOPIC_EXCERPTS,
    params,
  )
  // User messages are the odd ones: on t-1 messages 1 and 7, on t-2 5, on t-0 3 and 9; the earliest sent.
  expect(new Map(rows.map((r) => [`${r.topic} ${r.conversation_id}`, r.content]))).toEqual(
    new Map([
      [`t-1 ${asked[0]}`, 'message 7'],
      [`t-2 ${asked[1]}`, 'message 5'],
      [`t-0 ${asked[2]}`, 'message 9'],
    ]),
  )
  expect(await rowsRead(db.pool, 'rm_messages', TOPIC_EXCERPTS, params)).toBeLessThanOrEqual(30)
})

it('searches the stored vector of stems, reaching messages through an index only', async () => {
  const { sql, params } = listConversationsQuery(ORG, { q: 'crash' }, 20)
  const { rows } = await db.pool.query<{ id: string }>(sql, params)
  expect(rows.map((r) => r.id)).toEqual([...crashing].reverse())
  // Either plan the planner may choose (the GIN index of rm_messages_search, or each conversation's
  // messages by the primary key) reads the stored column: no message's vector is computed at query time.
  const scans = await scansOf(db.pool, 'rm_messages', sql, params)
  expect(scans.length).toBeGreaterThan(0)
  for (const scan of scans) {
    expect(scan.type).not.toBe('Seq Scan')
    expect(scan.conditions).not.toContain('to_tsvector')
  }
  expect(scans.map((s) => s.conditions).join(' ')).toContain('content_search @@')
  // The control: an expression the index was not built on is computed for every message probed.
  const computed = sql.replace('m.content_search', "to_tsvector('english', coalesce(m.content, ''))")
  const computedScans = await scansOf(db.pool, 'rm_messages', computed, params)
  expect(computedScans.map((s) => s.conditions).join(' ')).toContain('to_tsvector')
  // A rare word is found through the GIN index when the planner expects few matches (nested loops off:
  // the planner's estimate for a word outside its statistics is 0.5 % of the messages at least).
  const client = await db.pool.connect()
  try {
    await client.query('SET enable_nestloop = off')
    const rare = await scansOf(client, 'rm_messages', sql, params)
    expect(rare.map((s) => s.index)).toContain('rm_messages_search')
    expect(await rowsRead(client, 'rm_messages', sql, params)).toBeLessThanOrEqual(3)
  } finally {
    await client.query('RESET enable_nestloop')
    client.release()
  }
})
