import { requireUser, SESSION_COOKIE } from '@cas/auth'
import { AppError, documented, errorResponses, eventTrace, rateLimitHeaders } from '@cas/http'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { requestClient } from '../client-address.ts'
import { type Account, createAccount, findAccount, findUserForLogin } from './accounts.ts'
import {
  type AttemptDecision,
  clearLoginFailures,
  LOGIN_THROTTLE,
  recordLoginAttempt,
} from './login-throttle.ts'
import { hashPassword, verifyPassword } from './passwords.ts'
import {
  accountExample,
  accountResponseSchema,
  loginBodySchema,
  okResponseSchema,
  signupBodySchema,
} from './schemas.ts'

/** One message for an unknown email and a wrong password, so the answer doesn't reveal which accounts exist. */
export const INVALID_CREDENTIALS = 'The email or password is incorrect.'

export interface AuthRouteDeps {
  readonly pool: pg.Pool
  /** SIGNUP_ENABLED: false refuses self-service sign-ups. */
  readonly signupEnabled: boolean
  readonly now: () => Date
  /** Verified against when the email is unknown (see createDummyHash). */
  readonly dummyHash: string
  /** The per-client-address limit for the unauthenticated sign-in routes. */
  readonly signInRateLimit: preHandlerAsyncHookHandler
}

const TAGS = ['auth']
const SESSION_SECURITY = [{ session: [] }]

