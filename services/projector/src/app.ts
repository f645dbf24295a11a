import {
  type BatchHandler,
  type BatchOrder,
  createEventConsumer,
  createLagProbe,
  type EventConsumer,
  type EventLogBackend,
  eventLogFields,
  StageReporter,
  type StreamType,
} from '@cas/eventlog'
import type { Keyring } from '@cas/keyring'
import {
  deadLetterReadiness,
  type Infrastructure,
  journalConflictReadiness,
  observePipelineStatus,
  PIPELINE_METRICS,
  pipelineStatusReadiness,
  type ServiceModule,
} from '@cas/platform'
import type pg from 'pg'
import type { Logger } from 'pino'
import { type Log, type ProjectionStats, projectionPipeline } from './projections/apply.ts'
import { groupLockKey, orderBatch } from './projections/batch-order.ts'

export interface ProjectorDeps {
  readonly pool: pg.Pool
  readonly eventLog: EventLogBackend
  /** Opens the sealed personal data of events. */
  readonly keyring: Keyring
  readonly logger: Logger | false
  /** Consumer group; every projector process of one deployment shares it and they split the partitions. */
  readonly groupId?: string
  readonly maxBatchSize?: number
  /** How often the projection's status is reported (default 2 s). */
  readonly statusIntervalMs?: number
}

export interface Projector {
  readonly consumer: EventConsumer
  readonly stats: ProjectionStats
  /**
   * Keeps the `projection` row of the pipeline status: how far the read models are behind every event
   * committed. Started and stopped with the consumer by whoever runs the projector.
   */
  readonly status: StageReporter
}

export const PROJECTOR_GROUP = 'projector'

/**
 * Transactions applying batches at the same time, ordered by `orderBatch`: the journal's four partitions,
 * or in Kafka mode the batches of one fetch in four groups. One at a time, the projector was what kept
 * Kafka freshness high (the measurements: bench/FINDINGS.md, "From source comments").
 */
export const PARTITIONS_AT_ONCE = 4

/**
 * The streams the read models are built from. Organization events (members, invitations) are not among
 * them: the gateway keeps that state, and the audit log, in the command's own transaction.
 */
export const PROJECTED_STREAM_TYPES = [
  'chatbot',
  'conversation',
  'analysis',
] as const satisfies readonly StreamType[]

/**
 * A conversation's analysis is applied after its messages (Kafka): a result that comes first makes a
 * placeholder row, which its message then has to find and complete, nearly twice the database work.
 */
export const ANALYSIS_AFTER_MESSAGES = { streamType: 'analysis', leader: 'conversation' } as const

/**
 * The projector: consumes the chatbot, conversation and analysis events and maintains the read models
 * (chatbots, conversations, messages, hourly rollups). Each batch and its checkpoint commit in one transaction and
 * the consumer drops stream versions already applied, so redelivery never double-counts.
 */
export function createProjector(deps: ProjectorDeps): Projector {
  const stats: ProjectionStats = { applied: 0, dropped: {} }
  const log = deps.logger || undefined
  const groupId = deps.groupId ?? PROJECTOR_GROUP
  const consumer = createEventConsumer(deps.eventLog, {
    pool: deps.pool,
    groupId,
    streamTypes: PROJECTED_STREAM_TYPES,
    // Large enough to catch up quickly after a backlog (the whole batch is written set-based); a projector
    // that keeps up gets small batches, whatever arrived since the last one.
    maxBatchSize: deps.maxBatchSize ?? 2_000,
    log: (msg, fields) => log?.warn(fields ?? {}, msg),
    onApplied: (records) => {
      for (const record of records) log?.info(eventLogFields(record), 'projected event')
    },
    partitionsConcurrently: PARTITIONS_AT_ONCE,
    trailing: ANALYSIS_AFTER_MESSAGES,
    // Read models only: the relay and the other journal readers pass a batch while it is applied.
    neverAppends: true,
    ...projectorBatches(groupId, deps.keyring, stats, (msg, fields) => log?.warn(fields ?? {}, msg)),
  })
  const probe = createLagProbe({
    pool: deps.pool,
    eventLog: deps.eventLog,
    groupId,
    streamTypes: PROJECTED_STREAM_TYPES,
  })
  const status = new StageReporter({
    pool: deps.pool,
    stage: 'projection',
    measure: () => probe.probe(),
    release: () => probe.close(),
    intervalMs: deps.statusIntervalMs,
    log: (msg, fields) => log?.warn(fields ?? {}, msg),
  })
  return { consumer, stats, status }
}

