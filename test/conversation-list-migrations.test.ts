import { randomUUID } from 'node:crypto'
import { migrate } from '@cas/db'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabaseBefore, type TestDatabase } from './support/database.ts'

/**
 * Migrations 0026 (search by English stems) and 0027 (the conversation list's preview) on read models an
 * earlier version projected: the messages already there are searchable by stem, and their conversations
 * get the preview the projector would have given them (libs/views/src/preview.ts).
 */
const ORG = randomUUID()
const BOT = randomUUID()
const conversations = { greeted: randomUUID(), long: randomUUID(), silent: randomUUID() }
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabaseBefore('0026')
  await db.pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, message_count, first_message_at,
       last_message_at)
     SELECT id, $2, $3, external_id, 1, '2026-11-01T10:00:00Z', '2026-11-01T10:00:00Z'
       FROM unnest($1::uuid[], ARRAY['greeted', 'long', 'silent']) AS x(id, external_id)`,
    [[conversations.greeted, conversations.long, conversations.silent], ORG, BOT],
  )
  const message = (
    conversation: string,
    id: string,
    role: string,
    content: string,
    sentAt: string,
    arrival: number,
  ) =>
    db.pool.query(
      `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [conversation, id, ORG, BOT, role, content, sentAt, arrival],
    )
  await message(
    conversations.greeted,
    'a',
    'assistant',
    'Hello! How can I help?',
    '2026-11-01T10:00:00Z',
    1001,
  )
  await message(conversations.greeted, 'd', 'user', 'Later words', '2026-11-01T10:00:05Z', 1004)
  await message(conversations.greeted, 'b', 'user', '  \n ', '2026-11-01T10:00:01Z', 1002)
  // Two at one sentAt: the first to arrive is the first.
  await message(
    conversations.greeted,
    'z',
    'user',
    'The app\n\n  keeps crashing',
    '2026-11-01T10:00:02Z',
    1003,
  )
  await message(conversations.greeted, 'c', 'user', 'not this one', '2026-11-01T10:00:02Z', 2001)
  await message(conversations.long, 'a', 'user', `${'é'.repeat(170)}`, '2026-11-01T10:00:00Z', 3001)
  await message(
    conversations.silent,
    'a',
    'assistant',
    'I cancelled it for you',
    '2026-11-01T10:00:00Z',
    4001,
  )
  await migrate(db.url)
})
afterAll(async () => {
  await db?.drop()
})

it('gives the conversations projected before it their preview', async () => {
  const { rows } = await db.pool.query<{ external_id: string; preview: string | null }>(
    'SELECT external_id, preview FROM rm_conversations ORDER BY external_id',
  )
  expect(rows).toEqual([
    { external_id: 'greeted', preview: 'The app keeps crashing' },
    { external_id: 'long', preview: `${'é'.repeat(159)}…` },
    { external_id: 'silent', preview: null },
  ])
})

it('indexes the messages projected before it by their English stems', async () => {
  const found = async (q: string) =>
    (
      await db.pool.query<{ message_id: string; conversation_id: string }>(
        `SELECT conversation_id, message_id FROM rm_messages
          WHERE content_search @@ websearch_to_tsquery('english', $1) ORDER BY 1, 2`,
        [q],
      )
    ).rows.map(
      (r) =>
        `${Object.entries(conversations).find(([, id]) => id === r.conversation_id)![0]}/${r.message_id}`,
    )
  expect(await found('crash')).toEqual(['greeted/z'])
  expect(await found('cancel')).toEqual(['silent/a'])
})
