import { type EventLogBackend, Relay } from '@cas/eventlog'
import type { FastifyInstance } from 'fastify'
import { createTestDatabase, type TestDatabase } from './database.ts'
import { buildTestGateway } from './gateway.ts'
import { createTestTopics, kafkaBrokers } from './kafka.ts'

/** The two ways events reach consumers: the journal read directly, or Kafka fed by the relay. */
export const EVENT_LOG_MODES = [
  { name: 'journal', available: true },
  { name: 'kafka', available: kafkaBrokers() !== null },
] as const

export type EventLogMode = (typeof EVENT_LOG_MODES)[number]['name']

export interface TestPipeline {
  readonly db: TestDatabase
  /** The dashboard's HTTP surface (gateway and query routes). */
  readonly app: FastifyInstance
  /** What consumers read: the journal, or Kafka topics of their own that a running relay feeds. */
  readonly eventLog: EventLogBackend
}

/**
 * A fresh database, the dashboard app on it, and the event log of `mode`; everything it starts is
 * pushed onto `cleanups` (to run in reverse order after the test).
 */
export async function startPipeline(
  mode: EventLogMode,
  cleanups: (() => Promise<unknown>)[],
  env: Record<string, string> = {},
  /** The gateway's clock (the wall clock by default). */
  now?: () => Date,
): Promise<TestPipeline> {
  const db = await createTestDatabase()
  cleanups.push(() => db.drop())
  const { app } = await buildTestGateway(db, env, now)
  cleanups.push(() => app.close())
  if (mode === 'journal') return { db, app, eventLog: { kind: 'journal', pollIntervalMs: 5 } }
  const topics = await createTestTopics(4)
  const relay = new Relay({
    pool: db.pool,
    kafka: topics.kafka,
    topicPrefix: topics.topicPrefix,
    pollIntervalMs: 5,
  })
  await relay.start()
  cleanups.push(() => relay.stop())
  return {
    db,
    app,
    eventLog: {
      kind: 'kafka',
      kafka: topics.kafka,
      topicPrefix: topics.topicPrefix,
      sessionTimeoutMs: 6_000,
    },
  }
}
