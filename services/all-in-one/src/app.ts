import type { AllConfig } from '@cas/config'
import type { Relay } from '@cas/eventlog'
import {
  httpAppOptions,
  type Infrastructure,
  openInfrastructure,
  type RunningService,
  type ServiceModule,
  startComposed,
} from '@cas/platform'
import { type AnalysisService, analysisService } from '@cas/service-analysis'
import { gatewayService } from '@cas/service-gateway'
import { type ProjectorThread, projectorThreadService } from '@cas/service-projector/thread'
import { registerDashboard, registerQueryRoutes } from '@cas/service-query'
import { relayService } from '@cas/service-relay'
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
 * query share one HTTP server (the query routes in the gateway's session scope), which also serves the
 * dashboard (`opts.dashboardDir`, the built services/web) at the base URL; the projector (in a worker
 * thread of its own, with its own connections) and the analysis service consume in the background.
 * It only composes what each service exports (startComposed); the services share only libs.
 */
export async function startAllInOne(
  config: AllConfig,
  log: Logger | false,
  parentLog: Logger,
  opts: { dashboardDir?: string } = {},
): Promise<AllInOne> {
  const infra = await openInfrastructure(config, parentLog, 'all-in-one', { reader: true })
  const now = () => new Date()
  const relay = infra.kafka
    ? relayService({
        pool: infra.pool,
        kafka: infra.kafka,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        batchSize: config.RELAY_BATCH_SIZE,
        maxInFlight: config.RELAY_MAX_IN_FLIGHT,
        logger: parentLog,
      })
    : undefined
  // The projector in a thread of its own (see startProjectorThread): freshness halved under load.
  const projector = projectorThreadService(config, infra, log, (msg, fields) =>
    parentLog.error(fields ?? {}, msg),
  )
  const analysis = analysisService(infra, config, log)
  const gateway = gatewayService({
    pool: infra.pool,
    keyring: infra.keyring,
    config,
    now,
    sessionRoutes: (scope) =>
      registerQueryRoutes(scope, {
        readerPool: infra.readerPool!,
        now,
        readYourWritesTimeoutMs: config.READ_YOUR_WRITES_TIMEOUT_MS,
      }),
  })
  const dashboard: ServiceModule = {
    name: 'dashboard',
    routes: async (app) => {
      if (opts.dashboardDir) await registerDashboard(app, { root: opts.dashboardDir })
    },
    close: async () => {},
  }
  const services = [...(relay ? [relay] : []), projector, analysis, gateway, dashboard]
  const composed = await startComposed({
    infra,
    config,
    logger: log,
    http: httpAppOptions(config, [infra.pool]),
    services,
  })
  return {
    app: composed.app,
    infra,
    relay: relay?.relay,
    projector: projector.thread!,
    analysis: analysis.service!,
    close: composed.close,
  }
}
