/**
 * An analysed message's row and a topic's keep their embedding inline (migration 0040): written out of
 * line, each cost a failed compression attempt and a second row and index entry in the TOAST table.
 * Inline means the table's TOAST table is still empty after the row was written (each test writes its
 * table's first row): pg_column_toast_chunk_id would say it of the value, but only PostgreSQL 17+ has it.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { RESULTS_INSERT } from './job-runner.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

/** The size of `table`'s TOAST table, in bytes: 0 while no value of it was stored out of line. */
async function toastSize(table: string): Promise<number> {
  const { rows } = await db.pool.query<{ size: number }>(
    'SELECT pg_relation_size(reltoastrelid)::int AS size FROM pg_class WHERE oid = $1::regclass',
    [table],
  )
  return rows[0]!.size
}

/** Cues as large as a message's with a chatbot's own signals: about a kilobyte of JSON. */
const cues = JSON.stringify(
  Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [`cue-${i}`, { score: 0.123456789, margin: i / 7 }]),
  ),
)

it('keeps an analysed message’s embedding and cues in its row', async () => {
  expect(await toastSize('analysis_results')).toBe(0)
  const conversationId = randomUUID()
  await db.pool.query(
    `INSERT INTO analysis_results (conversation_id, message_id, org_id, chatbot_id, role, score, label, topics,
       analyzer, analyzed_at, cues, embedding)
     VALUES ($1, 'm-1', $2, $3, 'user', 0.1, 'neutral', '{}', 'test', now(), $4, $5)`,
    [conversationId, randomUUID(), randomUUID(), cues, randomBytes(384 * 4)],
  )
  const { rows } = await db.pool.query<{ size: number }>(
    'SELECT pg_column_size(r.*)::int AS size FROM analysis_results r WHERE conversation_id = $1',
    [conversationId],
  )
  // Past the default threshold (about 2 KB), so that the default would have moved it out of line.
  expect(rows[0]!.size).toBeGreaterThan(2100)
  expect(await toastSize('analysis_results')).toBe(0)
})

it('keeps a topic’s embedding sum and terms in its row', async () => {
  expect(await toastSize('topic_clusters')).toBe(0)
  const chatbotId = randomUUID()
  await db.pool.query(
    `INSERT INTO topic_models (chatbot_id, org_id, model, token) VALUES ($1, $2, 'test', $3)`,
    [chatbotId, randomUUID(), randomUUID()],
  )
  const terms = JSON.stringify(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`term${i}`, i + 1])))
  await db.pool.query(
    `INSERT INTO topic_clusters (chatbot_id, id, label, keywords, configured, embedding_sum, size, terms,
       labelled_at_size, seq)
     VALUES ($1, $2, 'a topic', '{a,topic}', false, $3, 12, $4, 12, 1)`,
    [chatbotId, randomUUID(), randomBytes(384 * 4), terms],
  )
  const { rows } = await db.pool.query<{ size: number }>(
    'SELECT pg_column_size(t.*)::int AS size FROM topic_clusters t WHERE chatbot_id = $1',
    [chatbotId],
  )
  expect(rows[0]!.size).toBeGreaterThan(2100)
  expect(await toastSize('topic_clusters')).toBe(0)
})

it('writes each result’s cues from the commit’s one JSON array, and none as NULL', async () => {
  const conversationId = randomUUID()
  const withCues = { social: -0.25, escalation: 0.5, question: true }
  const vector = new Float32Array(384).fill(0.5)
  const bytes = Buffer.from(vector.buffer)
  const params = (cues: unknown[]) => [
    'test@1',
    new Date(),
    [conversationId, conversationId, conversationId],
    ['m-1', 'm-2', 'm-3'],
    [randomUUID(), randomUUID(), randomUUID()],
    [randomUUID(), randomUUID(), randomUUID()],
    ['user', 'assistant', 'user'],
    [0.1, 0.2, 0.3],
    ['neutral', 'neutral', 'negative'],
    [JSON.stringify([{ id: 't', label: 'T' }]), '[]', '[]'],
    [null, null, null],
    [0, 1, 2],
    JSON.stringify(cues),
    [0, null, 0],
    bytes,
    bytes.length,
    [null, null, null],
    Buffer.alloc(0),
    0,
  ]
  await db.pool.query(RESULTS_INSERT, params([withCues, null, { social: 0.75 }]))
  const stored = async () =>
    (
      await db.pool.query<{ message_id: string; cues: unknown; topics: string[]; embedding: Buffer | null }>(
        `SELECT message_id, cues, topics, embedding FROM analysis_results WHERE conversation_id = $1
          ORDER BY message_id`,
        [conversationId],
      )
    ).rows
  expect((await stored()).map((r) => [r.message_id, r.cues, r.topics])).toEqual([
    ['m-1', withCues, ['t']],
    ['m-2', null, []],
    ['m-3', { social: 0.75 }, []],
  ])
  const { rows } = await db.pool.query<{ nulls: number }>(
    'SELECT count(*)::int AS nulls FROM analysis_results WHERE conversation_id = $1 AND cues IS NULL',
    [conversationId],
  )
  expect(rows[0]!.nulls).toBe(1)
  expect((await stored())[0]!.embedding).toEqual(bytes)
  // Analysed again: each row takes its own new cues.
  await db.pool.query(RESULTS_INSERT, params([null, { handover: 0.1 }, withCues]))
  expect((await stored()).map((r) => r.cues)).toEqual([null, { handover: 0.1 }, withCues])
})
