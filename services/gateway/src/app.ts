import { originCheck, registerCookieSession } from '@cas/auth'
import { capture, invitations, sessions, valuesOf } from '@cas/config'
import { createHttpApp, type PoolUsage, type ReadinessCheck } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import { httpAppOptions, type ServiceModule } from '@cas/platform'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Logger } from 'pino'
import { registerAuth } from './auth/plugin.ts'
import { registerCapture } from './capture/routes.ts'
import { registerChatbots } from './chatbots/routes.ts'
import { registerTestConversation } from './chatbots/test-conversation.ts'
import type { GatewayAppConfig } from './config.ts'
import { startRetentionSweeper } from './erasure/retention.ts'
import { registerErasureRoutes } from './erasure/routes.ts'
import { CAPTURE_METRICS, RATE_LIMIT_METRICS } from './metrics.ts'
import { registerOrganizations } from './organizations/plugin.ts'
import { openRateLimitRedis } from './rate-limit-redis.ts'
import { registerTopicCommands } from './topics/routes.ts'

export interface GatewayDeps {
  readonly pool: pg.Pool
  /** Seals the personal data of captured events. */
  readonly keyring: Keyring
  /** The gateway's own variables (services/gateway/src/config.ts); each route module is given its part. */
  readonly config: GatewayAppConfig
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
  /** Injected for tests; the wall clock otherwise. */
  readonly now?: () => Date
  /** The pools whose saturation sheds requests (default: `pool`). */
  readonly sheddingPools?: readonly PoolUsage[]
  /**
   * More routes that read the dashboard session, registered in the gateway's session scope (the
   * all-in-one's query routes).
   */
  readonly sessionRoutes?: (scope: FastifyInstance) => Promise<void>
}

/**
 * The write side's HTTP service: sign-in, organizations and their members, chatbot commands and capture.
 * Built without listening, so tests drive it with app.inject.
 */
export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = await createHttpApp({
    logger: deps.logger,
    readiness: deps.readiness,
    ...httpAppOptions(deps.config, deps.sheddingPools ?? [deps.pool]),
  })
  await registerGateway(app, deps)
  return app
}

/** What the gateway's routes are given. */
export type GatewayRouteDeps = Pick<GatewayDeps, 'pool' | 'keyring' | 'config' | 'now' | 'sessionRoutes'>

/**
 * The gateway as a process composes it (startComposed): its routes, which keep their own background
 * sweeps (retention, expired sessions) and Redis connection, closed with the app.
 */
export function gatewayService(deps: GatewayRouteDeps): ServiceModule {
  return {
    name: 'gateway',
    metricSets: [CAPTURE_METRICS, RATE_LIMIT_METRICS],
    routes: (app) => registerGateway(app, deps),
    close: async () => {},
  }
}

/** Adds the gateway's routes to an app (its own, or the all-in-one's). */
export async function registerGateway(
  app: FastifyInstance,
  deps: GatewayRouteDeps & Partial<GatewayDeps>,
): Promise<void> {
  const now = deps.now ?? (() => new Date())
  const { pool, config } = deps
  // Its metrics from the start (the gateway's own app, or the all-in-one's: declared once either way).
  app.metrics.use(CAPTURE_METRICS)
  const rateLimitMetrics = app.metrics.use(RATE_LIMIT_METRICS)
  const redis = config.REDIS_URL
    ? await openRateLimitRedis(config.REDIS_URL, app.log, rateLimitMetrics)
    : undefined
  // Not quit(): with Redis down or hung it would wait for an answer that does not come.
  if (redis) app.addHook('onClose', async () => redis.redis.disconnect())
  const unauthenticatedLimit = {
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: config.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
  }
  // The Origin check first, on every route; the cookie session only in the scope of the routes that
  // read it (see registerCookieSession): capture, with its API key, makes none.
  const sessionConfig = valuesOf(sessions, config)
  app.addHook('onRequest', originCheck(sessionConfig.ALLOWED_ORIGINS))
  await app.register(async (dashboard) => {
    await registerCookieSession(dashboard, { pool, config: sessionConfig, now })
    await registerAuth(dashboard, {
      pool,
      config: { ...unauthenticatedLimit, SIGNUP_ENABLED: config.SIGNUP_ENABLED },
      now,
      redis,
    })
    await registerOrganizations(dashboard, {
      pool,
      keyring: deps.keyring,
      config: { ...valuesOf(invitations, config), ...unauthenticatedLimit },
      now,
      redis,
    })
    await registerChatbots(dashboard, { pool, keyring: deps.keyring, now })
    await registerTopicCommands(dashboard, { pool, now })
    await registerTestConversation(dashboard, { pool, keyring: deps.keyring, now })
    await registerErasureRoutes(dashboard, { pool, now })
    await deps.sessionRoutes?.(dashboard)
  })
  await registerCapture(app, {
    pool,
    keyring: deps.keyring,
    config: { ...valuesOf(capture, config), ...unauthenticatedLimit },
    now,
    redis,
  })
  startRetentionSweeper(app, {
    pool,
    now,
    intervalMs: config.RETENTION_SWEEP_MINUTES * 60_000,
    log: app.log,
  })
}
export { CAPTURE_METRICS, RATE_LIMIT_METRICS } from './metrics.ts'
