import type { SessionConfig } from '@cas/config'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { originCheck } from './origin-check.ts'
import { loadSessionSecret } from './session-secret.ts'
import { PgSessionStore } from './session-store.ts'

export const SESSION_COOKIE = 'cas_session'

/** A busy dashboard rewrites its session row's last_seen_at at most this often. */
const SESSION_REFRESH_MS = 60_000

export interface SessionDeps {
  readonly pool: pg.Pool
  /** ALLOWED_ORIGINS and the session's secret and lifetimes. */
  readonly config: SessionConfig
  readonly now: () => Date
}

/**
 * Dashboard sessions for a whole app: the Origin check on mutating requests, then the cookie session read
 * from (and written to) Postgres. Every service that answers session routes registers this once, before
 * any route that calls requireUser or requirePermission; sessions started by the gateway work in the query service too.
 */
export async function registerSessions(app: FastifyInstance, deps: SessionDeps): Promise<void> {
  // First, so a forged request is refused before its session is even read.
  app.addHook('onRequest', originCheck(deps.config.ALLOWED_ORIGINS))
  await registerCookieSession(app, deps)
}

/**
 * The cookie session alone, for the routes of `app`'s scope: an app that also answers routes without
 * sessions (the gateway's capture) registers it in a scope of the session routes, with the Origin check
 * on the whole app. Outside that scope no session is made: for a request without the cookie,
 * @fastify/session makes a new one (an id and its signature) on every request, which was a seventh of
 * the gateway's CPU under a capture load.
 */
export async function registerCookieSession(app: FastifyInstance, deps: SessionDeps): Promise<void> {
  const { pool, config, now } = deps
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
}
