import { createHttpApp, type ReadinessCheck } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

export interface QueryDeps {
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
}

/**
 * The read side's HTTP service: dashboard reads from the read models (issue #4 adds those routes).
 * Built without listening, so tests drive it with app.inject.
 */
export function buildQueryApp(deps: QueryDeps): Promise<FastifyInstance> {
  return createHttpApp({ logger: deps.logger, readiness: deps.readiness })
}
