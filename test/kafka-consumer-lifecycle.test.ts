/**
 * The Kafka consumer's start and stop against the real broker: a stop asked for while the start is under
 * way, a start asked for while a stop is, and a start that fails after its consumer connected, leave
 * nothing running and nothing connected but what the last start asked for started;
 * a consumer kafkajs stops for good (no group coordinator) starts again and applies what came meanwhile.
 * Kafka-only (the journal consumer's are in libs/eventlog/src/journal-consumer.int.test.ts).
 */
import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { withTransaction } from '@cas/db'
import {
  createEventConsumer,
  type EventConsumer,
  encodeRecord,
  type JournalRecord,
  topicFor,
} from '@cas/eventlog'
import { type Consumer, Kafka, logLevel } from 'kafkajs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { appendTestEvent } from './support/journal.ts'
import { createTestTopics, kafkaBrokers, type TestKafka, uniqueGroupId } from './support/kafka.ts'
import { waitFor } from './support/wait.ts'

describe.skipIf(kafkaBrokers() === null)('a Kafka consumer started and stopped', () => {
  let db: TestDatabase
  let t: TestKafka
  const cleanups: (() => Promise<unknown>)[] = []
  beforeEach(async () => {
    db = await createTestDatabase()
    t = await createTestTopics(2)
  })
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
    await db.drop()
  })

  function consumerOf(
    groupId: string,
    kafka: Kafka = t.kafka,
    more: {
      partitionsConcurrently?: number
      handler?: (records: readonly JournalRecord[]) => Promise<void>
    } = {},
  ) {
    const consumer = createEventConsumer(
      { kind: 'kafka', kafka, topicPrefix: t.topicPrefix, sessionTimeoutMs: 6_000 },
      { pool: db.pool, groupId, streamTypes: ['conversation', 'analysis'], handler: async () => {}, ...more },
    )
    cleanups.push(() => consumer.stop())
    return consumer
  }

  it('stopped while it starts, holds no partition of its group once both are done', async () => {
    // Regression: stop() during start() disconnected a consumer still connecting and returned; the start
    // then subscribed and ran it: a member of the group owning partitions, with nobody to stop it (a
    // rebuild stops its replay consumers so when one fails to start; its next round then owned fewer).
    const groupId = uniqueGroupId('stopped-starting')
    const stopped = consumerOf(groupId)
    const starting = stopped.start()
    await stopped.stop()
    await starting
    // Another member of the group gets every partition (on the code this pins, half: the stopped one
    // kept the others).
    const other: EventConsumer = consumerOf(groupId)
    await other.start()
    await waitFor(() => other.stats.partitions.length === 4, {
      what: 'the other member to own all four partitions',
      timeoutMs: 20_000,
    })
    expect(stopped.stats.partitions).toEqual([])
  })

  it('started again while it stops, joins once the stop has ended, and leaves nothing behind', async () => {
    // Regression: a start asked for while a stop ran began at once: the stop then disconnected the
    // consumer the start had just made, and left the one it was stopping connected, a member of the group
    // holding partitions with nobody to stop it.
    const groupId = uniqueGroupId('started-stopping')
    const consumer = consumerOf(groupId)
    await consumer.start()
    await waitFor(() => consumer.stats.partitions.length === 4, {
      what: 'the consumer to own all four partitions',
      timeoutMs: 20_000,
    })
    const stopping = consumer.stop()
    const starting = consumer.start()
    await Promise.all([stopping, starting])
    await waitFor(() => consumer.stats.partitions.length === 4, {
      what: 'the consumer started again to own all four partitions',
      timeoutMs: 20_000,
    })
    await consumer.stop()
    // Another member of the group gets every partition: no consumer of the first start is left.
    const other = consumerOf(groupId)
    await other.start()
    await waitFor(() => other.stats.partitions.length === 4, {
      what: 'the other member to own all four partitions',
      timeoutMs: 20_000,
    })
  })

  it('whose start fails after its consumer connected, leaves it disconnected, each time', async () => {
    // Regression: a start that failed after the consumer connected (here: topics not co-partitioned,
    // with batches of several partitions at once) left it connected; each start asked for again made
    // another one, and a process closing without stopping the consumer (the projector's thread after a
    // failed start) kept its connections to the brokers.
    const admin = t.kafka.admin()
    await admin.connect()
    try {
      await admin.createPartitions({
        topicPartitions: [{ topic: topicFor('analysis', t.topicPrefix), count: 3 }],
      })
    } finally {
      await admin.disconnect()
    }
    // The real client, which also tells whether each consumer it made is connected.
    const made: { consumer: Consumer; connected: boolean }[] = []
    const kafka = Object.create(t.kafka) as Kafka
    kafka.consumer = (config) => {
      const consumer = t.kafka.consumer(config)
      const entry = { consumer, connected: false }
      consumer.on(consumer.events.CONNECT, () => {
        entry.connected = true
      })
      consumer.on(consumer.events.DISCONNECT, () => {
        entry.connected = false
      })
      made.push(entry)
      return consumer
    }
    const consumer = consumerOf(uniqueGroupId('failed-start'), kafka, { partitionsConcurrently: 2 })
    await expect(consumer.start()).rejects.toThrow(/differ in partition count/)
    await expect(consumer.start()).rejects.toThrow(/differ in partition count/)
    expect(made.map((m) => m.connected)).toEqual([false, false])
  })

  it('stopped for good by kafkajs (no group coordinator), starts again and applies what came meanwhile', async () => {
    // Regression: while a broker restarted, kafkajs failed to find the group coordinator, an error it
    // does not retry: it disconnected the consumer and started nothing again. The projector then applied
    // nothing more, with nothing to tell (the broker-restart fault test waited for it in vain). Here the
    // broker is real and running; the test's sockets refuse FindCoordinator requests (Kafka API key 10)
    // until it lets them through, which fails every join the same way.
    const gate = { refuseFindCoordinator: true }
    const kafka = new Kafka({
      brokers: t.brokers,
      clientId: 'test-no-coordinator',
      logLevel: logLevel.NOTHING,
      retry: { initialRetryTime: 100, retries: 2 },
      socketFactory: ({ host, port, onConnect }) => {
        const socket = net.connect({ host, port }, onConnect)
        const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean
        socket.write = ((chunk: unknown, ...rest: unknown[]) => {
          // A request: its size (4 bytes), then its API key (2 bytes).
          if (
            gate.refuseFindCoordinator &&
            Buffer.isBuffer(chunk) &&
            chunk.length >= 6 &&
            chunk.readInt16BE(4) === 10
          ) {
            socket.destroy(new Error('FindCoordinator refused by the test'))
            return false
          }
          return write(chunk, ...rest)
        }) as typeof socket.write
        return socket
      },
    })
    const applied: string[] = []
    const consumer = consumerOf(uniqueGroupId('no-coordinator'), kafka, {
      handler: async (records) => {
        applied.push(...records.map((r) => r.id))
      },
    })
    await consumer.start()
    // kafkajs stopped it for good, and it was started again: twice, so it goes on trying.
    await waitFor(() => consumer.stats.restarts >= 2, {
      what: 'the consumer to be started again after kafkajs stopped it',
      timeoutMs: 60_000,
    })
    expect(consumer.stats.partitions).toEqual([])

    // An event committed and produced meanwhile (as the relay would: consumers apply only what the
    // journal holds), then the coordinator found again: the consumer joins and applies it.
    const { records } = await withTransaction(db.pool, (client) => appendTestEvent(client, randomUUID()))
    const record: JournalRecord = records[0]!
    const streamId = record.streamId
    const producer = t.kafka.producer()
    await producer.connect()
    cleanups.push(() => producer.disconnect())
    await producer.send({
      topic: topicFor('conversation', t.topicPrefix),
      messages: [{ key: streamId, value: encodeRecord(record) }],
    })
    gate.refuseFindCoordinator = false
    await waitFor(() => applied.includes(record.id), {
      what: 'the event to be applied once the coordinator is found',
      timeoutMs: 60_000,
    })
    expect(consumer.stats.partitions).toHaveLength(4)
    // Started again, not twice over: one member of its group, applying once.
    expect(applied.filter((id) => id === record.id)).toHaveLength(1)
  })
})
