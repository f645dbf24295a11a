/**
 * The journal consumer's partitions: every one has its checkpoint from the group's start, a group whose
 * partition count changed has them redrawn from the lowest, and a partition's batch holds at most
 * `maxBatchSize` events however many its read looked at. A read of few events over several partitions is
 * applied in one transaction, and one bad event among them holds no other partition back.
 */
import { randomUUID } from 'node:crypto'
import { advisoryLockKey, createPool, withTransaction } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import type { BatchHandler } from './apply-batch.ts'
import type { ConsumerOptions } from './consumer.ts'
import { createEventConsumer } from './event-log.ts'
import { appendToStream, appendToStreams } from './journal.ts'
import {
  alignCheckpoints,
  createJournalConsumer,
  IDLE_POLLS_BEFORE_BACKOFF,
  JOURNAL_TOPIC,
} from './journal-consumer.ts'
import { readJournal } from './journal-reader.ts'
import type { JournalRecord } from './records.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

/** Appends one event to a new stream of its own (a conversation's, unless said). */
function appendOne(streamType: 'analysis' | 'conversation' = 'conversation') {
  return withTransaction(db.pool, (c) =>
    appendToStream(c, {
      streamType,
      streamId: randomUUID(),
      orgId: randomUUID(),
      chatbotId: randomUUID(),
      expectedVersion: 0,
      events: [{ type: 'test.happened', version: 1, payload: {} }],
    }),
  )
}

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
    const { records } = await appendOne()
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
      const later = (await appendOne()).records[0]!
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

describe('a read of few events over several partitions', () => {
  const PARTITIONS = 4

  /** A stream id in each of `count` different partitions of PARTITIONS (journal-reader.ts partitionExpression). */
  async function streamsInPartitions(count: number): Promise<{ streamId: string; partition: number }[]> {
    const found = new Map<number, string>()
    while (found.size < count) {
      const streamId = randomUUID()
      const { rows } = await db.pool.query<{ p: number }>(
        'SELECT (abs(hashtext($1::uuid::text)::bigint) % $2)::int AS p',
        [streamId, PARTITIONS],
      )
      if (!found.has(rows[0]!.p)) found.set(rows[0]!.p, streamId)
    }
    return [...found].map(([partition, streamId]) => ({ streamId, partition }))
  }

  /** Three events on each stream, all committed in one transaction (so read at once); their ids by stream. */
  async function appendEach(streams: readonly { streamId: string }[]): Promise<Map<string, string[]>> {
    const appended = await withTransaction(db.pool, (c) =>
      appendToStreams(
        c,
        streams.map(({ streamId }) => ({
          streamType: 'conversation' as const,
          streamId,
          orgId: randomUUID(),
          chatbotId: randomUUID(),
          expectedVersion: 0,
          events: Array.from({ length: 3 }, (_, i) => ({
            type: 'test.happened',
            version: 1,
            payload: { i },
          })),
        })),
      ),
    )
    const ids = new Map<string, string[]>()
    for (const r of appended.flatMap((a) => a.records))
      ids.set(r.streamId, [...(ids.get(r.streamId) ?? []), r.id])
    return ids
  }

  /** A consumer of the conversation streams from just before the journal's current end. */
  async function startConsumer(handler: BatchHandler, extra: Partial<ConsumerOptions> = {}) {
    const groupId = `few-${randomUUID()}`
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
    )
    await setCheckpoints(
      groupId,
      Object.fromEntries(Array.from({ length: PARTITIONS }, (_, p) => [p, Number(rows[0]!.p)])),
    )
    const applied: JournalRecord[] = []
    const consumer = createEventConsumer(
      { kind: 'journal', partitions: PARTITIONS, pollIntervalMs: 5 },
      {
        pool: db.pool,
        groupId,
        streamTypes: ['conversation'],
        handler,
        onApplied: (records) => applied.push(...records),
        ...extra,
      },
    )
    await consumer.start()
    return { groupId, consumer, applied }
  }

  it('applies them in one transaction, each stream in order, every checkpoint moved', async () => {
    const streams = await streamsInPartitions(3)
    const calls: { sources: number[]; ids: string[] }[] = []
    const { groupId, consumer, applied } = await startConsumer(async (records, _client, sources) => {
      calls.push({ sources: sources.map((s) => s.partition), ids: records.map((r) => r.id) })
    })
    try {
      const ids = await appendEach(streams)
      await waitFor(async () => applied.length === 9, { what: 'the nine events applied' })
      // One handler call, in one transaction, for the three partitions.
      const withEvents = calls.filter((c) => c.ids.length > 0)
      expect(withEvents).toHaveLength(1)
      expect(withEvents[0]!.sources).toEqual(streams.map((s) => s.partition).sort((a, b) => a - b))
      for (const { streamId } of streams) {
        expect(withEvents[0]!.ids.filter((id) => ids.get(streamId)!.includes(id))).toEqual(ids.get(streamId))
      }
      const last = applied
        .map((r) => BigInt(r.position))
        .sort((a, b) => (a < b ? -1 : 1))
        .at(-1)!
      for (const [, offset] of await checkpoints(groupId))
        expect(BigInt(offset!)).toBeGreaterThanOrEqual(last)
    } finally {
      await consumer.stop()
    }
  })

  it('with a bad event among them, applies the other partitions’ events and sets the bad one aside', async () => {
    const streams = await streamsInPartitions(3)
    // The second event of the first stream: its partition's first event is good, its third too.
    const isBad = (r: JournalRecord) => r.streamId === streams[0]!.streamId && r.streamVersion === 2
    const { groupId, consumer, applied } = await startConsumer(
      async (records) => {
        if (records.some(isBad)) throw new Error('this event cannot be applied')
      },
      { maxAttempts: 2, log: () => {} },
    )
    try {
      const ids = await appendEach(streams)
      const bad = ids.get(streams[0]!.streamId)![1]!
      await waitFor(async () => applied.length === 8, { what: 'the eight good events applied' })
      const good = [...ids.values()].flat().filter((id) => id !== bad)
      expect(applied.map((r) => r.id).sort()).toEqual(good.sort())
      expect(consumer.stats.deadLettered).toBe(1)
      const { rows } = await db.pool.query<{ event_id: string }>(
        'SELECT event_id::text FROM dead_letters WHERE group_id = $1',
        [groupId],
      )
      expect(rows.map((r) => r.event_id)).toEqual([bad])
    } finally {
      await consumer.stop()
    }
  })
})

