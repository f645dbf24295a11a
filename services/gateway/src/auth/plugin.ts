import type { Config } from '@cas/config'
import { AppError } from '@cas/http'
import fastifyCookie from '@fastify/cookie'
import rateLimit from '@fastify/rate-limit'
import fastifySession from '@fastify/session'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type pg from 'pg'
import { startExpirySweeper } from './expiry-sweeper.ts'
import { LOGIN_THROTTLE } from './login-throttle.ts'
import { originCheck } from './origin-check.ts'
import { createDummyHash } from './passwords.ts'
import { registerAuthRoutes, SESSION_COOKIE } from './routes.ts'
import { loadSessionSecret } from './session-secret.ts'
import { PgSessionStore } from './session-store.ts'

export { type Principal, requireSession } from './principal.ts'
export { revokeUserSessions } from './session-store.ts'

export interface AuthDeps {
  readonly pool: pg.Pool
  readonly config: Config
  readonly now: () => Date
  /** Shared rate-limit counters (REDIS_URL); in memory when absent. */
  readonly redis?: Redis
}

/** A busy dashboard rewrites its session row's last_seen_at at most this often. */
const SESSION_REFRESH_MS = 60_000
const SWEEP_INTERVAL_MS = 10 * 60_000

/**
 * Dashboard sign-in: the Origin check and the cookie session apply to the whole app (so chatbot and every
 * other session route get them), while the per-address rate limit stays inside this plugin's own scope.
 * Register before any route that calls requireSession.
 */
export async function registerAuth(app: FastifyInstance, deps: AuthDeps): Promise<void> {
  const { pool, config, now } = deps
  // First, so a forged request is refused before its session is even read.
  app.addHook('onRequest', originCheck(config.ALLOWED_ORIGINS))

  const absoluteMs = config.SESSION_ABSOLUTE_HOURS * 3_600_000
  await app.register(fastifyCookie)
  await app.register(fastifySession, {
    secret: await loadSessionSecret(pool, config.SESSION_SECRET),
    cookieName: SESSION_COOKIE,
    store: new PgSessionStore(pool, now, {
      idleMs: config.SESSION_IDLE_MINUTES * 60_000,
      absoluteMs,
      refreshMs: SESSION_REFRESH_MS,
    }),
    saveUninitialized: false,
    // Not rolling: the row's last_seen_at carries idle expiry, so a request needn't re-save the session.
    rolling: false,
    cookie: {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      // Secure whenever the request came over TLS, as Fastify sees it (X-Forwarded-Proto with TRUST_PROXY).
      secure: 'auto',
      // The browser may keep it until the absolute expiry; the row decides sooner ones.
      maxAge: absoluteMs,
    },
  })

  const dummyHash = await createDummyHash()
  await app.register(async (scope) => {
    // Registered in this scope only, so it limits the routes below and nothing the capture plugin owns.
    await scope.register(rateLimit, {
      global: false,
      enableDraftSpec: true,
      redis: deps.redis,
      nameSpace: 'cas-sign-in:',
      skipOnError: true,
      errorResponseBuilder: (_request, context) =>
        new AppError(
          'rate_limited',
          `Too many sign-in requests from this address; retry in ${context.after}.`,
        ),
    })
    // One budget per address shared by sign-up and login (per-route config would give each its own).
    const signInRateLimit = scope.rateLimit({
      max: config.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
      timeWindow: 60_000,
    })
    registerAuthRoutes(scope, { pool, config, now, dummyHash, signInRateLimit })
  })

  startExpirySweeper(app, {
    pool,
    now,
    throttleWindowMs: LOGIN_THROTTLE.windowMs,
    intervalMs: SWEEP_INTERVAL_MS,
  })
}
