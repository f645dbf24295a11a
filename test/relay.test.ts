/**
 * The relay with several batches in flight, against the real broker: each stream stays in journal order in
 * Kafka, the checkpoint only covers acknowledged batches, and a batch that fails while later ones were
 * delivered loses nothing. Kafka-only (the journal backend has no relay).
 */
import { randomUUID } from 'node:crypto'
import { createPool, withTransaction } from '@cas/db'
import {
  createEventConsumer,
  type EventConsumer,
  Relay,
  type RelayOptions,
  sendLane,
  topicFor,
} from '@cas/eventlog'
import { ConfigResourceTypes } from 'kafkajs'
import type { Pool } from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  appendWorkload,
  appliedCount,
  createAppliedTable,
  expectExactlyOnceInStreamOrder,
  recordApplied,
} from './support/applied.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { appendTestEvent } from './support/journal.ts'
import {
  createTestTopics,
  kafkaBrokers,
  readTopicsRaw,
  startRecordingConsumer,
  startTestRelay,
  type TestKafka,
  uniqueGroupId,
} from './support/kafka.ts'
import { waitFor } from './support/wait.ts'

const PARTITIONS = 4

describe.skipIf(kafkaBrokers() === null)('relay: several batches in flight', () => {
  let db: TestDatabase
  let t: TestKafka
  const cleanups: (() => Promise<unknown>)[] = []

  beforeEach(async () => {
    db = await createTestDatabase()
    await createAppliedTable(db.pool)
    t = await createTestTopics(PARTITIONS)
  })
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
    await db.drop()
  })

  async function startRelay(opts: Partial<RelayOptions>, pool: Pool = db.pool): Promise<Relay> {
    const relay = await startTestRelay(t, pool, opts)
    cleanups.push(() => relay.stop())
    return relay
  }

  async function startConsumer(): Promise<EventConsumer> {
    const c = await startRecordingConsumer(t, db.pool, { groupId: uniqueGroupId('relay'), maxBatchSize: 100 })
    cleanups.push(() => c.stop())
    return c
  }

  async function journalCount(): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_journal')
    return rows[0]!.n
  }

  /**
   * Reads the conversation topic as Kafka holds it and checks that each stream's first copies are in
   * stream version order (consumers drop a version not above the last they applied, so an earlier event
   * behind a later one would be lost). Returns the streams seen and the extra copies (resent events).
   */
  async function expectStreamsInOrderInKafka(): Promise<{ streams: number; copies: number }> {
    const byStream = new Map<string, number[]>()
    for (const m of await readTopicsRaw(t.kafka, t.topicPrefix)) {
      const { streamId, streamVersion } = JSON.parse(m.value) as { streamId: string; streamVersion: number }
      expect(m.key).toBe(streamId)
      byStream.set(streamId, [...(byStream.get(streamId) ?? []), streamVersion])
    }
    let copies = 0
    for (const [stream, versions] of byStream) {
      const firsts = versions.filter((v, i) => versions.indexOf(v) === i)
      expect(firsts, stream).toEqual(firsts.map((_, i) => i + 1))
      copies += versions.length - firsts.length
    }
    return { streams: byStream.size, copies }
  }

  // 3 lanes over 4 partitions: concurrent requests share partitions (never streams).
  for (const maxInFlight of [1, 3]) {
    it(`delivers every event once, each stream in journal order (${maxInFlight} in flight)`, async () => {
      const relay = await startRelay({ batchSize: 20, maxInFlight })
      await startConsumer()
      await appendWorkload(db.pool, { streams: 40, total: 1_500, concurrency: 8 })
      await waitFor(async () => (await appliedCount(db.pool)) >= 1_500, {
        timeoutMs: 60_000,
        what: 'all events applied',
      })
      await expectExactlyOnceInStreamOrder(db.pool)
      // Kafka itself: no stream out of order (kafkajs may have resent a request in part: copies).
      expect((await expectStreamsInOrderInKafka()).streams).toBe(40)
      expect(relay.stats.published).toBe(1_500)
      expect(relay.stats.errors).toBe(0)
    })
  }

  it('reads ahead and publishes past a checkpoint not yet recorded, up to twice its batches in flight', async () => {
    await appendWorkload(db.pool, { streams: 20, total: 300 })
    const lock = await db.pool.connect()
    cleanups.push(async () => {
      await lock.query('ROLLBACK').catch(() => {})
      lock.release()
    })
    await lock.query('BEGIN')
    // Blocks the relay's checkpoint write (not its reads).
    await lock.query('LOCK TABLE consumer_checkpoints IN SHARE MODE')
    const relay = await startRelay({ batchSize: 10, maxInFlight: 3 })
    await waitFor(() => relay.stats.batches >= 6, { what: 'six batches acknowledged' })
    // Then it waits for its checkpoint (its write is blocked by the lock): no more than 2 × 3 batches are
    // ever acknowledged and unrecorded.
    await waitFor(
      async () =>
        (
          await db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%consumer_checkpoints%'`,
          )
        ).rows[0]!.n > 0,
      { what: "the relay's checkpoint write waiting for the lock" },
    )
    expect(relay.stats.batches).toBe(6)
    expect(relay.stats.checkpoint).toBe('0')
    await lock.query('ROLLBACK')
    await waitFor(() => relay.stats.published === 300, { what: 'all 300 published' })
    const { rows } = await db.pool.query<{ last: string }>(
      'SELECT max(position)::text AS last FROM event_journal',
    )
    await waitFor(() => relay.stats.checkpoint === rows[0]!.last, {
      what: 'the checkpoint at the last event',
    })
  })

  it('goes on publishing when the leading connection dies, and leaves no listener on pooled connections', async () => {
    // Two connections: the relay leads on one of them, whichever, each time.
    const pool = createPool(db.url, { max: 2, applicationName: 'relay-test' })
    cleanups.push(() => pool.end())
    const errorListeners = async () => {
      const clients = [await pool.connect(), await pool.connect()]
      const counts = clients.map((c) => c.listenerCount('error')).sort()
      for (const c of clients) c.release()
      return counts
    }
    const before = await errorListeners()
    for (let i = 0; i < 3; i++) {
      const relay = await startRelay({ batchSize: 10 }, pool)
      await waitFor(() => relay.stats.isLeader, { what: 'the relay to lead' })
      await relay.stop()
    }
    expect(await errorListeners()).toEqual(before)

    const relay = await startRelay({ batchSize: 10 }, pool)
    await appendWorkload(db.pool, { streams: 5, total: 50 })
    await waitFor(() => relay.stats.published >= 50, { what: 'the first events published' })
    // The connection holding the relay's lock.
    const leaderPid = async () => {
      const { rows } = await db.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_locks
          WHERE locktype = 'advisory' AND classid = x'72656c61'::int AND objid = 1 AND granted`,
      )
      return rows[0]?.pid
    }
    const first = await leaderPid()
    expect(first).toBeDefined()
    await db.pool.query('SELECT pg_terminate_backend($1)', [first])
    await waitFor(async () => ((await leaderPid()) ?? first) !== first, {
      what: 'the relay to lead again on another connection',
    })
    await appendWorkload(db.pool, { streams: 5, total: 50 })
    await waitFor(() => relay.stats.isLeader && relay.stats.published >= 100, {
      what: 'the relay to lead again and publish the rest',
    })
  })

  it('gives back a connection that dies as it asks for the lock, and leads on another', async () => {
    // Regression: when the lock's query failed (the connection lost as the relay took it from the pool),
    // the connection stayed lent out: a pool slot gone for good each time, and pool.end() waited forever.
    // Three connections: with two, the lost one and the lock's leave the relay's reads none, and it waits
    // for one for good (its stop too); this measures the lost one instead.
    const pool = createPool(db.url, { max: 3, applicationName: 'relay-test' })
    // The first connection the relay takes, for the lock, dies with the statement queued ahead of its own.
    pool.once('acquire', (client) => {
      client.query('SELECT pg_terminate_backend(pg_backend_pid())').catch(() => {})
    })
    const relay = await startRelay({ batchSize: 10 }, pool)
    await waitFor(() => relay.stats.isLeader, { what: 'the relay to lead' })
    await relay.stop()
    const lentOut = pool.totalCount - pool.idleCount
    // Ended only when nothing is lent out: a client kept lent out would keep pool.end() waiting.
    if (lentOut === 0) await pool.end()
    expect({ errors: relay.stats.errors, lentOut }).toEqual({ errors: 1, lentOut: 0 })
  })

  it('stopped while it starts, runs nothing afterwards: holds no lock, lends out no connection', async () => {
    // Regression: stop() during start() (the producer still connecting) found no loop yet and returned;
    // the start then ran the loop, which took the leader lock and a pooled connection for good: no other
    // relay could lead, and pool.end() at shutdown waited forever.
    const pool = createPool(db.url, { max: 3, applicationName: 'relay-test' })
    const stopped = new Relay({ pool, kafka: t.kafka, topicPrefix: t.topicPrefix, pollIntervalMs: 5 })
    cleanups.push(() => pool.end())
    // Stopped again at the end: on the code this pins, what the start ran after the stop goes on.
    cleanups.push(() => stopped.stop())
    const starting = stopped.start()
    await stopped.stop()
    await starting
    // On the code this pins, the loop has just asked the pool for the lock's connection (1).
    expect(pool.totalCount - pool.idleCount).toBe(0)
    // And another relay leads: the stopped one holds no lock.
    const other = await startRelay({ batchSize: 10 })
    await waitFor(() => other.stats.isLeader, { what: 'another relay to lead' })
    expect({ leads: stopped.stats.isLeader, lentOut: pool.totalCount - pool.idleCount }).toEqual({
      leads: false,
      lentOut: 0,
    })
  })

  it('loses nothing when a batch fails while later ones were delivered: each stream stays in order', async () => {
    const conversationTopic = topicFor('conversation', t.topicPrefix)
    const admin = t.kafka.admin()
    await admin.connect()
    cleanups.push(() => admin.disconnect())
    const maxMessageBytes = (bytes: number) =>
      admin.alterConfigs({
        validateOnly: false,
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: conversationTopic,
            configEntries: [{ name: 'max.message.bytes', value: String(bytes) }],
          },
        ],
      })
    // The broker refuses any request carrying the big event below (MESSAGE_TOO_LARGE, not retried).
    await maxMessageBytes(200_000)
    const errors: string[] = []
    const relay = await startRelay({
      batchSize: 20,
      maxInFlight: 4,
      // Waits for the operator, never publishing by reference (the next test).
      maxAttempts: Number.POSITIVE_INFINITY,
      log: (_msg, fields) => errors.push(String(fields?.err)),
    })
    await startConsumer()

    const lanes = 4
    const big = randomUUID()
    // Streams on other lanes than the big event's: their requests succeed while its request fails.
    const others = Array.from({ length: 200 }, () => randomUUID())
      .filter((s) => sendLane(s, lanes) !== sendLane(big, lanes))
      .slice(0, 6)
    for (let i = 0; i < 3; i++) await withTransaction(db.pool, (c) => appendTestEvent(c, big))
    const streams = await appendWorkload(db.pool, { streams: 20, total: 200 })
    await waitFor(async () => (await appliedCount(db.pool)) >= 203, { what: 'the first events applied' })

    // One transaction: the big event, then events of other lanes right behind it, so that they are in its
    // batch (or the next ones).
    const bigPosition = await withTransaction(db.pool, async (c) => {
      const { records } = await appendTestEvent(c, big, { blob: 'x'.repeat(300_000) })
      for (const s of others) await appendTestEvent(c, s)
      return records[0]!.position
    })
    // Then more of the big event's stream and of the others, which must not overtake it.
    for (let i = 0; i < 3; i++) await withTransaction(db.pool, (c) => appendTestEvent(c, big))
    await appendWorkload(db.pool, { streams: 0, total: 200, streamIds: [...streams, ...others] })

    // The batch holding the big event keeps failing; the other lanes delivered what came after it.
    await waitFor(
      async () => {
        if (relay.stats.errors < 2) return false
        const { rows } = await db.pool.query('SELECT 1 FROM test_applied WHERE position > $1 LIMIT 1', [
          bigPosition,
        ])
        return rows.length > 0
      },
      { timeoutMs: 60_000, what: 'later events applied while the big one fails' },
    )
    expect(BigInt(relay.stats.checkpoint)).toBeLessThan(BigInt(bigPosition))
    expect(
      errors.some((e) => /larger than the max message size/.test(e)),
      errors.join('\n'),
    ).toBe(true)
    const { rows: bigApplied } = await db.pool.query<{ v: number }>(
      'SELECT max(stream_version) AS v FROM test_applied WHERE stream_id = $1',
      [big],
    )
    expect(bigApplied[0]!.v).toBe(3)

    // The operator raises the limit: the relay resends from its checkpoint and catches up.
    await maxMessageBytes(2_000_000)
    const total = await journalCount()
    await waitFor(async () => (await appliedCount(db.pool)) >= total, {
      timeoutMs: 60_000,
      what: 'all events applied',
    })
    await expectExactlyOnceInStreamOrder(db.pool)
    // Kafka holds copies of what was delivered after the failed batch (resent from the checkpoint), but
    // each stream's first copies are in order.
    expect((await expectStreamsInOrderInKafka()).copies).toBeGreaterThan(0)
  })

  it('publishes an event Kafka keeps refusing by reference, in its place, and consumers read its payload from the journal', async () => {
    // Regression (issue 30): one event larger than the topic's limit stopped the relay's checkpoint for
    // good, and its lane with it, until an operator raised the limit.
    // Above the broker's default limit on a message (message.max.bytes, about 1 MB).
    const blob = 'x'.repeat(1_500_000)
    const logged: string[] = []
    const relay = await startRelay({
      batchSize: 20,
      maxInFlight: 2,
      maxAttempts: 2,
      log: (msg) => logged.push(msg),
    })
    const payloads = new Map<string, unknown>()
    const c = createEventConsumer(
      { kind: 'kafka', kafka: t.kafka, topicPrefix: t.topicPrefix, sessionTimeoutMs: 6_000 },
      {
        pool: db.pool,
        groupId: uniqueGroupId('by-reference'),
        streamTypes: ['conversation'],
        handler: async (records, client) => {
          for (const r of records) payloads.set(r.id, r.payload)
          await recordApplied(client, records)
        },
      },
    )
    await c.start()
    cleanups.push(() => c.stop())

    const big = randomUUID()
    const append = (streamId: string, payload: unknown = {}) =>
      withTransaction(db.pool, (client) => appendTestEvent(client, streamId, payload))
    await append(big)
    const bigEvent = (await append(big, { blob })).records[0]!
    await append(big, { after: true })
    await appendWorkload(db.pool, { streams: 10, total: 100 })

    const total = await journalCount()
    await waitFor(async () => (await appliedCount(db.pool)) >= total, {
      timeoutMs: 60_000,
      what: 'every event applied, the refused one too',
    })
    await expectExactlyOnceInStreamOrder(db.pool)
    expect(payloads.get(bigEvent.id)).toEqual({ blob })
    expect(relay.stats.byReference).toBe(1)
    expect(relay.stats.errors).toBeGreaterThanOrEqual(2)
    expect(logged).toContain('published an event by reference: Kafka refused it as a record')
    // In Kafka: the envelope in the event's place, saying where its payload is.
    const inKafka = (await readTopicsRaw(t.kafka, t.topicPrefix))
      .map((m) => JSON.parse(m.value) as { id: string; payload: unknown; payloadRef?: string })
      .filter((e) => e.id === bigEvent.id)
    expect(inKafka[0]).toMatchObject({ payload: null, payloadRef: 'journal', streamVersion: 2 })
    await expectStreamsInOrderInKafka()
  })
})
