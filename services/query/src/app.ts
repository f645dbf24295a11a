import { registerSessions } from '@cas/auth'
import { type HttpConfig, type SessionConfig, sessions, valuesOf } from '@cas/config'
import { createHttpApp, type ReadinessCheck } from '@cas/http'
import { httpAppOptions, pipelineStatusReadiness, type ServiceModule } from '@cas/platform'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Logger } from 'pino'
import { registerDashboard } from './dashboard.ts'
import type { QueryDeps } from './deps.ts'
import { registerAnalyticsRoutes } from './routes/analytics.ts'
import { registerAuditRoutes } from './routes/audit.ts'
import { registerChatbotReadRoutes } from './routes/chatbots.ts'
import { registerConversationRoutes } from './routes/conversations.ts'
import { registerStatusRoutes } from './routes/status.ts'
import { registerTopicCommandRoutes } from './routes/topic-commands.ts'

export { builtDashboardDir, registerDashboard } from './dashboard.ts'
export type { QueryDeps } from './deps.ts'

export interface QueryAppDeps extends QueryDeps {
  /** The owner's pool: sessions are read with it (the reader role sees read models only). */
  readonly pool: pg.Pool
  /** TRUST_PROXY and load shedding, and the sessions. */
  readonly config: HttpConfig & SessionConfig
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
  /** The built dashboard (dist/web) to serve at the base URL; none when undefined. */
  readonly dashboardDir?: string
}

/**
 * The read side's HTTP service: dashboard reads (chatbots, conversations, analytics, the audit log, how
 * current they are) from the read models, through the row-level-security role, and the dashboard app
 * itself. Built without listening, so tests drive it with inject.
 */
export async function buildQueryApp(deps: QueryAppDeps): Promise<FastifyInstance> {
  const app = await createHttpApp({
    logger: deps.logger,
    readiness: deps.readiness,
    ...httpAppOptions(deps.config, [deps.readerPool]),
  })
  await registerQueryApp(app, deps)
  return app
}

async function registerQueryApp(
  app: FastifyInstance,
  deps: Omit<QueryAppDeps, 'logger' | 'readiness' | 'config'> & { readonly config: SessionConfig },
): Promise<void> {
  await registerSessions(app, { pool: deps.pool, config: valuesOf(sessions, deps.config), now: deps.now })
  await registerQueryRoutes(app, deps)
  if (deps.dashboardDir) await registerDashboard(app, { root: deps.dashboardDir })
}

/**
 * The query service as a process of its own composes it (startComposed): sessions (read only), the read
 * routes and the dashboard; its readiness describes every stage of the pipeline, as the dashboard shows
 * it. (The all-in-one registers the read routes in the gateway's session scope instead:
 * `registerQueryRoutes`.)
 */
export function queryService(
  deps: Omit<QueryAppDeps, 'logger' | 'readiness' | 'config'> & { readonly config: SessionConfig },
): ServiceModule {
  return {
    name: 'query',
    readiness: () => pipelineStatusReadiness(deps.pool, ['projection', 'analysis']),
    routes: (app) => registerQueryApp(app, deps),
    close: async () => {},
  }
}

/** Adds the read routes to an app that already has sessions (its own, or the all-in-one's). */
export async function registerQueryRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  await registerChatbotReadRoutes(app, deps)
  await registerConversationRoutes(app, deps)
  await registerAnalyticsRoutes(app, deps)
  await registerAuditRoutes(app, deps)
  await registerStatusRoutes(app, deps)
  await registerTopicCommandRoutes(app, deps)
}
