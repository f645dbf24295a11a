import { randomUUID } from 'node:crypto'
import {
  createKafka,
  createRelayProducer,
  encodeRecord,
  ensureTopics,
  readJournal,
  sendEvery,
  topicFor,
} from '@cas/eventlog'
import { ProduceAcks, Producer, stringSerializers } from '@platformatic/kafka'
import type { Producer as KafkajsProducer } from 'kafkajs'
import type pg from 'pg'
import { timed } from './stats.ts'

export type KafkaClient = 'kafkajs' | '@platformatic/kafka'

export interface ProduceResult {
  readonly client: KafkaClient
  /** Batches awaited at once: 1 is the relay's path (one batch in flight, then its checkpoint). */
  readonly inFlight: number
  readonly batchSize: number
  readonly events: number
  readonly seconds: number
  readonly eventsPerSecond: number
  readonly megabytesPerSecond: number
  /** This process's CPU (user + system) per event while producing: what the client costs, load aside. */
  readonly cpuMicrosPerEvent?: number
}

export interface CaptureEvents {
  /** The Kafka message values of one capture of a new conversation, as the relay encodes them. */
  readonly values: readonly { type: string; value: string }[]
}

/** The events a capture appended (the first capture in the journal of `pool`), encoded as the relay does. */
export async function captureEventValues(pool: pg.Pool): Promise<CaptureEvents> {
  const { records } = await readJournal(pool, { after: '0', limit: 1_000, streamTypes: ['conversation'] })
  const first = records[0]
  if (!first) throw new Error('no capture in the journal to take the event sizes from')
  const ofCapture = records.filter((r) => r.streamId === first.streamId)
  return { values: ofCapture.map((r) => ({ type: r.type, value: encodeRecord(r) })) }
}

interface Message {
  key: string
  value: string
  headers: Record<string, string>
}

/** `events` messages of a capture's sizes and types, keyed by a new stream id per capture. */
function messages(capture: CaptureEvents, events: number): Message[] {
  const out: Message[] = []
  while (out.length < events) {
    const key = randomUUID()
    for (const { type, value } of capture.values) {
      if (out.length < events) out.push({ key, value, headers: { 'event-type': type, 'event-version': '1' } })
    }
  }
  return out
}

/** Sends `all` in batches of `batchSize`, `inFlight` batches awaited at once. */
async function sendAll(
  all: Message[],
  batchSize: number,
  inFlight: number,
  send: (batch: Message[]) => Promise<unknown>,
) {
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < all.length) {
        const batch = all.slice(next, next + batchSize)
        next += batchSize
        await send(batch)
      }
    }),
  )
}

/**
 * Produces `events` messages of a capture's event sizes to the conversation topic (prefix `topicPrefix`,
 * created here), acks=all, with either client. With kafkajs it is the relay's own producer
 * (createRelayProducer, `inFlight` requests at once).
 */
export async function produce(opts: {
  client: KafkaClient
  brokers: readonly string[]
  topicPrefix: string
  capture: CaptureEvents
  events: number
  batchSize: number
  inFlight: number
}): Promise<ProduceResult> {
  const kafka = createKafka({ brokers: opts.brokers, logLevel: 'nothing' })
  const admin = kafka.admin()
  await admin.connect()
  await ensureTopics(admin, { prefix: opts.topicPrefix, partitions: 12, streamTypes: ['conversation'] })
  await admin.disconnect()
  const topic = topicFor('conversation', opts.topicPrefix)
  const all = messages(opts.capture, opts.events)
  const bytes = all.reduce((n, m) => n + m.value.length, 0)
  // A short warm-up batch: connections and metadata are not what is measured.
  const warmup = messages(opts.capture, opts.batchSize)
  let seconds: number
  let cpu = { user: 0, system: 0 }
  if (opts.client === 'kafkajs') {
    const producer: KafkajsProducer = createRelayProducer(kafka, { maxInFlight: opts.inFlight })
    await producer.connect()
    try {
      const send = (batch: Message[]) => sendEvery(producer, [{ topic, messages: batch }])
      await send(warmup)
      const before = process.cpuUsage()
      seconds = await timed(() => sendAll(all, opts.batchSize, opts.inFlight, send))
      cpu = process.cpuUsage(before)
    } finally {
      await producer.disconnect()
    }
  } else {
    const producer = new Producer({
      clientId: 'bench',
      bootstrapBrokers: [...opts.brokers],
      serializers: stringSerializers,
      acks: ProduceAcks.ALL,
      idempotent: false,
      autocreateTopics: false,
    })
    try {
      const send = (batch: Message[]) => producer.send({ messages: batch.map((m) => ({ topic, ...m })) })
      await send(warmup)
      const before = process.cpuUsage()
      seconds = await timed(() => sendAll(all, opts.batchSize, opts.inFlight, send))
      cpu = process.cpuUsage(before)
    } finally {
      await producer.close()
    }
  }
  return {
    client: opts.client,
    inFlight: opts.inFlight,
    batchSize: opts.batchSize,
    events: opts.events,
    seconds,
    eventsPerSecond: opts.events / seconds,
    megabytesPerSecond: bytes / 1e6 / seconds,
    cpuMicrosPerEvent: (cpu.user + cpu.system) / opts.events,
  }
}
