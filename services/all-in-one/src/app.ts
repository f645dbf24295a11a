import type { AllConfig } from '@cas/config'
import { Relay, relayBacklog } from '@cas/eventlog'
import {
  deadLetterReadiness,
  type Infrastructure,
  observeInfrastructure,
  observePipelineStatus,
  openInfrastructure,
  pipelineStatusReadiness,
  type RunningService,
} from '@cas/platform'
import {
  type AnalysisService,
  analysisSettings,
  analyzerReadiness,
  analyzerStatus,
  createAnalysisService,
  createAnalyzer,
} from '@cas/service-analysis'
import { buildGatewayApp } from '@cas/service-gateway'
import { PARTITIONS_AT_ONCE } from '@cas/service-projector'
import { type ProjectorThread, startProjectorThread } from '@cas/service-projector/thread'
import { registerDashboard, registerQueryRoutes } from '@cas/service-query'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

export interface AllInOne extends RunningService {
  readonly app: FastifyInstance
  readonly infra: Infrastructure
  /** The projector, run in a worker thread. */
  readonly projector: ProjectorThread
  readonly analysis: AnalysisService
  readonly relay?: Relay
}

/**
 * Every service in one process: the default `npm start`. Embedded Postgres and the journal-backed event
 * log unless DATABASE_URL / KAFKA_BROKERS say otherwise; with Kafka, the relay runs here too. Gateway and
 * query share one HTTP server, which also serves the dashboard (`opts.dashboardDir`, the built
 * services/web) at the base URL; the projector (in a worker thread of its own, with its own connections)
 * and the analysis service consume in the background.
 * This runner is the one place that composes services; the services themselves share only libs.
 */
export async function startAllInOne(
  config: AllConfig,
  log: Logger | false,
  parentLog: Logger,
  opts: { dashboardDir?: string } = {},
): Promise<AllInOne> {
  const infra = await openInfrastructure(config, parentLog, 'all-in-one', { reader: true })
  const stops: (() => Promise<unknown>)[] = [() => infra.close()]
  const stop = async () => {
    for (const s of stops.splice(0)) await s()
  }
  try {
    let relay: Relay | undefined
    if (infra.kafka) {
      const r = new Relay({
        pool: infra.pool,
        kafka: infra.kafka,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        batchSize: config.RELAY_BATCH_SIZE,
        maxInFlight: config.RELAY_MAX_IN_FLIGHT,
        log: (msg, fields) => parentLog.warn(fields ?? {}, msg),
      })
      await r.start()
      stops.unshift(() => r.stop())
      relay = r
    }
    // The projector in a thread of its own (see startProjectorThread): freshness halved under load.
    const projector = await startProjectorThread(
      {
        config,
        databaseUrl: infra.databaseUrl,
        log: log && { name: String(log.bindings().name ?? 'all-in-one'), level: log.level },
        poolSize: PARTITIONS_AT_ONCE + 2,
      },
      (msg, fields) => parentLog.error(fields ?? {}, msg),
    )
    stops.unshift(() => projector.stop())
    const analyzer = await createAnalyzer(config, (msg, fields) => parentLog.warn(fields ?? {}, msg))
    stops.unshift(async () => analyzer.close?.())
    const analysis = createAnalysisService({
      pool: infra.pool,
      keyring: infra.keyring,
      eventLog: infra.eventLog,
      analyzer,
      logger: log,
      ...analysisSettings(config),
    })
    await analysis.start()
    stops.unshift(() => analysis.stop())

    const now = () => new Date()
    const app = await buildGatewayApp({
      pool: infra.pool,
      keyring: infra.keyring,
      config,
      logger: log,
      readiness: [
        ...infra.readiness,
        analyzerReadiness(analyzer),
        ...pipelineStatusReadiness(infra.pool, ['projection', 'analysis'], now),
        deadLetterReadiness(infra.pool),
      ],
      now,
      sessionRoutes: (scope) =>
        registerQueryRoutes(scope, {
          readerPool: infra.readerPool!,
          now,
          readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
        }),
    })
    observeInfrastructure(app.metrics, infra)
    observePipelineStatus(app.metrics, infra.pool, ['projection', 'analysis'])
    app.metrics.observeConsumer(projector.consumer)
    app.metrics.observeConsumer(analysis.consumer)
    app.metrics.observeAnalysis({
      stats: analysis.worker.stats,
      jobs: () => analysis.jobs(),
      analyzer: () => analyzerStatus(analyzer),
    })
    if (relay) app.metrics.observeRelay({ stats: relay.stats, backlog: () => relayBacklog(infra.pool) })
    if (opts.dashboardDir) await registerDashboard(app, { root: opts.dashboardDir })
    stops.unshift(() => app.close())
    await app.listen({ port: config.PORT, host: config.HOST })
    return { app, infra, relay, projector, analysis, close: stop }
  } catch (err) {
    await stop()
    throw err
  }
}
