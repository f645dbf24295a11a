import { randomBytes } from 'node:crypto'
import { createKafka, ensureTopics } from '@cas/eventlog'
import type { Kafka } from 'kafkajs'
import { inject } from 'vitest'

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
