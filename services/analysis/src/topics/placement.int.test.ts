/**
 * Finding the topics a batch's messages were given before reads those messages' results, not the table.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { rowsRead } from '../../../../test/support/plan-rows.ts'
import { PLACED_EARLIER } from './placement.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

it('reads the results of the batch’s messages only, however many the table holds', async () => {
  await db.pool.query(
    `INSERT INTO analysis_results
     SELECT gen_random_uuid(), 'm-' || i, gen_random_uuid(), gen_random_uuid(), 'user', 0.5, 'neutral',
            CASE WHEN i % 4 = 0 THEN '{}'::text[] ELSE ARRAY['topic-' || (i % 7), 'other'] END, 'test', now()
       FROM generate_series(1, 100000) i`,
  )
  await db.pool.query('ANALYZE analysis_results')
  // 600 messages analysed before (a quarter or so without a topic), 1,400 new ones.
  const before = (
    await db.pool.query<{ conversation_id: string; message_id: string; topics: string[] }>(
      'SELECT conversation_id, message_id, topics FROM analysis_results ORDER BY message_id LIMIT 600',
    )
  ).rows
  const asked = [
    ...before.map((r) => ({ conversationId: r.conversation_id, messageId: r.message_id })),
    ...Array.from({ length: 1400 }, (_, i) => ({ conversationId: randomUUID(), messageId: `m-${i}` })),
  ]
  const params = [asked.map((p) => p.conversationId), asked.map((p) => p.messageId)]
  const { rows } = await db.pool.query<{ conversation_id: string; message_id: string; topic: string }>(
    PLACED_EARLIER,
    params,
  )
  const withTopic = before.filter((r) => r.topics.length > 0)
  expect(withTopic.length).toBeGreaterThan(300)
  expect(withTopic.length).toBeLessThan(600)
  expect(new Map(rows.map((r) => [`${r.conversation_id}|${r.message_id}`, r.topic]))).toEqual(
    new Map(withTopic.map((r) => [`${r.conversation_id}|${r.message_id}`, r.topics[0]])),
  )
  expect(await rowsRead(db.pool, 'analysis_results', PLACED_EARLIER, params)).toBeLessThanOrEqual(
    asked.length,
  )
  // The control, which shows what the lookup avoids: joined plainly, the planner reads the table.
  const plainJoin = `SELECT r.conversation_id, r.message_id, r.topics[1] AS topic FROM analysis_results r
       JOIN unnest($1::uuid[], $2::text[]) AS p(conversation_id, message_id)
         ON r.conversation_id = p.conversation_id AND r.message_id = p.message_id
      WHERE cardinality(r.topics) > 0`
  expect(await rowsRead(db.pool, 'analysis_results', plainJoin, params)).toBeGreaterThanOrEqual(75000)
})
