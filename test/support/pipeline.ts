import { loadConfig } from '@cas/config'
import { consumerLag, EMBEDDED_EVENT_LOG, type EventLogBackend, Relay, type StreamType } from '@cas/eventlog'
import { createProjector, PROJECTED_STREAM_TYPES } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { createTestDatabase, type TestDatabase } from './database.ts'
import { buildTestGateway } from './gateway.ts'
import { createTestTopics, kafkaBrokers, uniqueGroupId } from './kafka.ts'
import { testKeyring } from './keyring.ts'
import { projectorCaughtUp as journalCheckpointsCaughtUp } from './projector.ts'
import { waitFor } from './wait.ts'

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
  /** Kafka mode: the relay feeding them (stopped by `cleanups`). */
  readonly relay?: Relay
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
  const { app } = await buildTestGateway(db, env, now, { ownProjector: true })
  cleanups.push(() => app.close())
  if (mode === 'journal') return { db, app, eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: 5 } }
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
    relay,
    eventLog: {
      kind: 'kafka',
      kafka: topics.kafka,
      topicPrefix: topics.topicPrefix,
      sessionTimeoutMs: 6_000,
    },
  }
}

/**
 * Whether the consumer group has applied everything committed so far: its journal checkpoints are past
 * every readable event, or (Kafka) the relay has published everything and the group's checkpoints are
 * at the end of every partition. Counting applied events would not do: deleting a chatbot purges its
 * events from the journal, some of them never read.
 */
export async function consumerCaughtUp(
  pipeline: TestPipeline,
  groupId: string,
  streamTypes: readonly StreamType[] = PROJECTED_STREAM_TYPES,
): Promise<boolean> {
  const { db, eventLog } = pipeline
  // Not journalTotalLag: its bound is the cluster-wide xmin, which other tests' transactions hold back.
  if (eventLog.kind === 'journal')
    return journalCheckpointsCaughtUp(db.pool, groupId, eventLog.partitions ?? 1)
  if (!(await journalCheckpointsCaughtUp(db.pool, '$relay', 1))) return false
  return (await consumerLag(db.pool, eventLog, groupId, streamTypes)) === 0
}

/**
 * A projector with a group of its own on the pipeline's event log, stopped by `cleanups`. `projected()`
 * waits until it has applied everything committed so far.
 */
export async function startLiveProjector(pipeline: TestPipeline, cleanups: (() => Promise<unknown>)[]) {
  const groupId = uniqueGroupId('projector')
  const projector = createProjector({
    pool: pipeline.db.pool,
    keyring: testKeyring,
    eventLog: pipeline.eventLog,
    logger: false,
    groupId,
  })
  await projector.consumer.start()
  cleanups.push(() => projector.consumer.stop())
  const projected = async () => {
    await waitFor(() => consumerCaughtUp(pipeline, groupId), { what: 'the projector to catch up' })
  }
  return { groupId, projector, projected }
}

/**
 * An analysis service with a group of its own on the pipeline's event log, stopped by `cleanups`. Its
 * analyzer is configured by `analyzerEnv`: the lexical one by default (for tests of the consumer, not of
 * the model), the test model's with modelConfigEnv(). The analysis service is imported here, not at the
 * top: most tests of this harness never load it.
 */
export async function startLiveAnalysis(
  pipeline: TestPipeline,
  cleanups: (() => Promise<unknown>)[],
  analyzerEnv: Record<string, string> = { ANALYSIS_PROVIDER: 'lexical' },
) {
  const { createAnalysisService, createAnalyzer } = await import('@cas/service-analysis')
  const groupId = uniqueGroupId('analysis')
  const analysis = createAnalysisService({
    pool: pipeline.db.pool,
    keyring: testKeyring,
    eventLog: pipeline.eventLog,
    analyzer: await createAnalyzer(loadConfig({ DATABASE_URL: pipeline.db.url, ...analyzerEnv })),
    logger: false,
    groupId,
  })
  await analysis.start()
  cleanups.push(() => analysis.stop())
  return { groupId, analysis }
}
