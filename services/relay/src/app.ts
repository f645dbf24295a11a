import { Relay, relayLag } from '@cas/eventlog'
import type { ServiceModule } from '@cas/platform'
import type { Kafka } from 'kafkajs'
import type pg from 'pg'
import type { Logger } from 'pino'
import { RELAY_METRICS } from './metrics.ts'

export { RELAY_METRICS, type RelaySource } from './metrics.ts'

export interface RelayServiceDeps {
  readonly pool: pg.Pool
  readonly kafka: Kafka
  readonly topicPrefix: string
  /** RELAY_BATCH_SIZE and RELAY_MAX_IN_FLIGHT (the relay's defaults when omitted). */
  readonly batchSize?: number
  readonly maxInFlight?: number
  readonly logger: Logger
}

/**
 * The relay (journal → Kafka) as a process composes it (startComposed): started before the process
 * listens, its metrics, /readyz's `details.relay` (whether it leads, since when), and (`statusRoute`, its
 * own process) GET /relay with its state. Closing lets the
 * batches in flight be acknowledged and checkpointed.
 */
export function relayService(
  deps: RelayServiceDeps,
  opts: { readonly statusRoute?: boolean } = {},
): ServiceModule & { readonly relay: Relay } {
  const relay = createRelay(deps)
  return {
    name: 'relay',
    relay,
    start: () => relay.start(),
    // Described, never checked: a standby is ready, to take over when the leader goes.
    readiness: () => [
      {
        name: 'relay',
        detail: () => ({ leader: relay.stats.isLeader, since: relay.stats.roleSince }),
      },
    ],
    metricSets: [RELAY_METRICS],
    metrics: (metrics) =>
      metrics.use(RELAY_METRICS).observe({ stats: relay.stats, lag: () => relayLag(deps.pool) }),
    routes: async (app) => {
      if (opts.statusRoute) app.get('/relay', async () => ({ ok: true, relay: relay.stats }))
    },
    close: () => relay.stop(),
  }
}

function createRelay(deps: RelayServiceDeps): Relay {
  return new Relay({
    pool: deps.pool,
    kafka: deps.kafka,
    topicPrefix: deps.topicPrefix,
    batchSize: deps.batchSize,
    maxInFlight: deps.maxInFlight,
    log: (msg, fields) => deps.logger.warn(fields ?? {}, msg),
  })
}