describe('a consumer started and stopped again on one pool', () => {
  it('leaves no error listener behind on the pooled connections', async () => {
    // The error listeners on a connection of a fresh pool, as lent out.
    const fresh = createPool(db.url, { max: 2 })
    const own = await fresh.connect()
    const baseline = own.listenerCount('error')
    own.release()
    await fresh.end()

    const pool = createPool(db.url, { max: 2 })
    try {
      for (let i = 0; i < 12; i++) {
        const consumer = createEventConsumer(
          { kind: 'journal', partitions: 1, pollIntervalMs: 5 },
          {
            pool,
            groupId: `restarted-${randomUUID()}`,
            streamTypes: ['conversation'],
            handler: async () => {},
          },
        )
        await consumer.start()
        await consumer.stop()
      }
      // Both connections at once, whichever held the consumer's lock: each as a fresh one. Given back
      // before the assertion: a failed one must not leave them lent out, or pool.end() below waits for
      // them forever (which is how this test hung, rather than failed, on the code it pins).
      const a = await pool.connect()
      const b = await pool.connect()
      const listeners = [a.listenerCount('error'), b.listenerCount('error')]
      a.release()
      b.release()
      expect(listeners).toEqual([baseline, baseline])
    } finally {
      await pool.end()
    }
  })
})

describe('a consumer stopped while it starts', () => {
  it('gives its lock connection back and holds no lock of its group once both are done', async () => {
    // Regression: stop() during start() found no lock connection yet and returned; the start then took
    // one, with the group's member and partition locks, and kept it lent out for good (a rebuild whose
    // other replay consumer failed to start stops them all so: its next round could own no partition,
    // and pool.end() at shutdown waited forever).
    const pool = createPool(db.url, { max: 2 })
    const groupId = `stopped-starting-${randomUUID()}`
    const consumer = createEventConsumer(
      { kind: 'journal', partitions: 2, pollIntervalMs: 5 },
      { pool, groupId, streamTypes: ['conversation'], handler: async () => {} },
    )
    try {
      const starting = consumer.start()
      await consumer.stop()
      await starting
      const lentOut = pool.totalCount - pool.idleCount
      const { rows } = await db.pool.query<{ locks: number }>(
        `SELECT count(*)::int AS locks FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid`,
        [advisoryLockKey(`journal-consumer:${groupId}`)],
      )
      expect({ lentOut, locks: rows[0]!.locks }).toEqual({ lentOut: 0, locks: 0 })
    } finally {
      // Gives back what a start after the stop kept (the code this pins), so that pool.end() returns.
      await consumer.stop()
      await pool.end()
    }
  })
})

