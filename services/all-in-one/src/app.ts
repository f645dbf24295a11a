import type { Config } from '@cas/config'
import { Relay } from '@cas/eventlog'
import { type Infrastructure, openInfrastructure, type RunningService } from '@cas/platform'
import { buildGatewayApp } from '@cas/service-gateway'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

export interface AllInOne extends RunningService {
  readonly app: FastifyInstance
  readonly infra: Infrastructure
  readonly relay?: Relay
}

/**
 * Every service in one process: the default `npm start`. Embedded Postgres and the journal-backed event
 * log unless DATABASE_URL / KAFKA_BROKERS say otherwise; with Kafka, the relay runs here too.
 * This runner is the one place that composes services; the services themselves share only libs.
 */
export async function startAllInOne(
  config: Config,
  log: Logger | false,
  parentLog: Logger,
): Promise<AllInOne> {
  const infra = await openInfrastructure(config, parentLog, 'all-in-one')
  let relay: Relay | undefined
  try {
    if (infra.kafka) {
      relay = new Relay({
        pool: infra.pool,
        kafka: infra.kafka,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        log: (msg, fields) => parentLog.warn(fields ?? {}, msg),
      })
      await relay.start()
    }
    // The dashboard's read routes join the gateway's here as the query service gains them (issue #4).
    const app = await buildGatewayApp({ pool: infra.pool, config, logger: log, readiness: infra.readiness })
    await app.listen({ port: config.PORT, host: config.HOST })
    return {
      app,
      infra,
      relay,
      async close() {
        await app.close()
        await relay?.stop()
        await infra.close()
      },
    }
  } catch (err) {
    await relay?.stop()
    await infra.close()
    throw err
  }
}
