/**
 * The embeddings a conversation's signals compare (repetition), read back from the results: as bytes
 * (migration 0039), from the real[] of rows analysed before it, or as just written (not read back).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { bytesOf } from '../topics/topic-store.ts'
import { conversationMessages } from './store.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

it("reads each message's embedding as stored: bytes, an earlier real[], or the one just written", async () => {
  const conversation = randomUUID()
  const vector = (seed: number) => Float32Array.from({ length: 384 }, (_, i) => Math.sin(seed * 1000 + i) / 7)
  const [old, asBytes, written] = [vector(1), vector(2), vector(3)]
  const insert = (
    messageId: string,
    position: number,
    real: Float32Array | null,
    bytes: Float32Array | null,
  ) =>
    db.pool.query(
      `INSERT INTO analysis_results (conversation_id, message_id, org_id, chatbot_id, role, score, label, topics,
         analyzer, analyzed_at, sent_at, position, vector, embedding)
       VALUES ($1, $2, $3, $3, 'user', 0, 'neutral', '{}', 'test', now(), now(), $4, $5::real[], $6)`,
      [
        conversation,
        messageId,
        randomUUID(),
        position,
        real ? Array.from(real) : null,
        bytes ? bytesOf(bytes) : null,
      ],
    )
  await insert('m0', 0, old, null)
  await insert('m1', 1, null, asBytes)
  await insert('m2', 2, null, written)
  await insert('m3', 3, null, null)
  const justWritten = new Map([[`${conversation}|m2`, written]])
  const client = await db.pool.connect()
  const messages = await conversationMessages(client, [conversation], justWritten).finally(() =>
    client.release(),
  )
  const read = messages.get(conversation)!
  expect(read.map((m) => m.id)).toEqual(['m0', 'm1', 'm2', 'm3'])
  expect(read[0]!.vector).toEqual(old)
  expect(read[1]!.vector).toEqual(asBytes)
  expect(read[2]!.vector).toBe(written)
  expect(read[3]!.vector).toBeUndefined()
})
