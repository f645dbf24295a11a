import type { InvitationsConfig, SignInConfig } from '@cas/config'
import { AppError } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { requestClient } from '../client-address.ts'
import { type RateLimitRedis, rateLimitStore } from '../rate-limit-redis.ts'
import { registerInvitationRoutes } from './invitation-routes.ts'
import { createInvitationMailer } from './mailer.ts'
import { registerMemberRoutes } from './member-routes.ts'
import { registerOrganizationRoutes } from './organization-routes.ts'

export interface OrganizationDeps {
  readonly pool: pg.Pool
  readonly keyring: Keyring
  readonly config: InvitationsConfig & Pick<SignInConfig, 'UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE'>
  readonly now: () => Date
  /** Shared rate-limit counters (REDIS_URL); in memory when absent. */
  readonly redis?: RateLimitRedis
}

/**
 * Teams: organizations, their members and invitations. Register after the sessions (registerAuth). The
 * two rate limits live in this plugin's scope: invitations created per organization, and the token routes
 * (which anyone may call) per client address.
 */
export async function registerOrganizations(app: FastifyInstance, deps: OrganizationDeps): Promise<void> {
  const { pool, config, now } = deps
  const mailer = config.SMTP_URL ? createInvitationMailer(config.SMTP_URL, config.SMTP_FROM) : undefined
  if (mailer) app.addHook('onClose', async () => mailer.close())

  await app.register(async (scope) => {
    await scope.register(rateLimit, {
      global: false,
      enableDraftSpec: true,
      ...rateLimitStore(deps.redis, 'cas-invitations:'),
      skipOnError: true,
      // Per client address, an IPv6 one by its /64: the key capture's limit and the sign-in lockout use too.
      keyGenerator: requestClient,
      errorResponseBuilder: (_request, context) =>
        new AppError('rate_limited', `Too many requests; retry in ${context.after}.`),
    })
    const invitationRateLimit = scope.rateLimit({
      max: config.INVITATION_RATE_LIMIT_PER_HOUR,
      timeWindow: 3_600_000,
      // Per organization: it bounds the emails one organization can make us send, whoever sends them.
      keyGenerator: (request) => `org:${request.session.orgId ?? requestClient(request)}`,
    })
    const addressRateLimit = scope.rateLimit({
      max: config.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
      timeWindow: 60_000,
    })
    registerMemberRoutes(scope, {
      pool,
      now,
      invitationTtlDays: config.INVITATION_TTL_DAYS,
      mailer,
      invitationRateLimit,
    })
    registerInvitationRoutes(scope, { pool, now, addressRateLimit })
    registerOrganizationRoutes(scope, { pool, keyring: deps.keyring, now })
  })
}
