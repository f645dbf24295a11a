import { requireSession, SESSION_COOKIE } from '@cas/auth'
import type { Config } from '@cas/config'
import { AppError, errorResponses } from '@cas/http'
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { type Account, createAccount, findAccount, findAccountForLogin } from './accounts.ts'
import { clearLoginFailures, LOGIN_THROTTLE, recordLoginAttempt } from './login-throttle.ts'
import { hashPassword, verifyPassword } from './passwords.ts'
import { accountResponseSchema, loginBodySchema, okResponseSchema, signupBodySchema } from './schemas.ts'

/** One message for an unknown email and a wrong password, so the answer doesn't reveal which accounts exist. */
export const INVALID_CREDENTIALS = 'The email or password is incorrect.'

export interface AuthRouteDeps {
  readonly pool: pg.Pool
  readonly config: Config
  readonly now: () => Date
  /** Verified against when the email is unknown (see createDummyHash). */
  readonly dummyHash: string
  /** The per-client-address limit for the unauthenticated sign-in routes. */
  readonly signInRateLimit: preHandlerAsyncHookHandler
}

const TAGS = ['auth']
const SESSION_SECURITY = [{ session: [] }]

export function registerAuthRoutes(scope: FastifyInstance, deps: AuthRouteDeps): void {
  const { pool, config, now, dummyHash, signInRateLimit } = deps
  const app = scope.withTypeProvider<ZodTypeProvider>()

  app.post(
    '/api/v1/auth/signup',
    {
      schema: {
        tags: TAGS,
        summary: 'Create an organization with this user as its owner, and sign in',
        body: signupBodySchema,
        response: {
          200: accountResponseSchema,
          ...errorResponses('invalid_request', 'forbidden', 'conflict', 'rate_limited'),
        },
      },
      onRequest: signInRateLimit,
      // Before validation, so a disabled sign-up says so whatever the body.
      preValidation: async () => {
        if (!config.SIGNUP_ENABLED) throw new AppError('forbidden', 'Sign-up is disabled on this server.')
      },
    },
    async (request) => {
      const { email, password, organizationName } = request.body
      // Hashed before the transaction, so no connection is held during the slow part.
      const passwordHash = await hashPassword(password)
      const account = await createAccount(
        pool,
        { email, name: request.body.name ?? defaultName(email), passwordHash, organizationName },
        now(),
      )
      if (account === 'email_taken')
        throw new AppError('conflict', 'An account with this email already exists.')
      await startSession(request, account)
      return { ok: true as const, ...account }
    },
  )

  app.post(
    '/api/v1/auth/login',
    {
      schema: {
        tags: TAGS,
        summary: 'Sign in with email and password',
        body: loginBodySchema,
        response: {
          200: accountResponseSchema,
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'rate_limited'),
        },
      },
      onRequest: signInRateLimit,
    },
    async (request, reply) => {
      const { email, password } = request.body
      const attempt = await recordLoginAttempt(pool, email, now())
      if (!attempt.allowed) {
        refuseThrottled(reply, attempt.retryAfterSeconds)
      }
      const candidate = await findAccountForLogin(pool, email)
      const valid = await verifyPassword(candidate?.passwordHash ?? dummyHash, password)
      if (!candidate || !valid) throw new AppError('unauthorized', INVALID_CREDENTIALS)
      await clearLoginFailures(pool, email)
      await startSession(request, candidate.account)
      return { ok: true as const, ...candidate.account }
    },
  )

  app.post(
    '/api/v1/auth/logout',
    {
      schema: {
        tags: TAGS,
        summary: 'Sign out: the session is destroyed server-side',
        security: SESSION_SECURITY,
        response: { 200: okResponseSchema, ...errorResponses('forbidden') },
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
        summary: 'The signed-in user and their organization',
        security: SESSION_SECURITY,
        response: { 200: accountResponseSchema, ...errorResponses('unauthorized') },
      },
    },
    async (request) => {
      const principal = requireSession(request)
      const account = await findAccount(pool, principal.userId)
      if (!account) {
        // Sessions go with their user (ON DELETE CASCADE); this only covers a delete racing this request.
        await request.session.destroy()
        throw new AppError('unauthorized', 'Sign in first.')
      }
      return { ok: true as const, ...account }
    },
  )
}

/** A fresh session id at every sign-in, so an id planted before it (session fixation) is worth nothing. */
async function startSession(request: FastifyRequest, account: Account): Promise<void> {
  await request.session.regenerate()
  request.session.set('userId', account.user.id)
  request.session.set('orgId', account.organization.id)
  // Saved here rather than in onSend, so a failure to store it fails the request like any other error.
  await request.session.save()
}

function refuseThrottled(reply: FastifyReply, retryAfterSeconds: number): never {
  reply.header('retry-after', String(retryAfterSeconds))
  reply.header('ratelimit-limit', String(LOGIN_THROTTLE.maxFailures))
  reply.header('ratelimit-remaining', '0')
  reply.header('ratelimit-reset', String(retryAfterSeconds))
  throw new AppError('rate_limited', 'Too many failed sign-in attempts for this email; try again later.')
}

/** The part of the email before the @: a recognisable name until the user picks one. */
function defaultName(email: string): string {
  return email.slice(0, email.lastIndexOf('@')).slice(0, 100)
}
