import type { SignInConfig } from '@cas/config'
import { AppError } from '@cas/http'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { requestClient } from '../client-address.ts'
import { type RateLimitRedis, rateLimitStore } from '../rate-limit-redis.ts'
import { startExpirySweeper } from './expiry-sweeper.ts'
import { LOGIN_THROTTLE } from './login-throttle.ts'
import { createDummyHash } from './passwords.ts'
import { registerAuthRoutes } from './routes.ts'

export { type Principal, requirePermission, requireUser, revokeUserSessions } from '@cas/auth'

export interface AuthDeps {
  readonly pool: pg.Pool
  readonly config: Pick<SignInConfig, 'SIGNUP_ENABLED' | 'UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE'>
  readonly now: () => Date
  /** Shared rate-limit counters (REDIS_URL); in memory when absent. */
  readonly redis?: RateLimitRedis
}

const SWEEP_INTERVAL_MS = 10 * 60_000

/**
 * Dashboard sign-in, on an app (or scope) that has sessions (`registerSessions`, or the gateway's session
 * scope): the per-address rate limit stays inside this plugin's own scope.
 */
export async function registerAuth(app: FastifyInstance, deps: AuthDeps): Promise<void> {
  const { pool, config, now } = deps
  const dummyHash = await createDummyHash()
  await app.register(async (scope) => {
    // Registered in this scope only, so it limits the routes below and nothing the capture plugin owns.
    await scope.register(rateLimit, {
      global: false,
      enableDraftSpec: true,
      ...rateLimitStore(deps.redis, 'cas-sign-in:'),
      skipOnError: true,
      // Per client address, an IPv6 one by its /64: the key capture's limit and the sign-in lockout use too.
      keyGenerator: requestClient,
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
    registerAuthRoutes(scope, { pool, signupEnabled: config.SIGNUP_ENABLED, now, dummyHash, signInRateLimit })
  })

  startExpirySweeper(app, {
    pool,
    now,
    throttleWindowMs: LOGIN_THROTTLE.windowMs,
    intervalMs: SWEEP_INTERVAL_MS,
  })
}