export function registerAuthRoutes(scope: FastifyInstance, deps: AuthRouteDeps): void {
  const { pool, signupEnabled, now, dummyHash, signInRateLimit } = deps
  const app = scope.withTypeProvider<ZodTypeProvider>()

  app.post(
    '/api/v1/auth/signup',
    {
      schema: {
        tags: TAGS,
        operationId: 'signUp',
        summary: 'Create an account and an organization with this person as its owner, and sign in',
        description:
          'Creates a person (email, password of at least 10 characters, optional name) and an organization ' +
          'they own, and signs them in: the answer sets the session cookie (cas_session) that the dashboard ' +
          "routes read. 409 when the email already has an account; 403 when the server's SIGNUP_ENABLED is " +
          'false. Rate-limited per client address (UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE).',
        security: [],
        body: signupBodySchema,
        response: {
          200: documented(accountResponseSchema, {
            description: 'Signed up and signed in: the new account, working in its new organization.',
            example: accountExample,
            headers: rateLimitHeaders,
          }),
          ...errorResponses('invalid_request', 'forbidden', 'conflict', 'rate_limited'),
        },
      },
      onRequest: signInRateLimit,
      // Before validation, so a disabled sign-up says so whatever the body.
      preValidation: async () => {
        if (!signupEnabled) throw new AppError('forbidden', 'Sign-up is disabled on this server.')
      },
    },
    async (request) => {
      const { email, password, organizationName } = request.body
      // Hashed before the transaction, so no connection is held during the slow part.
      const passwordHash = await hashPassword(password)
      const created = await createAccount(
        pool,
        { email, name: request.body.name ?? defaultName(email), passwordHash, organizationName },
        now,
        eventTrace(request),
      )
      if (created === 'email_taken')
        throw new AppError('conflict', 'An account with this email already exists.')
      return signIn(request, pool, created.user.id, created.orgId)
    },
  )

  app.post(
    '/api/v1/auth/login',
    {
      schema: {
        tags: TAGS,
        operationId: 'logIn',
        summary: 'Sign in with email and password',
        description:
          'Checks the password and starts a session (the cas_session cookie), working in the first ' +
          'organization the person joined. A wrong email and a wrong password get the same 401. After ' +
          `${LOGIN_THROTTLE.maxFailuresPerClient} failed attempts for one email from one client address ` +
          "(an IPv6 address's /64) " +
          `within 15 minutes, or ${LOGIN_THROTTLE.maxFailuresPerEmail} from all addresses together, 429 ` +
          'with Retry-After (a sign-in from another address is not held back by the first); the sign-in ' +
          'routes are also rate-limited per client address.',
        security: [],
        body: loginBodySchema,
        response: {
          200: documented(accountResponseSchema, {
            description: 'Signed in: the account, and the session cookie in Set-Cookie.',
            example: accountExample,
            headers: rateLimitHeaders,
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'rate_limited'),
        },
      },
      onRequest: signInRateLimit,
    },
    async (request, reply) => {
      const { email, password } = request.body
      // The client the per-address rate limit keys on too: an IPv6 address by its /64.
      const client = requestClient(request)
      const attempt = await recordLoginAttempt(pool, email, client, now())
      if (!attempt.allowed) refuseThrottled(reply, attempt)
      const candidate = await findUserForLogin(pool, email)
      const valid = await verifyPassword(candidate?.passwordHash ?? dummyHash, password)
      if (!candidate || !valid) throw new AppError('unauthorized', INVALID_CREDENTIALS)
      await clearLoginFailures(pool, email, client)
      // Someone who belongs to no organization (removed from their only one) still signs in, to none.
      return signIn(request, pool, candidate.userId, undefined)
    },
  )

  app.post(
    '/api/v1/auth/logout',
    {
      schema: {
        tags: TAGS,
        operationId: 'logOut',
        summary: 'Sign out: the session is destroyed server-side',
        description:
          'Destroys the session on the server and clears the cookie. Idempotent: without a valid session it ' +
          'still answers 200. 403 only for a cross-site request (the Origin check).',
        security: SESSION_SECURITY,
        response: {
          200: documented(okResponseSchema, { description: 'Signed out.', example: { ok: true } }),
          ...errorResponses('forbidden'),
        },
      },
    },
    async (request, reply) => {
      // Idempotent: signing out without a (valid) session still succeeds and clears the cookie.
      if (request.session.userId) await request.session.destroy()
      reply.clearCookie(SESSION_COOKIE, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: request.protocol === 'https',
      })
      return { ok: true as const }
    },
  )

  app.get(
    '/api/v1/auth/me',
    {
      schema: {
        tags: TAGS,
        operationId: 'getAccount',
        summary: 'The signed-in person, the organization they work in and every one they belong to',
        description:
          "The session's person, the organization the session works in (with the role's permissions there, " +
          'which the dashboard uses to show what the role may do), and every organization they belong to.',
        security: SESSION_SECURITY,
        response: {
          200: documented(accountResponseSchema, {
            description: 'The signed-in account.',
            example: accountExample,
          }),
          ...errorResponses('unauthorized'),
        },
      },
    },
    async (request) => {
      const signedIn = requireUser(request)
      return { ok: true as const, ...(await accountOf(request, pool, signedIn.userId, signedIn.orgId)) }
    },
  )

  app.put(
    '/api/v1/auth/organization',
    {
      schema: {
        tags: TAGS,
        operationId: 'switchOrganization',
        summary: 'Switch the organization this session works in (one the person belongs to)',
        description:
          "Every dashboard read and command works in the session's current organization; this switches it, " +
          'from the answer on. 404 for an organization the person does not belong to (whether or not it exists).',
        security: SESSION_SECURITY,
        body: z.strictObject({ organizationId: z.string().describe('The id of one of your organizations.') }),
        response: {
          200: documented(accountResponseSchema, {
            description: 'Switched: the account, now working in that organization.',
            example: accountExample,
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { userId } = requireUser(request)
      const { organizationId } = request.body
      const account = await findAccount(pool, userId, organizationId.toLowerCase())
      if (!account) throw signedOut()
      // Another organization's id reads as unknown (API.md: never reveal existence).
      if (!account.organization)
        throw new AppError('not_found', 'You belong to no organization with this id.')
      await switchOrganization(request, account.organization.id)
      return { ok: true as const, ...account }
    },
  )
}

/**
 * Starts a session for a person who just proved who they are, working in `orgId` (undefined: the first
 * organization they joined), and answers with their account. A fresh session id at every sign-in, so an
 * id planted before it (session fixation) is worth nothing.
 */
export async function signIn(
  request: FastifyRequest,
  pool: pg.Pool,
  userId: string,
  orgId: string | undefined,
) {
  const account = await findAccount(pool, userId, orgId)
  if (!account) throw signedOut()
  await request.session.regenerate()
  request.session.set('userId', userId)
  request.session.set('orgId', account.organization?.id ?? null)
  // Saved here rather than in onSend, so a failure to store it fails the request like any other error.
  await request.session.save()
  return { ok: true as const, ...account }
}

/** Makes `orgId` the organization the session works in, from its next request on (and this one's answer). */
export async function switchOrganization(request: FastifyRequest, orgId: string | null): Promise<void> {
  request.session.set('orgId', orgId)
  await request.session.save()
}

/** The account of a session's person, working where the session says (none when it says none). */
export async function accountOf(
  request: FastifyRequest,
  pool: pg.Pool,
  userId: string,
  orgId: string | null,
): Promise<Account> {
  const account = await findAccount(pool, userId, orgId)
  if (!account) {
    // Sessions go with their person (ON DELETE CASCADE); this only covers a delete racing this request.
    await request.session.destroy()
    throw signedOut()
  }
  return account
}

const signedOut = () => new AppError('unauthorized', 'Sign in first.')

function refuseThrottled(reply: FastifyReply, attempt: Extract<AttemptDecision, { allowed: false }>): never {
  reply.header('retry-after', String(attempt.retryAfterSeconds))
  reply.header('ratelimit-limit', String(attempt.maxFailures))
  reply.header('ratelimit-remaining', '0')
  reply.header('ratelimit-reset', String(attempt.retryAfterSeconds))
  throw new AppError(
    'rate_limited',
    attempt.limit === 'client'
      ? 'Too many failed sign-in attempts for this email from this address; try again later.'
      : 'Too many failed sign-in attempts for this email; try again later.',
  )
}

/** The part of the email before the @: a recognisable name until the user picks one. */
function defaultName(email: string): string {
  return email.slice(0, email.lastIndexOf('@')).slice(0, 100)
}
