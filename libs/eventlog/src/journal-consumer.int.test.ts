/**
 * The journal consumer's partitions: every one has its checkpoint from the group's start, a group whose
 * partition count changed has them redrawn from the lowest, and a partition's batch holds at most
 * `maxBatchSize` events however many its read looked at.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { createEventConsumer } from './event-log.ts'
import { appendToStream } from './journal.ts'
import { alignCheckpoints, JOURNAL_TOPIC } from './journal-consumer.ts'
import { readJournal } from './journal-reader.ts'
import type { JournalRecord } from './records.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

async function checkpoints(groupId: string) {
  const { rows } = await db.pool.query<{ partition: number; last_offset: string }>(
    `SELECT partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2
      ORDER BY partition`,
    [groupId, JOURNAL_TOPIC],
  )
  return rows.map((r) => [r.partition, r.last_offset])
}

async function setCheckpoints(groupId: string, offsets: Record<number, number>) {
  for (const [partition, offset] of Object.entries(offsets)) {
    await db.pool.query(
      'INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, $3, $4)',
      [groupId, JOURNAL_TOPIC, Number(partition), offset],
    )
  }
}

describe('aligning a group’s journal checkpoints to its partition count', () => {
  it('gives a new group one checkpoint per partition, from the start of the journal', async () => {
    const groupId = `new-${randomUUID()}`
    await alignCheckpoints(db.pool, groupId, 3)
    expect(await checkpoints(groupId)).toEqual([
      [0, '-1'],
      [1, '-1'],
      [2, '-1'],
    ])
  })

  it('leaves the checkpoints of a group kept for the same count as they are', async () => {
    const groupId = `same-${randomUUID()}`
    await setCheckpoints(groupId, { 0: 500, 1: 700 })
    await alignCheckpoints(db.pool, groupId, 2)
    expect(await checkpoints(groupId)).toEqual([
      [0, '500'],
      [1, '700'],
    ])
  })

  it('redraws the checkpoints of another count, every partition from the lowest', async () => {
    const grown = `grown-${randomUUID()}`
    await setCheckpoints(grown, { 0: 900 })
    await alignCheckpoints(db.pool, grown, 4)
    expect(await checkpoints(grown)).toEqual([
      [0, '900'],
      [1, '900'],
      [2, '900'],
      [3, '900'],
    ])
    const shrunk = `shrunk-${randomUUID()}`
    await setCheckpoints(shrunk, { 0: 900, 1: 400, 2: 650 })
    await alignCheckpoints(db.pool, shrunk, 2)
    expect(await checkpoints(shrunk)).toEqual([
      [0, '400'],
      [1, '400'],
    ])
  })
})

describe('a journal read capped at maxRecords', () => {
  it('returns at most that many events and ends at the last one, so the next read goes on from there', async () => {
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
    )
    const head = rows[0]!.p
    const stream = randomUUID()
    await withTransaction(db.pool, (c) =>
      appendToStream(c, {
        streamType: 'conversation',
        streamId: stream,
        orgId: randomUUID(),
        chatbotId: randomUUID(),
        expectedVersion: 0,
        events: Array.from({ length: 5 }, (_, i) => ({ type: 'test.happened', version: 1, payload: { i } })),
      }),
    )
    // Transaction ids are cluster-wide: wait until every event is readable.
    await waitFor(async () => (await readJournal(db.pool, { after: head, limit: 100 })).records.length === 5)
    const first = await readJournal(db.pool, { after: head, limit: 100, maxRecords: 2 })
    expect(first.records.map((r) => r.streamVersion)).toEqual([1, 2])
    expect(first.scannedTo).toBe(first.records[1]!.position)
    const rest = await readJournal(db.pool, { after: first.scannedTo, limit: 100, maxRecords: 10 })
    expect(rest.records.map((r) => r.streamVersion)).toEqual([3, 4, 5])
    expect(rest.scannedTo).toBe(rest.records[2]!.position)
  })
})

describe('a consumer whose handler never appends', () => {
  /**
   * A consumer applying a batch held open by its handler, and an event committed meanwhile: whether
   * another reader (the relay, another group) reads that event before the batch ends.
   */
  async function readableWhileApplying(neverAppends: boolean) {
    const groupId = `held-${randomUUID()}`
    const append = (streamId: string) =>
      withTransaction(db.pool, (c) =>
        appendToStream(c, {
          streamType: 'conversation',
          streamId,
          orgId: randomUUID(),
          chatbotId: randomUUID(),
          expectedVersion: 0,
          events: [{ type: 'test.happened', version: 1, payload: {} }],
        }),
      )
    const { records } = await append(randomUUID())
    const first = records[0]!
    let entered!: () => void
    const applying = new Promise<void>((resolve) => {
      entered = resolve
    })
    let release!: () => void
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const consumer = createEventConsumer(
      { kind: 'journal', partitions: 1, pollIntervalMs: 5 },
      {
        pool: db.pool,
        groupId,
        streamTypes: ['conversation'],
        neverAppends,
        handler: async (batch: readonly JournalRecord[], client) => {
          // A write, as the read models are written, then held: the transaction runs on.
          await client.query('UPDATE consumer_checkpoints SET updated_at = now() WHERE group_id = $1', [
            groupId,
          ])
          if (batch.some((r) => r.id === first.id)) {
            entered()
            await released
          }
        },
      },
    )
    // Its checkpoint starts just before the first event: the first batch is that event.
    await db.pool.query(
      'INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, 0, $3)',
      [groupId, JOURNAL_TOPIC, (BigInt(first.position) - 1n).toString()],
    )
    await consumer.start()
    try {
      await applying
      const later = (await append(randomUUID())).records[0]!
      const sees = async () =>
        (await readJournal(db.pool, { after: first.position, limit: 1_000 })).records.some(
          (r) => r.id === later.id,
        )
      if (neverAppends) return await waitFor(sees, { what: 'the later event read' })
      // The later event is committed (its append returned) and the batch's transaction is still open.
      const whileApplying = await sees()
      // What held it back was that transaction: once the batch is applied, the same read sees it.
      release()
      await waitFor(sees, { what: 'the later event read once the batch is applied' })
      return whileApplying
    } finally {
      release()
      await consumer.stop()
    }
  }

  it('holds no journal reader back while it applies a batch; an unmarked one does', async () => {
    expect(await readableWhileApplying(true)).toBe(true)
    expect(await readableWhileApplying(false)).toBe(false)
  })
})
