import { Relay, relayBacklog } from '@cas/eventlog'
import { createHttpApp, type ReadinessCheck } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { Kafka } from 'kafkajs'
import type pg from 'pg'
import type { Logger } from 'pino'

export interface RelayServiceDeps {
  readonly pool: pg.Pool
  readonly kafka: Kafka
  readonly topicPrefix: string
  /** RELAY_BATCH_SIZE and RELAY_MAX_IN_FLIGHT (the relay's defaults when omitted). */
  readonly batchSize?: number
  readonly maxInFlight?: number
  readonly logger: Logger
  readonly readiness: readonly ReadinessCheck[]
}

/** The relay (journal → Kafka) plus a small HTTP server for its health and state. */
export async function buildRelayService(
  deps: RelayServiceDeps,
): Promise<{ relay: Relay; app: FastifyInstance }> {
  const relay = new Relay({
    pool: deps.pool,
    kafka: deps.kafka,
    topicPrefix: deps.topicPrefix,
    batchSize: deps.batchSize,
    maxInFlight: deps.maxInFlight,
    log: (msg, fields) => deps.logger.warn(fields ?? {}, msg),
  })
  const app = await createHttpApp({ logger: deps.logger, readiness: deps.readiness })
  app.metrics.observePool('primary', deps.pool)
  app.metrics.observeRelay({ stats: relay.stats, backlog: () => relayBacklog(deps.pool) })
  app.get('/relay', async () => ({ ok: true, relay: relay.stats }))
  return { relay, app }
}
