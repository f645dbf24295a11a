import type { Config } from '@cas/config'
import { createHttpApp, type ReadinessCheck } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Logger } from 'pino'
import { registerAuth } from './auth/plugin.ts'
import { registerCapture } from './capture/routes.ts'
import { registerChatbots } from './chatbots/routes.ts'

export interface GatewayDeps {
  readonly pool: pg.Pool
  readonly config: Config
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
  /** Injected for tests; the wall clock otherwise. */
  readonly now?: () => Date
}

/**
 * The write side's HTTP service: sign-in, chatbot commands and capture.
 * Built without listening, so tests drive it with app.inject.
 */
export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = await createHttpApp({
    logger: deps.logger,
    readiness: deps.readiness,
    trustProxy: deps.config.TRUST_PROXY,
  })
  await registerGateway(app, deps)
  return app
}

/** Adds the gateway's routes to an app (its own, or the all-in-one's). */
export async function registerGateway(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const now = deps.now ?? (() => new Date())
  await registerAuth(app, { pool: deps.pool, config: deps.config, now })
  await registerChatbots(app, { pool: deps.pool, now })
  await registerCapture(app, { pool: deps.pool, config: deps.config, now })
}
