import { randomUUID } from 'node:crypto'
import { RetryableTransactionError, withTransaction } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import {
  type AppendRequest,
  appendToStream,
  appendToStreams,
  markNeverAppends,
  StreamVersionConflictError,
  streamVersion,
} from './journal.ts'
import { journalTotalLag } from './journal-consumer.ts'
import { readJournal } from './journal-reader.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

const ORG = randomUUID()
const CHATBOT = randomUUID()

function request(streamId: string, expectedVersion: AppendRequest['expectedVersion'], n = 1): AppendRequest {
  return {
    streamType: 'conversation',
    streamId,
    orgId: ORG,
    chatbotId: CHATBOT,
    expectedVersion,
    events: Array.from({ length: n }, (_, i) => ({ type: 'test.happened', version: 1, payload: { i } })),
  }
}

/** The newest position in the table, readable or not: everything after it belongs to the test. */
async function lastPosition() {
  const { rows } = await db.pool.query<{ p: string }>(
    'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
  )
  return rows[0]!.p
}

async function readAll(after = '0') {
  return (await readJournal(db.pool, { after, limit: 10_000 })).records
}

/**
 * Reads until `count` events of the stream are readable. Transaction ids are cluster-wide, so a reader
 * also waits for older transactions of other test files' databases to finish: wait, don't assume.
 */
async function readStream(streamId: string, count: number) {
  return waitFor(
    async () => {
      const events = (await readAll()).filter((e) => e.streamId === streamId)
      return events.length >= count && events
    },
    { what: `${count} events of ${streamId}` },
  )
}

describe('journal append', () => {
  it('appends to several streams in one call: each numbered on, positions in request order', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()]
    await withTransaction(db.pool, (client) => appendToStream(client, request(b, 0, 2)))
    const results = await withTransaction(db.pool, async (client) => {
      const first = await appendToStreams(client, [request(a, 0, 2), request(b, 2, 1)])
      // A second call in the same transaction continues after the first's positions.
      return [...first, ...(await appendToStreams(client, [request(c, 'no_stream', 3)]))]
    })
    expect(results.map((r) => r.streamVersion)).toEqual([2, 3, 3])
    expect(results[1]!.records.map((r) => r.streamVersion)).toEqual([3])
    const positions = results.flatMap((r) => r.records.map((e) => BigInt(e.position)))
    expect(positions).toEqual([...positions].sort((x, y) => (x < y ? -1 : 1)))
    expect(new Set(positions.map((p) => p >> 16n)).size).toBe(1)
    expect(await streamVersion(db.pool, 'conversation', b)).toBe(3)
    const read = await readStream(c, 3)
    expect(read.map((e) => e.position)).toEqual(results[2]!.records.map((e) => e.position))
  })

  it('appends to several streams all or nothing: one version conflict rolls every stream back', async () => {
    const [a, b] = [randomUUID(), randomUUID()]
    await withTransaction(db.pool, (client) => appendToStream(client, request(b, 0, 1)))
    const before = await lastPosition()
    await expect(
      withTransaction(db.pool, (client) => appendToStreams(client, [request(a, 0), request(b, 0)])),
    ).rejects.toBeInstanceOf(StreamVersionConflictError)
    expect(await streamVersion(db.pool, 'conversation', a)).toBe(0)
    expect(await streamVersion(db.pool, 'conversation', b)).toBe(1)
    expect(await lastPosition()).toBe(before)
    await expect(
      withTransaction(db.pool, (client) => appendToStreams(client, [request(a, 0), request(a, 'any')])),
    ).rejects.toThrow(/each stream once/)
  })

  it('numbers a stream 1, 2, 3… and gives increasing positions', async () => {
    const stream = randomUUID()
    await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 0, 2)))
    const result = await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 2, 1)))
    expect(result.streamVersion).toBe(3)
    const events = await readStream(stream, 3)
    expect(events.map((e) => e.streamVersion)).toEqual([1, 2, 3])
    const positions = events.map((e) => BigInt(e.position))
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions)
    expect(events[0]).toMatchObject({
      orgId: ORG,
      chatbotId: CHATBOT,
      streamType: 'conversation',
      payload: { i: 0 },
    })
  })

  it('refuses an append decided against a stale version, and stores nothing', async () => {
    const stream = randomUUID()
    await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 0)))
    await expect(
      withTransaction(db.pool, (c) => appendToStream(c, request(stream, 0))),
    ).rejects.toBeInstanceOf(StreamVersionConflictError)
    await expect(
      withTransaction(db.pool, (c) => appendToStream(c, request(stream, 'no_stream'))),
    ).rejects.toBeInstanceOf(StreamVersionConflictError)
    expect(await streamVersion(db.pool, 'conversation', stream)).toBe(1)
    expect(await readStream(stream, 1)).toHaveLength(1)
  })

  it('lets exactly one of many concurrent appends at the same expected version win', async () => {
    const stream = randomUUID()
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        withTransaction(db.pool, (c) => appendToStream(c, request(stream, 0))),
      ),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const rejected = results.filter((r) => r.status === 'rejected')
    expect(rejected.every((r) => r.reason instanceof StreamVersionConflictError)).toBe(true)
  })

  it("serialises concurrent 'any' appends to one stream without gaps or duplicates", async () => {
    const stream = randomUUID()
    // Twenty at once on one stream: an append that finds a later transaction ahead of it runs again with
    // a new transaction id, possibly several times on a busy machine; the default five retries are sized
    // for the service, where a conversation's captures take turns before reaching the journal.
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withTransaction(db.pool, (c) => appendToStream(c, request(stream, 'any', 3)), { retries: 50 }),
      ),
    )
    const events = await readStream(stream, 60)
    expect(events.map((e) => e.streamVersion)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1))
  })

  it('rolls the events back with the caller’s transaction', async () => {
    const stream = randomUUID()
    await expect(
      withTransaction(db.pool, async (c) => {
        await appendToStream(c, request(stream, 0))
        throw new Error('command failed after appending')
      }),
    ).rejects.toThrow('command failed')
    expect(await streamVersion(db.pool, 'conversation', stream)).toBe(0)
    const { rows } = await db.pool.query('SELECT 1 FROM event_journal WHERE stream_id = $1', [stream])
    expect(rows).toHaveLength(0)
  })

  // Regression guard for per-stream order: a transaction that got its id early must not append after a
  // later transaction's events on the same stream, or it would sort before events it has seen.
  it('refuses, retryably, to append behind a later transaction on the same stream', async () => {
    const stream = randomUUID()
    const early = await db.pool.connect()
    try {
      await early.query('BEGIN')
      await early.query('SELECT pg_current_xact_id()')
      await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 'any')))
      await expect(appendToStream(early, request(stream, 'any'))).rejects.toBeInstanceOf(
        RetryableTransactionError,
      )
      await early.query('ROLLBACK')
    } finally {
      early.release()
    }
    // Run again by withTransaction, the same append gets a fresh id and lands after.
    await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 'any')))
    const events = await readStream(stream, 2)
    expect(events.map((e) => e.streamVersion)).toEqual([1, 2])
  })
})

