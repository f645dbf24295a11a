/**
 * Proves that kafkajs 2.2.4 (the project's client) works against the pinned broker version: Kafka 4.0 removed
 * old protocol versions (KIP-896), and kafkajs only negotiates within the ranges it knows. Re-run when bumping
 * KAFKA_VERSION or kafkajs.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { waitForTopicLeaders } from '@cas/eventlog'
import {
  type Admin,
  type Consumer,
  type EachMessagePayload,
  type IMemberAssignment,
  Kafka,
  logLevel,
  Partitioners,
} from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KAFKA_VERSION, type KafkaBroker, startKafka } from './broker'

let broker: KafkaBroker
let dataDir: string
let kafka: Kafka
let admin: Admin
const consumers: Consumer[] = []

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kafkajs-compat-'))
  broker = await startKafka({ dataDir })
  kafka = new Kafka({ clientId: 'kafkajs-compat', brokers: broker.brokers, logLevel: logLevel.NOTHING })
  admin = kafka.admin()
  await admin.connect()
}, 180_000)

afterAll(async () => {
  await Promise.allSettled(consumers.map((c) => c.disconnect()))
  await admin?.disconnect()
  await broker?.stop()
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function producer(opts: { idempotent?: boolean } = {}) {
  return kafka.producer({
    idempotent: opts.idempotent ?? false,
    maxInFlightRequests: opts.idempotent ? 1 : 5,
    createPartitioner: Partitioners.DefaultPartitioner,
  })
}

// kafkajs long-polls fetches for maxWaitTimeInMs (default 5 s), and disconnect, seek and joining a rebalance all
// wait for the poll in flight: keep it short in tests.
function consumer(groupId: string) {
  const c = kafka.consumer({
    groupId,
    sessionTimeout: 6000,
    heartbeatInterval: 300,
    rebalanceTimeout: 10_000,
    maxWaitTimeInMs: 100,
  })
  consumers.push(c)
  return c
}

async function createTopic(topic: string, numPartitions = 4) {
  expect(await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: false })).toBe(true)
  // kafkajs' own waitForLeaders (off above) gives up on UNKNOWN_TOPIC_OR_PARTITION, which a busy KRaft
  // broker answers at first.
  await waitForTopicLeaders(admin, [topic])
}

describe(`kafkajs 2.2.4 against Apache Kafka ${KAFKA_VERSION}`, () => {
  it('admin: createTopics, fetchTopicMetadata, listTopics, deleteTopics', async () => {
    await createTopic('compat-admin')
    expect(await admin.createTopics({ topics: [{ topic: 'compat-admin', numPartitions: 4 }] })).toBe(false)
    const { topics } = await admin.fetchTopicMetadata({ topics: ['compat-admin'] })
    expect(topics).toHaveLength(1)
    expect(topics[0]?.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3])
    expect(topics[0]?.partitions.every((p) => p.leader === 1 && p.isr.includes(1))).toBe(true)
    expect(await admin.listTopics()).toContain('compat-admin')
    const config = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2 /* TOPIC */, name: 'compat-admin', configNames: ['cleanup.policy'] }],
    })
    expect(config.resources[0]?.configEntries[0]?.configValue).toBe('delete')

    await admin.deleteTopics({ topics: ['compat-admin'] })
    await waitFor('topic deleted', async () => !(await admin.listTopics()).includes('compat-admin'))
  })

  it('producer acks=-1, idempotent=false: send and sendBatch; ListOffsets', async () => {
    await createTopic('compat-produce-a')
    await createTopic('compat-produce-b')
    const p = producer()
    await p.connect()
    try {
      const single = await p.send({
        topic: 'compat-produce-a',
        acks: -1,
        messages: [{ key: 'k1', value: 'v1', headers: { h: 'x' } }],
      })
      expect(single).toHaveLength(1)
      expect(single[0]?.errorCode).toBe(0)
      const batch = await p.sendBatch({
        acks: -1,
        topicMessages: [
          { topic: 'compat-produce-a', messages: range(50).map((i) => ({ key: `k${i}`, value: `a${i}` })) },
          { topic: 'compat-produce-b', messages: range(30).map((i) => ({ key: `k${i}`, value: `b${i}` })) },
        ],
      })
      expect(batch.every((r) => r.errorCode === 0)).toBe(true)
      const sum = async (topic: string) =>
        (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0)
      expect(await sum('compat-produce-a')).toBe(51)
      expect(await sum('compat-produce-b')).toBe(30)
      const byTime = await admin.fetchTopicOffsetsByTimestamp('compat-produce-a', Date.now() - 60_000)
      expect(byTime.map((p) => p.offset)).toEqual(['0', '0', '0', '0'])
    } finally {
      await p.disconnect()
    }
  })

  it('idempotent producer (InitProducerId) also works', async () => {
    await createTopic('compat-idempotent')
    const p = producer({ idempotent: true })
    await p.connect()
    try {
      const res = await p.send({ topic: 'compat-idempotent', acks: -1, messages: [{ key: 'a', value: '1' }] })
      expect(res[0]?.errorCode).toBe(0)
    } finally {
      await p.disconnect()
    }
  })

  it('consumer group: two members split 4 partitions, rebalance when one leaves', async () => {
    const topic = 'compat-group'
    const groupId = 'compat-group-g'
    await createTopic(topic)
    const assignments = new Map<string, number[]>()
    const received = new Map<string, Set<string>>() // member name -> "partition:offset"
    const partitionsSeen = new Map<string, Set<number>>()
    const start = async (name: string) => {
      const c = consumer(groupId)
      c.on(c.events.GROUP_JOIN, (e) => {
        const a = e.payload.memberAssignment as IMemberAssignment
        assignments.set(name, [...(a[topic] ?? [])].sort())
      })
      received.set(name, new Set())
      partitionsSeen.set(name, new Set())
      await c.connect()
      await c.subscribe({ topic, fromBeginning: true })
      await c.run({
        eachMessage: async ({ partition, message }: EachMessagePayload) => {
          received.get(name)?.add(`${partition}:${message.offset}`)
          partitionsSeen.get(name)?.add(partition)
        },
      })
      return c
    }
    const total = () => [...received.values()].reduce((n, s) => n + s.size, 0)

    const c1 = await start('c1')
    await waitFor('c1 owns all 4 partitions', () => assignments.get('c1')?.length === 4)
    await start('c2')
    await waitFor(
      'c1 and c2 own 2 partitions each',
      () => assignments.get('c1')?.length === 2 && assignments.get('c2')?.length === 2,
    )
    expect([...(assignments.get('c1') ?? []), ...(assignments.get('c2') ?? [])].sort()).toEqual([0, 1, 2, 3])

    const groups = await admin.describeGroups([groupId])
    expect(groups.groups[0]?.state).toBe('Stable')
    expect(groups.groups[0]?.members).toHaveLength(2)
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).toContain(groupId)

    const p = producer()
    await p.connect()
    try {
      await p.send({ topic, acks: -1, messages: range(40).map((i) => ({ key: `key-${i}`, value: `${i}` })) })
      await waitFor('all 40 messages consumed', () => total() === 40)
      for (const name of ['c1', 'c2']) {
        for (const partition of partitionsSeen.get(name) ?? [])
          expect(assignments.get(name)).toContain(partition)
      }

      const c2 = consumers[consumers.length - 1]
      await c2?.disconnect()
      await waitFor('c1 owns all 4 partitions again', () => assignments.get('c1')?.length === 4)
      await p.send({
        topic,
        acks: -1,
        messages: range(20).map((i) => ({ key: `key-${i}`, value: `late${i}` })),
      })
      await waitFor('c1 consumed the 20 later messages', () => total() === 60)
    } finally {
      await p.disconnect()
      await c1.disconnect()
    }
  })

  it('commitOffsets, fetchOffsets, seek, resume from committed offset, deleteGroups', async () => {
    const topic = 'compat-offsets'
    const groupId = 'compat-offsets-g'
    await createTopic(topic, 1)
    const p = producer()
    await p.connect()
    await p.send({ topic, acks: -1, messages: range(10).map((i) => ({ value: `m${i}` })) })
    await p.disconnect()

    const seen: string[] = []
    const c = consumer(groupId)
    await c.connect()
    await c.subscribe({ topic, fromBeginning: true })
    await c.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        seen.push(message.offset)
      },
    })
    await waitFor('10 messages', () => seen.length === 10)
    await c.commitOffsets([{ topic, partition: 0, offset: '5' }])
    const fetched = await admin.fetchOffsets({ groupId, topics: [topic] })
    expect(fetched[0]?.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '5' })])

    c.seek({ topic, partition: 0, offset: '2' })
    await waitFor('re-read from offset 2 after seek', () => seen.length === 18)
    expect(seen.slice(10)).toEqual(['2', '3', '4', '5', '6', '7', '8', '9'])
    await c.disconnect()

    const resumed: string[] = []
    const c2 = consumer(groupId)
    await c2.connect()
    await c2.subscribe({ topic, fromBeginning: true })
    await c2.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        resumed.push(message.offset)
      },
    })
    await waitFor('resume from committed offset 5', () => resumed.length === 5)
    expect(resumed).toEqual(['5', '6', '7', '8', '9'])
    await c2.disconnect()

    // (admin.setOffsets/resetOffsets work too, but each takes ~5 s: kafkajs runs an internal consumer for them.)
    const [deleted] = await admin.deleteGroups([groupId])
    expect(deleted?.groupId).toBe(groupId)
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain(groupId)
  })
})

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i)
}