// Regression: a read that held only other stream types' events counted as work, so admit was asked after
// each (the analysis consumer counted the open jobs after every analysis commit, its own results).
describe('a consumer with back-pressure reading past other stream types’ events', () => {
  it('asks admit again only after a read that applied events', async () => {
    const groupId = `admit-${randomUUID()}`
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
    )
    await setCheckpoints(groupId, { 0: Number(rows[0]!.p) })
    let asked = 0
    const applied: JournalRecord[] = []
    const consumer = createEventConsumer(
      { kind: 'journal', partitions: 1, pollIntervalMs: 5 },
      {
        pool: db.pool,
        groupId,
        streamTypes: ['conversation'],
        admit: async () => {
          asked++
          return true
        },
        handler: async () => {},
        onApplied: (records) => applied.push(...records),
      },
    )
    const passed = async (position: string) =>
      BigInt((await checkpoints(groupId))[0]![1]!) >= BigInt(position)
    await consumer.start()
    try {
      await waitFor(async () => asked === 1, { what: 'admit asked at start' })
      // Ten reads, each of one event of another stream type, each moved past before the next.
      for (let i = 0; i < 10; i++) {
        const { records } = await appendOne('analysis')
        await waitFor(() => passed(records[0]!.position), { what: 'the checkpoint past the event' })
      }
      expect(asked).toBe(1)
      const { records } = await appendOne('conversation')
      await waitFor(async () => applied.some((r) => r.id === records[0]!.id), { what: 'the event applied' })
      await waitFor(async () => asked === 2, { what: 'admit asked after the applied read' })
    } finally {
      await consumer.stop()
    }
  })
})

