/**
 * Event-log throughput on this machine: journal appends at several concurrencies, the journal consumer,
 * the relay into Kafka and the Kafka consumer. Real servers with durable settings (fsync on).
 *
 *   npm run bench:eventlog [-- --events 20000]
 *
 * Prints the machine, then one line per measurement.
 */
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { createPool, migrate, withTransaction } from '@cas/db'
import {
  appendToStream,
  createEventConsumer,
  createKafka,
  type EventLogBackend,
  ensureTopics,
  Relay,
} from '@cas/eventlog'
import type pg from 'pg'
import { machineInfo, machineLine } from './support/machine.ts'
import { startBenchServers } from './support/servers.ts'
import { timed } from './support/stats.ts'

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' } } })
const EVENTS = Number(values.events)
const ORG = randomUUID()
const CHATBOT = randomUUID()
// A capture of ten short messages: the typical conversation.messages-captured payload.
const PAYLOAD = {
  messages: Array.from({ length: 10 }, (_, i) => ({
    id: `m-${i}`,
    role: i % 2 ? 'assistant' : 'user',
    content: 'How do I reset my password? I tried the link in the email but it expired.',
    sentAt: new Date().toISOString(),
  })),
  receivedAt: new Date().toISOString(),
  analysisRequested: true,
}

const servers = await startBenchServers({ name: 'eventlog', kafka: true })
const { postgres } = servers
const kafkaBroker = servers.kafka!
try {
  await migrate(postgres.url)
  const pool = createPool(postgres.url, { max: 80 })
  console.log(
    machineLine(await machineInfo({ databaseUrl: postgres.url, kafkaVersion: kafkaBroker.version })),
  )
  console.log(`events per measurement: ${EVENTS}, payload ${JSON.stringify(PAYLOAD).length} bytes`)

  for (const concurrency of [1, 16, 64]) {
    const n = concurrency === 1 ? Math.min(EVENTS, 2_000) : EVENTS
    const seconds = await timed(() => appendMany(pool, n, concurrency))
    report(`journal append, 1 event per transaction, ${concurrency} concurrent`, n, seconds)
  }
  const total = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_journal')).rows[0]!.n

  const journal: EventLogBackend = { kind: 'journal' }
  report('journal consumer (no-op handler)', total, await timed(() => consume(pool, journal, total)))

  const kafka = createKafka({ brokers: kafkaBroker.brokers, logLevel: 'nothing' })
  const admin = kafka.admin()
  await admin.connect()
  await ensureTopics(admin, { partitions: 12 })
  await admin.disconnect()
  const relay = new Relay({ pool, kafka, batchSize: 1_000 })
  const relaySeconds = await timed(async () => {
    await relay.start()
    while (relay.stats.published < total) await new Promise((r) => setTimeout(r, 10))
  })
  await relay.stop()
  report('relay journal → Kafka (acks=all)', total, relaySeconds)
  report(
    'Kafka consumer (no-op handler)',
    total,
    await timed(() => consume(pool, { kind: 'kafka', kafka }, total)),
  )
  await pool.end()
} finally {
  await servers.stop()
}

async function appendMany(pool: pg.Pool, n: number, concurrency: number) {
  let next = 0
  const streams = Array.from({ length: 1_000 }, () => randomUUID())
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const streamId = streams[next++ % streams.length]!
        await withTransaction(pool, (c) =>
          appendToStream(c, {
            streamType: 'conversation',
            streamId,
            orgId: ORG,
            chatbotId: CHATBOT,
            expectedVersion: 'any',
            events: [{ type: 'conversation.messages-captured', version: 1, payload: PAYLOAD }],
          }),
        )
      }
    }),
  )
}

async function consume(pool: pg.Pool, backend: EventLogBackend, total: number) {
  let applied = 0
  const consumer = createEventConsumer(backend, {
    pool,
    groupId: `bench-${randomUUID()}`,
    streamTypes: ['conversation'],
    maxBatchSize: 1_000,
    handler: async (records) => {
      applied += records.length
    },
  })
  await consumer.start()
  while (applied < total) await new Promise((r) => setTimeout(r, 10))
  await consumer.stop()
}

function report(what: string, events: number, seconds: number) {
  console.log(
    `${what.padEnd(58)} ${Math.round(events / seconds)
      .toLocaleString('en')
      .padStart(9)} events/s`,
  )
}
