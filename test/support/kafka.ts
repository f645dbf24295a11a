import { randomBytes } from 'node:crypto'
import {
  createEventConsumer,
  createKafka,
  type EventConsumer,
  ensureTopics,
  Relay,
  type RelayOptions,
  STREAM_TYPES,
  topicFor,
} from '@cas/eventlog'
import type { Kafka } from 'kafkajs'
import type { Pool } from 'pg'
import { inject } from 'vitest'
import { recordApplied } from './applied.ts'

/** Kafka bootstrap servers for this run, or null when Kafka tests are skipped (see global-setup.ts). */
export function kafkaBrokers(): string[] | null {
  return inject('kafkaBrokers')
}

export interface TestKafka {
  readonly kafka: Kafka
  readonly brokers: string[]
  /** Unique per call: every test gets its own topics (and should use its own group ids). */
  readonly topicPrefix: string
}

/** Creates the three event topics under a fresh prefix. */
export async function createTestTopics(partitions = 4): Promise<TestKafka> {
  const brokers = kafkaBrokers()
  if (!brokers) throw new Error('Kafka is not available in this run')
  // Tests assert outcomes; kafkajs' own error logs (rebalances under way) would only be noise.
  const kafka = createKafka({ brokers, clientId: 'test', logLevel: 'nothing' })
  const topicPrefix = `t${randomBytes(4).toString('hex')}.`
  const admin = kafka.admin()
  await admin.connect()
  try {
    await ensureTopics(admin, { prefix: topicPrefix, partitions })
  } finally {
    await admin.disconnect()
  }
  return { kafka, brokers, topicPrefix }
}

export function uniqueGroupId(name: string): string {
  return `${name}-${randomBytes(4).toString('hex')}`
}

/**
 * Every message now on the three event topics of `topicPrefix`, read raw from the earliest offset by a
 * plain kafkajs consumer of its own, the way `kafka-console-consumer --from-beginning` would.
 */
export async function readTopicsRaw(
  kafka: Kafka,
  topicPrefix: string,
): Promise<{ topic: string; key: string; value: string }[]> {
  const topics = STREAM_TYPES.map((t) => topicFor(t, topicPrefix))
  const admin = kafka.admin()
  await admin.connect()
  let expected = 0
  try {
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) expected += Number(p.high) - Number(p.low)
    }
  } finally {
    await admin.disconnect()
  }
  const messages: { topic: string; key: string; value: string }[] = []
  if (expected === 0) return messages
  const consumer = kafka.consumer({ groupId: uniqueGroupId('raw-reader') })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics, fromBeginning: true })
    let done: () => void = () => {}
    const all = new Promise<void>((resolve) => {
      done = resolve
    })
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        messages.push({ topic, key: message.key?.toString() ?? '', value: message.value?.toString() ?? '' })
        if (messages.length >= expected) done()
      },
    })
    await Promise.race([
      all,
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out reading the topics')), 30_000)),
    ])
  } finally {
    await consumer.disconnect()
  }
  return messages
}

/** A relay carrying `pool`'s journal to the test topics, polling every 5 ms (unless `opts` says), started. */
export async function startTestRelay(
  t: TestKafka,
  pool: Pool,
  opts: Partial<RelayOptions> = {},
): Promise<Relay> {
  const relay = new Relay({ pool, kafka: t.kafka, topicPrefix: t.topicPrefix, pollIntervalMs: 5, ...opts })
  await relay.start()
  return relay
}

/**
 * A Kafka consumer of the conversation streams in group `groupId`, writing each event it is handed into
 * `pool`'s test_applied (createAppliedTable), started.
 */
export async function startRecordingConsumer(
  t: TestKafka,
  pool: Pool,
  opts: { groupId: string; maxBatchSize: number },
): Promise<EventConsumer> {
  const consumer = createEventConsumer(
    { kind: 'kafka', kafka: t.kafka, topicPrefix: t.topicPrefix, sessionTimeoutMs: 6_000 },
    {
      pool,
      groupId: opts.groupId,
      streamTypes: ['conversation'],
      maxBatchSize: opts.maxBatchSize,
      handler: (records, client) => recordApplied(client, records),
    },
  )
  await consumer.start()
  return consumer
}
