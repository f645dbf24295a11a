/**
 * Event-log throughput on this machine: journal appends at several concurrencies, the journal consumer,
 * the relay into Kafka (once per --relay-in-flight value) and the Kafka consumer. Real servers with
 * durable settings (fsync on).
 *
 *   npm run bench:eventlog [-- --events 20000 --relay-batch 500 --relay-in-flight 1,4]
 *   npm run bench:eventlog -- --relay-only     # the journal seeded by multi-row inserts, then the relay only
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
  DEFAULT_RELAY_BATCH_SIZE,
  DEFAULT_RELAY_MAX_IN_FLIGHT,
  type EventLogBackend,
  ensureTopics,
  Relay,
} from '@cas/eventlog'
import type { Admin, Kafka } from 'kafkajs'
import type pg from 'pg'
import { seedJournal } from './support/journal-seed.ts'
import { benchKeyring } from './support/keyring.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { startBenchServers } from './support/servers.ts'
import { timed } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    'relay-batch': { type: 'string', default: String(DEFAULT_RELAY_BATCH_SIZE) },
    'relay-in-flight': { type: 'string', default: `1,${DEFAULT_RELAY_MAX_IN_FLIGHT}` },
    'relay-only': { type: 'boolean', default: false },
  },
})
const EVENTS = Number(values.events)
const RELAY_BATCH = Number(values['relay-batch'])
const RELAY_IN_FLIGHT = values['relay-in-flight'].split(',').map(Number)
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

  let total: number
  if (values['relay-only']) {
    // Four events per conversation (conversation and analysis streams), as the pipeline benchmark seeds.
    total = await seedJournal(pool, {
      orgId: ORG,
      chatbotId: CHATBOT,
      conversations: Math.ceil(EVENTS / 4),
      keyring: benchKeyring,
    })
    console.log(`journal seeded with ${total} events (multi-row inserts)`)
  } else {
    for (const concurrency of [1, 16, 64]) {
      const n = concurrency === 1 ? Math.min(EVENTS, 2_000) : EVENTS
      const seconds = await timed(() => appendMany(pool, n, concurrency))
      report(`journal append, 1 event per transaction, ${concurrency} concurrent`, n, seconds)
    }
    total = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_journal')).rows[0]!.n
    const journal: EventLogBackend = { kind: 'journal' }
    report('journal consumer (no-op handler)', total, await timed(() => consume(pool, journal, total)))
  }

  const kafka = createKafka({ brokers: kafkaBroker.brokers, logLevel: 'nothing' })
  const admin = kafka.admin()
  await admin.connect()
  // A warm-up (compiled code, connections), so that the first measurement is not the only one paying it.
  await relayAll(pool, kafka, admin, 'relay-warmup.', Math.min(total, 5_000), 1)
  for (const maxInFlight of RELAY_IN_FLIGHT) {
    const { seconds, cpuMicros } = await relayAll(
      pool,
      kafka,
      admin,
      `relay-${maxInFlight}.`,
      total,
      maxInFlight,
    )
    report(
      `relay journal → Kafka (acks=all, batches of ${RELAY_BATCH}, ${maxInFlight} in flight)`,
      total,
      seconds,
      `, relay CPU ${(cpuMicros / total).toFixed(0)} µs per event`,
    )
  }
  await admin.disconnect()
  if (!values['relay-only']) {
    // It reads what the last relay measurement published.
    const topicPrefix = `relay-${RELAY_IN_FLIGHT[RELAY_IN_FLIGHT.length - 1]}.`
    report(
      'Kafka consumer (no-op handler)',
      total,
      await timed(() => consume(pool, { kind: 'kafka', kafka, topicPrefix }, total)),
    )
  }
  await pool.end()
} finally {
  await servers.stop()
}

/**
 * Relays the journal from its start into topics of `topicPrefix` until `events` are published: the time
 * from the start (connecting included) to the last acknowledgement, and this process's CPU meanwhile
 * (Postgres and the broker are processes of their own), which is less sensitive than the rate to what
 * else the machine is doing.
 */
async function relayAll(
  pool: pg.Pool,
  kafka: Kafka,
  admin: Admin,
  topicPrefix: string,
  events: number,
  maxInFlight: number,
): Promise<{ seconds: number; cpuMicros: number }> {
  await ensureTopics(admin, { prefix: topicPrefix, partitions: 12 })
  await pool.query("DELETE FROM consumer_checkpoints WHERE group_id = '$relay'")
  const relay = new Relay({ pool, kafka, topicPrefix, batchSize: RELAY_BATCH, maxInFlight })
  const cpu = process.cpuUsage()
  const seconds = await timed(async () => {
    await relay.start()
    while (relay.stats.published < events) await new Promise((r) => setTimeout(r, 10))
  })
  const { user, system } = process.cpuUsage(cpu)
  await relay.stop()
  return { seconds, cpuMicros: user + system }
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

function report(what: string, events: number, seconds: number, extra = '') {
  console.log(
    `${what.padEnd(66)} ${Math.round(events / seconds)
      .toLocaleString('en')
      .padStart(9)} events/s${extra}`,
  )
}
