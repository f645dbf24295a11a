/**
 * Batches applied at the same time (several partitions of one fetch, or several members) are ordered
 * by the projector's handler: a conversation's analysis waits for its erasure on the other topic and is
 * then dropped; a capture waits for its chatbot's deletion and is then dropped; batches of different
 * partitions do not wait for each other; two results for one message applied at once without the batch
 * order fold one after the other by the row's lock. Each case holds the first transaction open and runs
 * the second.
 */
import { randomUUID } from 'node:crypto'
import type { BatchSource, JournalRecord } from '@cas/eventlog'
import type { EventPayload, EventType } from '@cas/events'
import { dataKeyFor } from '@cas/keyring'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { analyzed, captured, started } from '../test/fold-test-support.ts'
import { sealedRecord } from '../test/sealed-record.ts'
import { projectorBatches } from './app.ts'
import type { ProjectionStats } from './projections/apply.ts'

let db: TestDatabase
const keys = new Map<string, { key: Buffer; orgId: string }>()
const stats: ProjectionStats = { applied: 0, dropped: {} }
const { orderBatch, handler } = projectorBatches('projector', testKeyring, stats)
let position = 1_000n

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

/** A chatbot of an organization of its own, whose rollup rows no other test's batch touches. */
async function newChatbot(): Promise<string> {
  const chatbotId = randomUUID()
  const orgId = randomUUID()
  keys.set(chatbotId, { key: await dataKeyFor(db.pool, testKeyring, chatbotId, orgId), orgId })
  return chatbotId
}

/** A journal record as the gateway or the analysis service appends it: sealed. */
function record<T extends EventType>(
  chatbotId: string,
  streamType: 'conversation' | 'analysis' | 'chatbot',
  streamId: string,
  streamVersion: number,
  type: T,
  payload: EventPayload<T>,
): JournalRecord {
  position += 65_536n
  const { key, orgId } = keys.get(chatbotId)!
  return sealedRecord({ key, orgId, chatbotId, streamType, streamId, streamVersion, position }, type, payload)
}

function capture(chatbotId: string, conversationId: string): JournalRecord[] {
  return [
    record(chatbotId, 'conversation', conversationId, 1, 'conversation.started', started({ id: 'u-1' })),
    record(
      chatbotId,
      'conversation',
      conversationId,
      2,
      'conversation.messages-captured',
      captured(['m-1', 'user', '2026-11-20T11:00:00.000Z'], ['m-2', 'assistant', '2026-11-20T11:00:01.000Z']),
    ),
  ]
}

/**
 * Applies a batch in a transaction of its own, left open until `commit` is called. `ordered: false`
 * applies it without the batch order's locks: what the rows' own locks alone keep consistent.
 */
async function openBatch(records: JournalRecord[], source: BatchSource, { ordered = true } = {}) {
  const client = await db.pool.connect()
  await client.query('BEGIN')
  let settled = false
  // As the consumer does (applyBatch): ordered first, then applied, in one transaction.
  const applied = (ordered ? orderBatch(records, client, [source]) : Promise.resolve())
    .then(() => handler(records, client, [source]))
    .finally(() => {
      settled = true
    })
  return {
    applied,
    get settled() {
      return settled
    },
    async commit() {
      await applied
      await client.query('COMMIT')
      client.release()
    },
  }
}

async function project(records: JournalRecord[], source: BatchSource) {
  await (await openBatch(records, source)).commit()
}

