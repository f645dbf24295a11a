import { randomUUID } from 'node:crypto'
import { migrate } from '@cas/db'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabaseBefore, type TestDatabase } from './support/database.ts'

/**
 * Migration 0065 on an audit log an earlier version wrote: the topic commands of a chatbot deleted before it
 * lose the labels and examples they named (as deleting a chatbot now scrubs them), keeping their topic ids;
 * a live chatbot's keep theirs.
 */
const ORG = randomUUID()
const DELETED = randomUUID()
const LIVE = randomUUID()
const TOPIC = randomUUID()
let db: TestDatabase

const created = {
  topicId: TOPIC,
  label: 'Gribblenox claims',
  examples: ['my gribblenox claim', 'gribblenox?'],
}
const renamed = { topicId: TOPIC, label: 'Pottersby refunds', previousLabel: 'refund, pottersby' }

beforeAll(async () => {
  db = await createTestDatabaseBefore('0065')
  await db.pool.query(`INSERT INTO organizations (id, name, created_at) VALUES ($1, 'Acme', now())`, [ORG])
  await db.pool.query(
    `INSERT INTO chatbot_data_keys (chatbot_id, org_id, wrapped_key, master_key_id, destroyed_at)
     VALUES ($1, $3, NULL, NULL, now()), ($2, $3, '\\x00', 'k', NULL)`,
    [DELETED, LIVE, ORG],
  )
  let position = 0
  for (const bot of [DELETED, LIVE])
    for (const [action, details] of [
      ['chatbot.topic-creation-requested', created],
      ['chatbot.topic-rename-requested', renamed],
      ['chatbot.topic-merge-requested', { topicId: TOPIC, into: randomUUID() }],
    ] as const)
      await db.pool.query(
        `INSERT INTO audit_log (event_id, org_id, position, occurred_at, action, target_type, target_id,
                                target_name, details)
         VALUES ($1, $2, $3, now(), $4, 'chatbot', $5, 'Bot', $6)`,
        [randomUUID(), ORG, ++position, action, bot, JSON.stringify(details)],
      )
  await migrate(db.url)
})
afterAll(async () => {
  await db?.drop()
})

it("scrubs the topic words from a deleted chatbot's entries, keeps their topic ids, and leaves a live chatbot's", async () => {
  const { rows } = await db.pool.query<{
    target_id: string
    action: string
    details: Record<string, unknown>
  }>('SELECT target_id, action, details FROM audit_log ORDER BY position')
  const of = (bot: string) => rows.filter((r) => r.target_id === bot).map((r) => [r.action, r.details])
  expect(of(DELETED)).toEqual([
    ['chatbot.topic-creation-requested', { topicId: TOPIC }],
    ['chatbot.topic-rename-requested', { topicId: TOPIC }],
    ['chatbot.topic-merge-requested', { topicId: TOPIC, into: expect.any(String) }],
  ])
  expect(of(LIVE)).toEqual([
    ['chatbot.topic-creation-requested', created],
    ['chatbot.topic-rename-requested', renamed],
    ['chatbot.topic-merge-requested', { topicId: TOPIC, into: expect.any(String) }],
  ])
})
