/**
 * The event-log contract, run against both backends: the Postgres journal read directly (embedded
 * default) and Kafka fed by the relay. Real Postgres, real Kafka; crashes are real SIGKILLs.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import {
  appendToStream,
  type ConsumerOptions,
  createEventConsumer,
  deadLetterTopic,
  type EventConsumer,
  type EventLogBackend,
  type JournalRecord,
  listDeadLetters,
  Relay,
  requestRedrive,
  showDeadLetter,
  topicFor,
} from '@cas/eventlog'
import type { Kafka } from 'kafkajs'
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
import { createTestTopics, kafkaBrokers, uniqueGroupId } from './support/kafka.ts'
import { waitFor } from './support/wait.ts'
import { spawnWorker, type Worker } from './support/worker-process.ts'

interface Pipeline {
  readonly backend: EventLogBackend
  /** Environment for a worker process using the same backend. */
  readonly workerEnv: Record<string, string>
  /** Starts what carries journal events to consumers (the relay, for Kafka). */
  startCarrier(): Promise<void>
  stopCarrier(): Promise<void>
}

const PARTITIONS = 4
const backends = [
  {
    name: 'journal',
    available: true,
    async pipeline(_db: TestDatabase): Promise<Pipeline> {
      return {
        backend: { kind: 'journal', partitions: PARTITIONS, pollIntervalMs: 10 },
        workerEnv: { BACKEND: 'journal', PARTITIONS: String(PARTITIONS) },
        startCarrier: async () => {},
        stopCarrier: async () => {},
      }
    },
  },
  {
    name: 'kafka',
    available: kafkaBrokers() !== null,
    async pipeline(db: TestDatabase): Promise<Pipeline> {
      const t = await createTestTopics(PARTITIONS)
      let relay: Relay | undefined
      return {
        backend: { kind: 'kafka', kafka: t.kafka, topicPrefix: t.topicPrefix, sessionTimeoutMs: 6_000 },
        workerEnv: { BACKEND: 'kafka', KAFKA_BROKERS: t.brokers.join(','), TOPIC_PREFIX: t.topicPrefix },
        async startCarrier() {
          relay = new Relay({ pool: db.pool, kafka: t.kafka, topicPrefix: t.topicPrefix, batchSize: 100 })
          await relay.start()
        },
        async stopCarrier() {
          await relay?.stop()
        },
      }
    },
  },
] as const

