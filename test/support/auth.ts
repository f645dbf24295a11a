import { randomInt, randomUUID } from 'node:crypto'
import { sessionKey } from '@cas/auth'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type pg from 'pg'

export const SESSION_COOKIE = 'cas_session'
/** The password signUp uses unless told otherwise. */
export const TEST_PASSWORD = 'correct horse battery staple'

export type Role = 'owner' | 'admin' | 'member' | 'viewer'

/** The account shape of sign-up, sign-in and /auth/me (the organization they work in, and all theirs). */
export interface AccountBody {
  readonly user: { id: string; email: string; name: string }
  readonly organization: { id: string; name: string; role: Role; permissions: string[] }
  readonly organizations: { id: string; name: string; role: Role }[]
}

export interface SignedUp extends AccountBody {
  /** `cas_session=<value>`, ready for a `cookie` request header. */
  readonly cookie: string
}

/**
 * Signs up a new user (a unique email unless given) with their own organization, returning the session
 * cookie to act as them. Each call comes from its own client address so that a test signing up many
 * users never runs into the per-address sign-in rate limit.
 */
export async function signUp(
  app: FastifyInstance,
  opts: { email?: string; password?: string; organizationName?: string; name?: string } = {},
): Promise<SignedUp> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/signup',
    remoteAddress: randomClientAddress(),
    payload: {
      email: opts.email ?? `user-${randomUUID()}@example.com`,
      password: opts.password ?? TEST_PASSWORD,
      organizationName: opts.organizationName ?? `Org ${randomUUID().slice(0, 8)}`,
      ...(opts.name === undefined ? {} : { name: opts.name }),
    },
  })
  if (response.statusCode !== 200) {
    throw new Error(`sign-up failed with ${response.statusCode}: ${response.body}`)
  }
  const body = response.json() as AccountBody
  return {
    cookie: sessionCookie(response),
    user: body.user,
    organization: body.organization,
    organizations: body.organizations,
  }
}

/** The `name=value` pair of the session cookie a response set; throws when it set none. */
export function sessionCookie(response: LightMyRequestResponse): string {
  const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE && c.value !== '')
  if (!cookie) throw new Error(`no ${SESSION_COOKIE} cookie in the response (status ${response.statusCode})`)
  return `${cookie.name}=${encodeURIComponent(cookie.value)}`
}

/** A random address in 10.0.0.0/8, for requests that should count against their own rate-limit bucket. */
export function randomClientAddress(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
}

/** The session id inside a `cas_session=<id>.<signature>` pair (what the session store is keyed by). */
export function sessionIdOf(cookie: string): string {
  const value = decodeURIComponent(cookie.slice(cookie.indexOf('=') + 1))
  return value.slice(0, value.lastIndexOf('.'))
}

/** GET /api/v1/auth/me, as the holder of `cookie` (a `cas_session=<value>` pair) or with no cookie. */
export function me(app: FastifyInstance, cookie?: string) {
  return app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: cookie ? { cookie } : {} })
}

/** A row of the `sessions` table. */
export interface StoredSession {
  readonly sid: string
  readonly user_id: string
  readonly org_id: string | null
  readonly created_at: Date
  readonly last_seen_at: Date
  readonly expires_at: Date
}

/** The given columns of the stored session a cookie names, or null when there is none. */
export async function storedSession<Column extends keyof StoredSession>(
  pool: pg.Pool,
  cookie: string,
  columns: readonly Column[],
): Promise<Pick<StoredSession, Column> | null> {
  const { rows } = await pool.query<Pick<StoredSession, Column>>(
    `SELECT ${columns.join(', ')} FROM sessions WHERE sid = $1`,
    [sessionKey(sessionIdOf(cookie))],
  )
  return rows[0] ?? null
}