describe('a consumer whose start fails after it took its lock connection', () => {
  it('gives the connection and its locks back, and a start asked for again starts afresh', async () => {
    // Regression: a start that failed after it took the lock connection (a statement of its first
    // rebalance refused) kept the connection lent out with the group's member lock, and stayed "running":
    // a start asked for again returned at once and started nothing, and pool.end() waited forever.
    // The failure: the pool's sessions run as a role that may not take a partition's lock
    // (pg_try_advisory_lock revoked from PUBLIC in this test's database), a real error on a live connection.
    const role = `cas_test_no_partition_lock_${randomUUID().slice(0, 8)}`
    const tryLock = 'FUNCTION pg_try_advisory_lock(integer, integer)'
    await db.pool.query(`CREATE ROLE ${role}`)
    await db.pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON consumer_checkpoints TO ${role}`)
    await db.pool.query(`REVOKE EXECUTE ON ${tryLock} FROM PUBLIC`)
    const pool = createPool(db.url, { max: 2 })
    let refused = true
    // Queued ahead of the borrower's first statement, each time a connection is lent.
    pool.on('acquire', (client) => {
      client.query(refused ? `SET ROLE ${role}` : 'RESET ROLE').catch(() => {})
    })
    const groupId = `failed-start-${randomUUID()}`
    const applied: JournalRecord[] = []
    const consumer = createEventConsumer(
      { kind: 'journal', partitions: 2, pollIntervalMs: 5 },
      {
        pool,
        groupId,
        streamTypes: ['conversation'],
        handler: async (records) => {
          applied.push(...records)
        },
      },
    )
    try {
      await expect(consumer.start()).rejects.toThrow(/permission denied for function pg_try_advisory_lock/)
      const lentOut = pool.totalCount - pool.idleCount
      const { rows } = await db.pool.query<{ locks: number }>(
        `SELECT count(*)::int AS locks FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid`,
        [advisoryLockKey(`journal-consumer:${groupId}`)],
      )
      expect({ lentOut, locks: rows[0]!.locks }).toEqual({ lentOut: 0, locks: 0 })

      refused = false
      await db.pool.query(`GRANT EXECUTE ON ${tryLock} TO PUBLIC`)
      const { records } = await appendOne()
      await consumer.start()
      await waitFor(() => applied.some((r) => r.id === records[0]!.id), {
        what: 'the event applied by the consumer started again',
        timeoutMs: 10_000,
      })
    } finally {
      await consumer.stop()
      await pool.end()
      await db.pool.query(`GRANT EXECUTE ON ${tryLock} TO PUBLIC`)
      await db.pool.query(`DROP OWNED BY ${role}`)
      await db.pool.query(`DROP ROLE ${role}`)
    }
  })
})

describe('a consumer with nothing to read', () => {
  it('looks less often the longer it stays idle, and at once at the short interval after an applied read', async () => {
    // Every journal consumer looked every 20 ms however long it stayed idle: 85–107 reads a second.
    const groupId = `idle-${randomUUID()}`
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
    )
    await setCheckpoints(groupId, { 0: Number(rows[0]!.p) })
    const waits: number[] = []
    const applied: JournalRecord[] = []
    // The index in `waits` of the wait after the last read that applied something.
    let waitAfterApplied = -1
    const consumer = createJournalConsumer({
      pool: db.pool,
      groupId,
      partitions: 1,
      pollIntervalMs: 5,
      maxIdlePollIntervalMs: 40,
      streamTypes: ['conversation'],
      handler: async () => {},
      onApplied: (records) => {
        applied.push(...records)
        waitAfterApplied = waits.length
      },
      sleep: (ms, waiter) => {
        waits.push(ms)
        return waiter.sleep(ms)
      },
    })
    await consumer.start()
    try {
      // Idle, and another stream type's events read past: neither is something applied.
      await appendOne('analysis')
      await waitFor(async () => waits.filter((ms) => ms === 40).length >= 3, { what: 'the longest wait' })
      const idle = [...waits]
      // The read past the analysis event counts as a look that applied nothing, without a wait of its own.
      const short = idle.filter((ms) => ms === 5).length
      expect(short).toBeGreaterThanOrEqual(IDLE_POLLS_BEFORE_BACKOFF - 1)
      expect(short).toBeLessThanOrEqual(IDLE_POLLS_BEFORE_BACKOFF)
      // The analysis event is read once every transaction of the cluster begun before it has ended: on a busy
      // server, after the first long wait at times (CI, 2026-12-04). That read is a look without a wait of its
      // own, so the wait after it is the one after next.
      const backoff = idle.slice(short, short + 3)
      if (short === IDLE_POLLS_BEFORE_BACKOFF - 1) expect(backoff).toEqual([10, 20, 40])
      else
        expect([
          [10, 20, 40],
          [10, 40, 40],
        ]).toContainEqual(backoff)
      expect(idle.every((ms, i) => i === 0 || ms >= idle[i - 1]!)).toBe(true)
      const { records } = await appendOne('conversation')
      await waitFor(async () => applied.some((r) => r.id === records[0]!.id), { what: 'the event applied' })
      // The read that applied it may come after more than one long wait (the event is read once the transactions
      // before it have ended, which on a busy server can take more than one look); the wait after it is short.
      const at = waitAfterApplied
      // The wait the event came in was the longest, idle one; the wait after the read that applied it is short.
      expect(waits[at - 1]).toBe(40)
      await waitFor(async () => waits.length > at, { what: 'a wait after the applied read' })
      expect(waits[at]).toBe(5)
    } finally {
      await consumer.stop()
    }
  })
})

describe('a consumer looking at the journal', () => {
  it('sends one statement a look: its checkpoints are read within the journal read', async () => {
    // perf7: every look read the group's lowest checkpoint in a statement of its own before the journal
    // read, two round trips a look, idle looks included (DSTC11's window: 0.8 statements per message).
    const groupId = `look-${randomUUID()}`
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
    )
    await setCheckpoints(groupId, { 0: Number(rows[0]!.p), 1: Number(rows[0]!.p) })
    const sent: string[] = []
    // The pool's own statements, counted: the consumer's lock connection (pool.connect) is not counted.
    const pool = new Proxy(db.pool, {
      get(target, prop) {
        if (prop === 'query') {
          return (...args: Parameters<typeof target.query>) => {
            const [statement] = args as unknown as [string | { text: string }]
            sent.push(typeof statement === 'string' ? statement : statement.text)
            return (target.query as (...a: unknown[]) => unknown)(...args)
          }
        }
        const value = Reflect.get(target, prop, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    // The statements sent so far at each wait: those between two waits are one look's.
    const marks: number[] = []
    const applied: JournalRecord[] = []
    const consumer = createJournalConsumer({
      pool,
      groupId,
      partitions: 2,
      pollIntervalMs: 5,
      maxIdlePollIntervalMs: 5,
      streamTypes: ['conversation'],
      handler: async () => {},
      onApplied: (records) => applied.push(...records),
      sleep: (ms, waiter) => {
        marks.push(sent.length)
        return waiter.sleep(ms)
      },
    })
    await consumer.start()
    try {
      await waitFor(async () => marks.length >= 12, { what: 'a dozen looks' })
      const looks = marks.slice(1, 12).map((mark, i) => sent.slice(marks[i]!, mark))
      expect(looks.map((statements) => statements.length)).toEqual(Array(11).fill(1))
      expect(looks.flat().every((text) => text.includes('FROM event_journal'))).toBe(true)
      // And the read starts past the checkpoints: an event after them is applied, none before them.
      const { records } = await appendOne('conversation')
      await waitFor(async () => applied.some((r) => r.id === records[0]!.id), { what: 'the event applied' })
      expect(applied.map((r) => r.id)).toEqual([records[0]!.id])
    } finally {
      await consumer.stop()
    }
  })
})
