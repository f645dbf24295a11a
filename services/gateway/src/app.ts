import { createHttpApp, type ReadinessCheck } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'

export interface GatewayDeps {
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
}

/**
 * The write side's HTTP service: capture, chatbot commands and sign-in (issue #3 adds those routes).
 * Built without listening, so tests drive it with app.inject.
 */
export function buildGatewayApp(deps: GatewayDeps): FastifyInstance {
  return createHttpApp({ logger: deps.logger, readiness: deps.readiness })
}