describe('journal read', () => {
  it('never passes a transaction still in flight, then delivers both in order once it commits', async () => {
    const [slowStream, fastStream] = [randomUUID(), randomUUID()]
    const head = await lastPosition()
    const slow = await db.pool.connect()
    try {
      await slow.query('BEGIN')
      await appendToStream(slow, request(slowStream, 0))
      // A later transaction commits first.
      await withTransaction(db.pool, (c) => appendToStream(c, request(fastStream, 0)))
      expect(await readAll(head)).toEqual([])
      await slow.query('COMMIT')
    } finally {
      slow.release()
    }
    const events = await waitFor(async () => {
      const read = await readAll(head)
      return read.length >= 2 && read
    })
    expect(events.map((e) => e.streamId)).toEqual([slowStream, fastStream])
  })

  it('passes a transaction marked as never appending while it runs, and refuses an append in it', async () => {
    const [refused, fast] = [randomUUID(), randomUUID()]
    const head = await lastPosition()
    const marked = await db.pool.connect()
    try {
      await marked.query('BEGIN')
      await markNeverAppends(marked)
      // It writes elsewhere, as a projector's batch does, and runs on while a later one commits.
      await marked.query(
        "INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, 'test', 0, -1)",
        [`marked-${randomUUID()}`],
      )
      await withTransaction(db.pool, (c) => appendToStream(c, request(fast, 0)))
      const read = await waitFor(async () => {
        const events = await readAll(head)
        return events.length > 0 && events
      })
      expect(read.map((e) => e.streamId)).toEqual([fast])
      // Its promise is kept: an append fails, and takes the transaction with it.
      await expect(appendToStream(marked, request(refused, 0))).rejects.toThrow(
        'this transaction was marked as never appending to the event journal',
      )
      await marked.query('ROLLBACK')
    } finally {
      marked.release()
    }
    expect(await streamVersion(db.pool, 'conversation', refused)).toBe(0)
    // A transaction of its own, unmarked, appends as ever.
    await withTransaction(db.pool, (c) => appendToStream(c, request(refused, 0)))
    expect((await readStream(refused, 1)).map((e) => e.streamVersion)).toEqual([1])
  })

  it('filters by stream type and still reports how far it scanned', async () => {
    const head = await lastPosition()
    const stream = randomUUID()
    await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 0, 3)))
    await readStream(stream, 3)
    const page = await readJournal(db.pool, { after: head, limit: 100, streamTypes: ['chatbot'] })
    expect(page.records).toEqual([])
    expect(BigInt(page.scannedTo)).toBeGreaterThan(BigInt(head))
    const all = await readAll(head)
    expect(page.scannedTo).toBe(all.at(-1)?.position)
  })
})

describe('journal backlog of a consumer group', () => {
  it('counts a virtual partition without a checkpoint as having passed nothing', async () => {
    const stream = randomUUID()
    await withTransaction(db.pool, (c) => appendToStream(c, request(stream, 0, 3)))
    const events = await readStream(stream, 3)
    const groupId = `backlog-${randomUUID()}`
    // Partition 1 of three has checkpointed past everything; 0 and 2 have not started.
    await db.pool.query(
      `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, '$journal', 1, $2)`,
      [groupId, events[2]!.position],
    )
    expect(await journalTotalLag(db.pool, groupId, 1)).toBe(0)
    const behind = await journalTotalLag(db.pool, groupId, 3)
    expect(behind).toBeGreaterThanOrEqual(3)
    await db.pool.query(
      `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset)
       VALUES ($1, '$journal', 0, $2), ($1, '$journal', 2, $2)`,
      [groupId, events[2]!.position],
    )
    expect(await journalTotalLag(db.pool, groupId, 3)).toBe(0)
  })
})