/** Journal events the relay has published (its checkpoint). */
async function countRelayed(db: TestDatabase): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM event_journal
      WHERE position <= (SELECT last_offset FROM consumer_checkpoints WHERE group_id = '$relay')`,
  )
  return rows[0]!.n
}

for (const b of backends) {
  describe.skipIf(!b.available)(`event log contract: ${b.name} backend`, () => {
    let db: TestDatabase
    let pipeline: Pipeline
    const cleanups: (() => Promise<unknown>)[] = []

    beforeEach(async () => {
      db = await createTestDatabase()
      await createAppliedTable(db.pool)
      pipeline = await b.pipeline(db)
      await pipeline.startCarrier()
    })
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
      await pipeline.stopCarrier()
      await db.drop()
    })

    function consumer(groupId: string, name = '', more: Partial<ConsumerOptions> = {}): EventConsumer {
      const c = createEventConsumer(pipeline.backend, {
        pool: db.pool,
        groupId,
        streamTypes: ['conversation'],
        maxBatchSize: 50,
        handler: (records, client) => recordApplied(client, records, name),
        ...more,
      })
      cleanups.push(() => c.stop())
      return c
    }

    function worker(role: 'consumer' | 'relay', env: Record<string, string>): Worker {
      const w = spawnWorker({ ROLE: role, DATABASE_URL: db.url, ...pipeline.workerEnv, ...env })
      cleanups.push(() => w.kill())
      return w
    }

    it('delivers every event exactly once and each stream in order, while writers run concurrently', async () => {
      const c = consumer(uniqueGroupId('order'))
      await c.start()
      await appendWorkload(db.pool, { streams: 40, total: 1_500, concurrency: 8 })
      await waitFor(async () => (await appliedCount(db.pool)) >= 1_500, { what: 'all events applied' })
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    it('delivers a slow transaction that commits after a faster later one', async () => {
      const c = consumer(uniqueGroupId('slow'))
      await c.start()
      const [slowStream, fastStream] = [randomUUID(), randomUUID()]
      const append = (client: Parameters<typeof appendToStream>[0], streamId: string) =>
        appendToStream(client, {
          streamType: 'conversation',
          streamId,
          orgId: randomUUID(),
          chatbotId: randomUUID(),
          expectedVersion: 0,
          events: [{ type: 'test.happened', version: 1, payload: {} }],
        })
      const slow = await db.pool.connect()
      try {
        await slow.query('BEGIN')
        await append(slow, slowStream)
        await withTransaction(db.pool, (client) => append(client, fastStream))
        // More traffic behind it, so the consumer has every chance to run past the open transaction.
        await appendWorkload(db.pool, { streams: 5, total: 50 })
        await slow.query('COMMIT')
      } finally {
        slow.release()
      }
      await waitFor(async () => (await appliedCount(db.pool)) >= 52, { what: 'all events applied' })
      const { rows } = await db.pool.query('SELECT stream_id FROM test_applied WHERE stream_id = ANY($1)', [
        [slowStream, fastStream],
      ])
      expect(rows.map((r) => r.stream_id).sort()).toEqual([slowStream, fastStream].sort())
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    it('applies the batches of several partitions at the same time, each stream still in order', async () => {
      // kafkajs applies a fetch's partition batches one after another unless told otherwise, and the
      // journal consumer polled its partitions in turn: a transaction each, one at a time.
      await appendWorkload(db.pool, { streams: 20, total: 200 })
      let running = 0
      let mostAtOnce = 0
      const c = createEventConsumer(pipeline.backend, {
        pool: db.pool,
        groupId: uniqueGroupId('concurrent'),
        streamTypes: ['conversation'],
        maxBatchSize: 50,
        partitionsConcurrently: 4,
        handler: async (records, client) => {
          running++
          mostAtOnce = Math.max(mostAtOnce, running)
          try {
            // Held until another partition's batch is being applied too: a consumer applying them one at
            // a time never lets the first through, and the test fails.
            await waitFor(() => mostAtOnce > 1, { what: "a second partition's batch applied at once" })
            await recordApplied(client, records)
          } finally {
            running--
          }
        },
      })
      cleanups.push(() => c.stop())
      if (b.name === 'kafka')
        await waitFor(async () => (await countRelayed(db)) >= 200, { what: 'the workload relayed' })
      await c.start()
      await waitFor(async () => (await appliedCount(db.pool)) >= 200, { what: 'all events applied' })
      expect(mostAtOnce).toBeGreaterThan(1)
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    // Journal only: defined for that backend alone (a skipped test fails CI).
    if (b.name === 'journal') {
      it('carries a group on, exactly once, when its partition count changes', async () => {
        // The embedded default went from one partition to four: a group's one checkpoint is redrawn as
        // four from the same position, so the new partitions neither start over nor skip.
        const groupId = uniqueGroupId('repartitioned')
        const onePartition = createEventConsumer(
          { kind: 'journal', partitions: 1, pollIntervalMs: 10 },
          {
            pool: db.pool,
            groupId,
            streamTypes: ['conversation'],
            maxBatchSize: 50,
            handler: (records, client) => recordApplied(client, records),
          },
        )
        cleanups.push(() => onePartition.stop())
        await appendWorkload(db.pool, { streams: 10, total: 100 })
        await onePartition.start()
        await waitFor(async () => (await appliedCount(db.pool)) >= 100, { what: 'the first events applied' })
        await onePartition.stop()
        await appendWorkload(db.pool, { streams: 10, total: 100 })
        await consumer(groupId).start()
        await waitFor(async () => (await appliedCount(db.pool)) >= 200, { what: 'all events applied' })
        const { rows } = await db.pool.query(
          `SELECT partition FROM consumer_checkpoints WHERE group_id = $1 AND topic = '$journal' ORDER BY 1`,
          [groupId],
        )
        expect(rows.map((r) => r.partition)).toEqual([0, 1, 2, 3])
        await expectExactlyOnceInStreamOrder(db.pool)
      })
    }

    // Kafka only: defined for that backend alone (a skipped test fails CI).
    if (b.name === 'kafka') {
      it("applies a fetch's partition batches together, a few transactions for many partitions", async () => {
        // kafkajs hands each partition's batch apart: a transaction each would pay a commit per partition
        // per fetch. Two transactions at a time: the four partitions' batches go in pairs.
        await appendWorkload(db.pool, { streams: 40, total: 400 })
        await waitFor(async () => (await countRelayed(db)) >= 400, { what: 'the workload relayed' })
        const sourcesPerTransaction: number[] = []
        const c = createEventConsumer(pipeline.backend, {
          pool: db.pool,
          groupId: uniqueGroupId('combined'),
          streamTypes: ['conversation'],
          partitionsConcurrently: 2,
          handler: async (records, client, sources) => {
            sourcesPerTransaction.push(sources.length)
            await recordApplied(client, records)
          },
        })
        cleanups.push(() => c.stop())
        await c.start()
        await waitFor(async () => (await appliedCount(db.pool)) >= 400, { what: 'all events applied' })
        expect(Math.max(...sourcesPerTransaction)).toBe(2)
        await expectExactlyOnceInStreamOrder(db.pool)
      })

      it("applies a trailing topic's events after the leading topic's that come before them in the journal", async () => {
        // Each stream: a large conversation event, then (later in the journal) a small analysis event. A
        // fetch of a conversation partition stops at 1 MB, about 60 events; one of an analysis partition
        // holds all of them, so unordered, analysis events would be applied before their conversation's.
        const streamIds = Array.from({ length: 400 }, () => randomUUID())
        const text = 'x'.repeat(16_000)
        for (let i = 0; i < streamIds.length; i += 50) {
          await withTransaction(db.pool, async (client) => {
            for (const [streamType, payload] of [
              ['conversation', { text }],
              ['analysis', {}],
            ] as const) {
              for (const streamId of streamIds.slice(i, i + 50)) {
                await appendToStream(client, {
                  streamType,
                  streamId,
                  orgId: '00000000-0000-4000-8000-000000000001',
                  chatbotId: '00000000-0000-4000-8000-000000000002',
                  expectedVersion: 'any',
                  events: [{ type: `test.${streamType}`, version: 1, payload }],
                })
              }
            }
          })
        }
        await waitFor(async () => (await countRelayed(db)) >= 800, { what: 'the events relayed' })

        /** Analysis events applied before their stream's conversation event, by one consumer. */
        const early = async (
          name: string,
          partitionsConcurrently: number,
          more: Partial<ConsumerOptions> = {},
        ): Promise<number> => {
          const seen = new Set<string>()
          let before = 0
          const c = createEventConsumer(pipeline.backend, {
            pool: db.pool,
            groupId: uniqueGroupId(name),
            streamTypes: ['conversation', 'analysis'],
            maxBatchSize: 20,
            partitionsConcurrently,
            handler: async (records, client) => {
              for (const r of records) {
                if (r.streamType === 'conversation') seen.add(r.streamId)
                else if (!seen.has(r.streamId)) before++
              }
              await recordApplied(client, records, name)
            },
            ...more,
          })
          cleanups.push(() => c.stop())
          await c.start()
          await waitFor(
            async () => {
              const { rows } = await db.pool.query<{ n: number }>(
                'SELECT count(*)::int AS n FROM test_applied WHERE consumer = $1',
                [name],
              )
              return rows[0]!.n >= 800
            },
            { what: `every event applied by ${name}` },
          )
          await c.stop()
          return before
        }
        const trailing = { streamType: 'analysis', leader: 'conversation' } as const
        // One transaction at a time (the rebuild), and a fetch's batches combined (the live projector).
        for (const transactions of [1, 2]) {
          // The control: unordered, the analysis topic runs ahead.
          expect(await early(`unordered-${transactions}`, transactions)).toBeGreaterThan(0)
          expect(await early(`trailing-${transactions}`, transactions, { trailing })).toBe(0)
        }
        const { rows: twice } = await db.pool.query(
          'SELECT consumer, event_id FROM test_applied GROUP BY 1, 2 HAVING count(*) > 1',
        )
        expect(twice).toEqual([])
      })

      it('refuses to apply partitions at the same time when the topics differ in partition count', async () => {
        const { kafka, topicPrefix } = pipeline.backend as { kafka: Kafka; topicPrefix: string }
        const admin = kafka.admin()
        await admin.connect()
        try {
          const analysis = topicFor('analysis', topicPrefix)
          const [meta] = (await admin.fetchTopicMetadata({ topics: [analysis] })).topics
          const count = meta!.partitions.length + 1
          await admin.createPartitions({ topicPartitions: [{ topic: analysis, count }] })
          await waitFor(
            async () =>
              (await admin.fetchTopicMetadata({ topics: [analysis] })).topics[0]!.partitions.length === count,
            { what: 'the new partition in the metadata' },
          )
        } finally {
          await admin.disconnect()
        }
        const consumer = (partitionsConcurrently: number, more: Partial<ConsumerOptions> = {}) =>
          createEventConsumer(pipeline.backend, {
            pool: db.pool,
            groupId: uniqueGroupId('copartitioned'),
            streamTypes: ['conversation', 'analysis'],
            partitionsConcurrently,
            handler: async () => {},
            ...more,
          })
        const concurrent = consumer(4)
        cleanups.push(() => concurrent.stop())
        await expect(concurrent.start()).rejects.toThrow(/differ in partition count/)
        // One partition at a time, the counts do not matter.
        const serial = consumer(1)
        cleanups.push(() => serial.stop())
        await expect(serial.start()).resolves.toBeUndefined()
        // Nor for a trailing order, which is then off (it compares partition numbers), and says so.
        const said: string[] = []
        const trailing = consumer(1, {
          trailing: { streamType: 'analysis', leader: 'conversation' },
          log: (msg) => said.push(msg),
        })
        cleanups.push(() => trailing.stop())
        await expect(trailing.start()).resolves.toBeUndefined()
        expect(said).toContainEqual(expect.stringMatching(/^trailing order off/))
      })
    }

    it('sets aside an event it cannot apply, keeps every other stream flowing, and re-drives it after a fix', async () => {
      // Regression (issue 30): one event the handler could never apply (a lone surrogate, which jsonb
      // refuses) was retried forever and held back every stream behind it.
      let fixed = false
      const isPoison = (r: JournalRecord) => (r.payload as { poison?: boolean }).poison === true
      const groupId = uniqueGroupId('poison')
      const c = consumer(groupId, '', {
        maxAttempts: 3,
        redriveIntervalMs: 100,
        handler: async (records, client) => {
          if (!fixed && records.some(isPoison))
            await client.query('SELECT $1::jsonb', [JSON.stringify({ content: '\ud800 hello' })])
          await recordApplied(client, records)
        },
      })
      await c.start()
      const append = (streamId: string, payload: Record<string, unknown>) =>
        withTransaction(db.pool, (client) => appendTestEvent(client, streamId, payload))
      const poisoned = randomUUID()
      const bad = (await append(poisoned, { poison: true })).records[0]!
      await appendWorkload(db.pool, { streams: 20, total: 300 })
      const after = (await append(poisoned, {})).records[0]!

      await waitFor(async () => (await appliedCount(db.pool)) >= 301, {
        timeoutMs: 45_000,
        what: "every other event applied, the poisoned stream's next one too",
      })
      const [letter, ...more] = await waitFor(async () => {
        const letters = await listDeadLetters(db.pool, { groupId })
        return letters.length > 0 && letters
      })
      expect(more).toEqual([])
      expect(letter).toMatchObject({
        eventId: bad.id,
        eventType: 'test.happened',
        streamType: 'conversation',
        streamId: poisoned,
        streamVersion: 1,
        attempts: 3,
        redriveRequestedAt: null,
      })
      expect(letter!.error).toMatch(/json/i)
      expect(c.stats.deadLettered).toBe(1)
      expect((await showDeadLetter(db.pool, letter!.id))?.record).toMatchObject({
        id: bad.id,
        payload: { poison: true },
      })
      const { rows: appliedOfPoisoned } = await db.pool.query<{ event_id: string }>(
        'SELECT event_id FROM test_applied WHERE stream_id = $1',
        [poisoned],
      )
      expect(appliedOfPoisoned.map((r) => r.event_id)).toEqual([after.id])

      // The operator fixes the cause and re-drives it: applied once, and gone from the store.
      fixed = true
      expect(await requestRedrive(db.pool, { ids: [letter!.id] })).toBe(1)
      // The redrive counts it once its transaction has committed, just after the store forgets it: wait for both.
      await waitFor(
        async () => (await listDeadLetters(db.pool, { groupId })).length === 0 && c.stats.redriven > 0,
        { what: 'the dead letter re-driven' },
      )
      expect(c.stats.redriven).toBe(1)
      const { rows: dupes } = await db.pool.query(
        'SELECT event_id FROM test_applied GROUP BY event_id HAVING count(*) > 1',
      )
      expect(dupes).toEqual([])
      expect(await appliedCount(db.pool)).toBe(302)
      if (b.name === 'kafka') {
        // Kafka mode also publishes it to the dead-letter topic, for whoever watches the topics.
        const kafka = (pipeline.backend as Extract<EventLogBackend, { kind: 'kafka' }>).kafka
        const topic = deadLetterTopic((pipeline.backend as { topicPrefix?: string }).topicPrefix)
        const reader = kafka.consumer({ groupId: uniqueGroupId('dlq-reader') })
        cleanups.push(() => reader.disconnect())
        const seen: { value: string; group: string }[] = []
        await reader.connect()
        await reader.subscribe({ topics: [topic], fromBeginning: true })
        await reader.run({
          eachMessage: async ({ message }) => {
            seen.push({ value: message.value!.toString(), group: String(message.headers?.group) })
          },
        })
        await waitFor(() => seen.length > 0, { what: 'the dead letter on its topic' })
        expect(JSON.parse(seen[0]!.value)).toMatchObject({ id: bad.id, payload: { poison: true } })
        expect(seen[0]!.group).toBe(groupId)
      }
    })

    it('retries a failure the database can cure for as long as it lasts, setting nothing aside', async () => {
      // A lost connection, a deadlock, our own SQL not matching the schema: retrying (after a fix) cures
      // them, so they never set good events aside, however often they fail.
      let failures = 0
      const groupId = uniqueGroupId('transient')
      const c = consumer(groupId, '', {
        maxAttempts: 2,
        handler: async (records, client) => {
          if (failures < 6) {
            failures++
            await client.query('SELECT * FROM a_table_a_deployment_forgot')
          }
          await recordApplied(client, records)
        },
      })
      await c.start()
      await appendWorkload(db.pool, { streams: 5, total: 40 })
      await waitFor(async () => (await appliedCount(db.pool)) >= 40, { what: 'every event applied' })
      expect(failures).toBe(6)
      expect(await listDeadLetters(db.pool, { groupId })).toEqual([])
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    it('holds back while admit answers no, counting no error, and applies everything once it answers yes', async () => {
      let admitted = false
      let asked = 0
      const c = consumer(uniqueGroupId('admit'), '', {
        pauseIntervalMs: 20,
        admit: async () => {
          asked++
          return admitted
        },
      })
      await c.start()
      await appendWorkload(db.pool, { streams: 10, total: 200 })
      await waitFor(() => c.stats.paused && asked >= 5, { what: 'the consumer to pause' })
      expect(await appliedCount(db.pool)).toBe(0)
      expect(c.stats).toMatchObject({ applied: 0, errors: 0, paused: true })
      admitted = true
      await waitFor(async () => (await appliedCount(db.pool)) >= 200, { what: 'all events applied' })
      expect(c.stats).toMatchObject({ errors: 0, paused: false })
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    it('orders each batch first in its transaction, before the transaction has an id', async () => {
      await appendWorkload(db.pool, { streams: 10, total: 100 })
      const xids: (string | null)[] = []
      let ordered = 0
      const c = createEventConsumer(pipeline.backend, {
        pool: db.pool,
        groupId: uniqueGroupId('ordered'),
        streamTypes: ['conversation'],
        maxBatchSize: 20,
        orderBatch: async (records, client) => {
          const { rows } = await client.query<{ xid: string | null }>(
            'SELECT pg_current_xact_id_if_assigned()::text AS xid',
          )
          xids.push(rows[0]!.xid)
          ordered += records.length
        },
        handler: (records, client) => recordApplied(client, records),
      })
      cleanups.push(() => c.stop())
      await c.start()
      await waitFor(async () => (await appliedCount(db.pool)) >= 100, { what: 'all events applied' })
      expect(ordered).toBeGreaterThanOrEqual(100)
      expect(xids.length).toBeGreaterThan(0)
      expect(xids.every((x) => x === null)).toBe(true)
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    it('neither loses nor double-applies when the consumer process is killed mid-batch', async () => {
      const groupId = uniqueGroupId('crash')
      await appendWorkload(db.pool, { streams: 30, total: 1_000 })
      for (let round = 0; round < 3; round++) {
        const w = worker('consumer', { GROUP_ID: groupId, BATCH_DELAY_MS: '100' })
        await w.waitForLine((l) => l === 'in-batch 3', 60_000)
        await w.kill('SIGKILL')
      }
      expect(await appliedCount(db.pool)).toBeLessThan(1_000)
      await consumer(groupId).start()
      await waitFor(async () => (await appliedCount(db.pool)) >= 1_000, { what: 'all events applied' })
      await expectExactlyOnceInStreamOrder(db.pool)
    }, 180_000)

    it('splits partitions between two consumers of one group and survives a rebalance', async () => {
      const groupId = uniqueGroupId('split')
      const [a, b2] = [consumer(groupId, 'a'), consumer(groupId, 'b')]
      await Promise.all([a.start(), b2.start()])
      await waitFor(() => a.stats.partitions.length > 0 && b2.stats.partitions.length > 0, {
        what: 'both members to own partitions',
      })
      const streams = await appendWorkload(db.pool, { streams: 40, total: 800 })
      await waitFor(async () => (await appliedCount(db.pool)) >= 800, { what: 'first wave applied' })
      const { rows } = await db.pool.query<{ consumer: string }>('SELECT DISTINCT consumer FROM test_applied')
      expect(rows.map((r) => r.consumer).sort()).toEqual(['a', 'b'])
      // One member leaves while a second wave is written: the other takes its partitions over.
      const secondWave = appendWorkload(db.pool, { streams: 0, total: 800, streamIds: streams })
      await b2.stop()
      await secondWave
      await waitFor(async () => (await appliedCount(db.pool)) >= 1_600, { what: 'second wave applied' })
      await expectExactlyOnceInStreamOrder(db.pool)
    })

    if (b.name !== 'kafka') return
    it('loses nothing across relay restarts and a relay killed mid-publish', async () => {
      await pipeline.stopCarrier()
      const c = consumer(uniqueGroupId('relay'))
      await c.start()
      await appendWorkload(db.pool, { streams: 20, total: 1_000 })
      const w = worker('relay', {})
      await w.waitForLine((l) => /^published [1-9]\d{2,}/.test(l), 60_000)
      await w.kill('SIGKILL')
      await appendWorkload(db.pool, { streams: 20, total: 500 })
      await pipeline.startCarrier()
      await waitFor(async () => (await appliedCount(db.pool)) >= 1_500, { what: 'all events applied' })
      await pipeline.stopCarrier()
      await appendWorkload(db.pool, { streams: 20, total: 200 })
      await pipeline.startCarrier()
      await waitFor(async () => (await appliedCount(db.pool)) >= 1_700, {
        what: 'events after restart applied',
      })
      await expectExactlyOnceInStreamOrder(db.pool)
    })
  })
}