/**
 * Creates the projector on a process's infrastructure (its pool, keyring and event log) and starts it:
 * the consumer, then the status reporter. Its owner stops them in the reverse order.
 */
export async function startProjector(
  infra: Pick<ProjectorDeps, 'pool' | 'keyring' | 'eventLog'>,
  logger: Logger | false,
): Promise<Projector> {
  const projector = createProjector({
    pool: infra.pool,
    keyring: infra.keyring,
    eventLog: infra.eventLog,
    logger,
  })
  await projector.consumer.start()
  projector.status.start()
  return projector
}

/**
 * How the projector's consumer applies a batch: first ordered against the batches under way (in the
 * transaction, before it has an id: see `BatchOrder`), then run through the projector's steps (open,
 * skip the deleted, apply to the read models: `projectionPipeline`), whose drops it counts by reason.
 */
export function projectorBatches(
  groupId: string,
  keyring: Keyring,
  stats: ProjectionStats,
  log?: Log,
): { orderBatch: BatchOrder; handler: BatchHandler; droppedEvents: Record<string, number> } {
  const lockKey = groupLockKey(groupId)
  return {
    orderBatch: (records, client, sources) => orderBatch(client, lockKey, sources, records),
    ...projectionPipeline(keyring, stats, { consumer: groupId, log }).consumerOptions(),
  }
}

/**
 * What a process running the projection adds to its readiness and metrics, however it runs the
 * projector (here, or in a thread of its own): the `projection` stage's status and the dead letters, and
 * in Kafka mode the events left out as not in the journal.
 */
export function projectionStage(
  pool: pg.Pool,
  consumer: () => Pick<EventConsumer, 'groupId' | 'stats' | 'lag'>,
  kafka: boolean,
): Pick<ServiceModule, 'readiness' | 'metricSets' | 'metrics'> {
  return {
    metricSets: [PIPELINE_METRICS],
    readiness: () => [
      ...pipelineStatusReadiness(pool, ['projection']),
      deadLetterReadiness(pool),
      ...(kafka ? [journalConflictReadiness(pool)] : []),
    ],
    metrics: (metrics) => {
      observePipelineStatus(metrics, pool, ['projection'])
      metrics.observeConsumer(consumer())
    },
  }
}

/**
 * The projector as a process composes it (startComposed): its consumer and status reporter, started
 * before the process listens; the projection's readiness and metrics; (`statusRoute`, its own process)
 * GET /projector with its counters. Closing finishes and commits the batch in flight and leaves the group.
 */
export function projectorService(
  infra: Pick<Infrastructure, 'pool' | 'keyring' | 'eventLog'>,
  logger: Logger | false,
  opts: { readonly statusRoute?: boolean } = {},
): ServiceModule {
  let projector: Projector | undefined
  const running = () => {
    if (!projector) throw new Error('the projector has not started')
    return projector
  }
  return {
    name: 'projector',
    async start() {
      projector = await startProjector(infra, logger)
    },
    ...projectionStage(infra.pool, () => running().consumer, infra.eventLog.kind === 'kafka'),
    async routes(app) {
      if (!opts.statusRoute) return
      app.get('/projector', async () => ({
        ok: true,
        consumer: running().consumer.stats,
        projection: running().stats,
      }))
    },
    async close() {
      await projector?.status.stop()
      await projector?.consumer.stop()
    },
  }
}