/** Resolves once a transaction of this database waits for a lock another holds (the second batch). */
const heldBack = () =>
  waitFor(
    async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE NOT l.granted AND a.datname = current_database()`,
        )
      ).rows[0]!.n > 0,
    { what: 'the second batch to wait for the first' },
  )

async function rows(table: string, column: string, id: string): Promise<unknown[]> {
  const { rows } = await db.pool.query(`SELECT * FROM ${table} WHERE ${column} = $1`, [id])
  return rows
}

const count = (client: pg.Pool, sql: string, id: string) =>
  client.query<{ n: number }>(sql, [id]).then((r) => r.rows[0]!.n)

describe('the projector orders batches applied at the same time', () => {
  it("applies a conversation's analysis after its erasure on the other topic, and drops it", async () => {
    const chatbotId = await newChatbot()
    const conversationId = randomUUID()
    await project(capture(chatbotId, conversationId), { topic: 'conversation', partition: 5 })
    expect(await rows('rm_messages', 'conversation_id', conversationId)).toHaveLength(2)

    const erasure = await openBatch(
      [
        record(chatbotId, 'conversation', conversationId, 3, 'conversation.erased', {
          reason: 'end-user-erasure',
        }),
      ],
      { topic: 'conversation', partition: 5 },
    )
    await erasure.applied
    const analysis = await openBatch(
      [
        record(
          chatbotId,
          'analysis',
          conversationId,
          1,
          'analysis.messages-analyzed',
          analyzed(['m-1', -0.8, 'negative', ['billing']], ['m-2', 0.1, 'neutral', []]),
        ),
      ],
      { topic: 'analysis', partition: 5 },
    )
    await heldBack()
    expect(analysis.settled, 'the analysis waited for the erasure').toBe(false)
    const droppedBefore = stats.dropped.conversation_erased ?? 0
    await erasure.commit()
    await analysis.commit()

    expect(await rows('rm_messages', 'conversation_id', conversationId)).toEqual([])
    expect(await rows('rm_conversations', 'id', conversationId)).toEqual([])
    expect(stats.dropped.conversation_erased).toBe(droppedBefore + 1)
  })

  it("applies a capture after its chatbot's deletion on another partition, and drops it", async () => {
    const chatbotId = await newChatbot()
    await project(capture(chatbotId, randomUUID()), { topic: 'conversation', partition: 1 })

    const deletion = await openBatch([record(chatbotId, 'chatbot', chatbotId, 2, 'chatbot.deleted', {})], {
      topic: 'chatbot',
      partition: 3,
    })
    await deletion.applied
    const later = randomUUID()
    const captureBatch = await openBatch(capture(chatbotId, later), { topic: 'conversation', partition: 2 })
    await heldBack()
    expect(captureBatch.settled, 'the capture waited for the deletion').toBe(false)
    await deletion.commit()
    await captureBatch.commit()

    expect(await rows('rm_conversations', 'chatbot_id', chatbotId)).toEqual([])
    expect(await rows('rm_messages', 'chatbot_id', chatbotId)).toEqual([])
    expect(
      await count(db.pool, 'SELECT count(*)::int AS n FROM rm_hourly_stats WHERE chatbot_id = $1', chatbotId),
    ).toBe(0)
  })

  it('does not make batches of different partitions wait for each other', async () => {
    // Two chatbots of two organizations: no rollup row in common either.
    const [a, b] = [await newChatbot(), await newChatbot()]
    const first = await openBatch(capture(a, randomUUID()), { topic: 'conversation', partition: 7 })
    await first.applied
    const second = await openBatch(capture(b, randomUUID()), { topic: 'conversation', partition: 8 })
    await second.applied
    expect(first.settled && second.settled).toBe(true)
    await second.commit()
    await first.commit()
    expect(await rows('rm_conversations', 'chatbot_id', a)).toHaveLength(1)
    expect(await rows('rm_conversations', 'chatbot_id', b)).toHaveLength(1)
  })

  it('folds a result against the one a concurrent batch wrote to the same message, by the row lock alone', async () => {
    // Without the batch order's partition lock: the rows' own lock (the upsert's) must hold back the
    // second result until the first commits, and the second must take the first back out of the rollups.
    const chatbotId = await newChatbot()
    const conversationId = randomUUID()
    await project(capture(chatbotId, conversationId), { topic: 'conversation', partition: 4 })
    const result = (version: number, score: number, label: 'positive' | 'negative') =>
      record(
        chatbotId,
        'analysis',
        conversationId,
        version,
        'analysis.messages-analyzed',
        analyzed(['m-1', score, label, [`t-${label}`]]),
      )
    const first = await openBatch(
      [result(1, 0.8, 'positive')],
      { topic: 'analysis', partition: 4 },
      { ordered: false },
    )
    await first.applied
    const second = await openBatch(
      [result(2, -0.6, 'negative')],
      { topic: 'analysis', partition: 4 },
      { ordered: false },
    )
    await heldBack()
    expect(second.settled, 'the second result waited for the first').toBe(false)
    await first.commit()
    await second.commit()

    const { rows: stats } = await db.pool.query(
      'SELECT sentiment_count, positive, negative, round(sentiment_sum::numeric, 6)::float8 AS sentiment_sum FROM rm_hourly_stats WHERE chatbot_id = $1',
      [chatbotId],
    )
    expect(stats).toEqual([{ sentiment_count: 1, positive: 0, negative: 1, sentiment_sum: -0.6 }])
    const { rows: topics } = await db.pool.query(
      'SELECT topic, messages FROM rm_hourly_topics WHERE chatbot_id = $1 AND messages <> 0 ORDER BY topic',
      [chatbotId],
    )
    expect(topics).toEqual([{ topic: 't-negative', messages: 1 }])
    const { rows: message } = await db.pool.query(
      "SELECT sentiment_label, topics FROM rm_messages WHERE conversation_id = $1 AND message_id = 'm-1'",
      [conversationId],
    )
    expect(message).toEqual([{ sentiment_label: 'negative', topics: ['t-negative'] }])
  })
})
