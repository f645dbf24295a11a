import { sessionKey } from '@cas/auth'
import { describe, expect, it } from 'vitest'
import {
  SESSION_COOKIE,
  sessionCookie,
  sessionIdOf,
  signUp,
  TEST_PASSWORD,
} from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { ARGON2_PARAMS } from './passwords.ts'

const { db, gateway } = useTestGateways({ env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' } })

function signupRequest(payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  return { method: 'POST' as const, url: '/api/v1/auth/signup', payload, headers }
}

async function countRows(table: 'organizations' | 'users' | 'sessions') {
  const { rows } = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]?.n ?? 0
}

/** The cost parameters of an argon2id PHC string (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`, in any order). */
function argon2idParams(hash: string): Record<string, number> {
  const [, algorithm, , params] = hash.split('$')
  expect(algorithm).toBe('argon2id')
  return Object.fromEntries(
    (params ?? '').split(',').map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])]),
  )
}

describe('POST /api/v1/auth/signup', () => {
  it('creates the organization with the user as owner, signs in, and stores only an argon2id hash', async () => {
    // Given a gateway served over plain http
    const app = await gateway()

    // When someone signs up with an email in mixed case and surrounding spaces
    const response = await app.inject(
      signupRequest({
        email: '  Ada.Lovelace@Example.COM ',
        password: TEST_PASSWORD,
        name: 'Ada Lovelace',
        organizationName: ' Analytical Engines ',
      }),
    )

    // Then they get their user and organization back, and nothing secret
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toEqual({
      ok: true,
      user: { id: expect.any(String), email: 'ada.lovelace@example.com', name: 'Ada Lovelace' },
      organization: {
        id: expect.any(String),
        name: 'Analytical Engines',
        role: 'owner',
        permissions: expect.arrayContaining(['members:manage', 'organization:delete']),
      },
      organizations: [{ id: expect.any(String), name: 'Analytical Engines', role: 'owner' }],
    })
    expect(response.body).not.toContain(TEST_PASSWORD)
    expect(response.body).not.toContain('argon2')

    // And the organization and its owner are stored, the email normalized, the password hashed with argon2id
    const { rows: orgs } = await db.pool.query('SELECT id, name FROM organizations WHERE id = $1', [
      body.organization.id,
    ])
    expect(orgs).toEqual([{ id: body.organization.id, name: 'Analytical Engines' }])
    const { rows: users } = await db.pool.query(
      'SELECT email, name, password_hash FROM users WHERE id = $1',
      [body.user.id],
    )
    expect(users).toHaveLength(1)
    const user = users[0]
    expect(user).toMatchObject({ email: 'ada.lovelace@example.com', name: 'Ada Lovelace' })
    const { rows: memberships } = await db.pool.query(
      'SELECT org_id, role FROM memberships WHERE user_id = $1',
      [body.user.id],
    )
    expect(memberships).toEqual([{ org_id: body.organization.id, role: 'owner' }])

    // And the organization's events say so, naming the new person as who did it
    const { rows: events } = await db.pool.query(
      `SELECT type, payload, metadata ->> 'actorId' AS actor FROM event_journal
        WHERE stream_type = 'organization' AND stream_id = $1 ORDER BY stream_version`,
      [body.organization.id],
    )
    expect(events).toEqual([
      { type: 'organization.created', payload: { name: 'Analytical Engines' }, actor: body.user.id },
      {
        type: 'organization.member-joined',
        payload: {
          userId: body.user.id,
          email: 'ada.lovelace@example.com',
          role: 'owner',
          invitationId: null,
        },
        actor: body.user.id,
      },
    ])
    const params = argon2idParams(user.password_hash)
    expect(params.m).toBeGreaterThanOrEqual(19_456)
    expect(params.t).toBeGreaterThanOrEqual(2)
    expect(params.p).toBeGreaterThanOrEqual(1)
    expect(params).toEqual({
      m: ARGON2_PARAMS.memoryCost,
      t: ARGON2_PARAMS.timeCost,
      p: ARGON2_PARAMS.parallelism,
    })

    // And the session cookie is HttpOnly, SameSite=Lax, site-wide and not Secure over http
    const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE)
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' })
    expect(cookie?.secure).toBeFalsy()

    // And it names a stored session of that user
    const { rows: sessions } = await db.pool.query('SELECT user_id, org_id FROM sessions WHERE sid = $1', [
      sessionKey(sessionIdOf(sessionCookie(response))),
    ])
    expect(sessions).toEqual([{ user_id: body.user.id, org_id: body.organization.id }])
  })

  it('marks the cookie Secure when the request came over TLS through a trusted proxy', async () => {
    // Given a gateway behind a TLS-terminating proxy it trusts
    const app = await gateway({ TRUST_PROXY: 'true' })

    // When someone signs up over https
    const response = await app.inject(
      signupRequest(
        { email: `tls-${Date.now()}@example.com`, password: TEST_PASSWORD, organizationName: 'Secure Org' },
        { 'x-forwarded-proto': 'https' },
      ),
    )

    // Then the session cookie is Secure (and still HttpOnly, SameSite=Lax)
    expect(response.statusCode).toBe(200)
    const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE)
    expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/' })
  })

  it('names the user after their email when no name is given', async () => {
    // Given a gateway
    const app = await gateway()

    // When someone signs up without a name
    const { user } = await signUp(app, { email: 'grace.hopper@example.com' })

    // Then their name is the part of the email before the @, in the response and in the table
    expect(user.name).toBe('grace.hopper')
    const { rows } = await db.pool.query('SELECT name FROM users WHERE id = $1', [user.id])
    expect(rows).toEqual([{ name: 'grace.hopper' }])
  })

  it('refuses an email that already has an account, whatever its case, and stores nothing', async () => {
    // Given an account for alan@example.com
    const app = await gateway()
    await signUp(app, { email: 'alan@example.com' })
    const before = { orgs: await countRows('organizations'), users: await countRows('users') }

    // When someone signs up again with the same email in another case
    const response = await app.inject(
      signupRequest({ email: 'ALAN@Example.com', password: TEST_PASSWORD, organizationName: 'Second' }),
    )

    // Then it is a conflict, no session cookie is set, and no organization or user was added
    expect(response.statusCode).toBe(409)
    expect(response.json()).toEqual({
      ok: false,
      error: { code: 'conflict', message: 'An account with this email already exists.' },
    })
    expect(response.cookies.find((c) => c.name === SESSION_COOKIE && c.value)).toBeUndefined()
    expect({ orgs: await countRows('organizations'), users: await countRows('users') }).toEqual(before)
  })

  const valid = { email: 'valid@example.com', password: TEST_PASSWORD, organizationName: 'Org' }
  it.each([
    ['a missing email', { ...valid, email: undefined }, '/email'],
    ['a malformed email', { ...valid, email: 'not-an-email' }, '/email'],
    ['a password under 10 characters', { ...valid, password: '123456789' }, '/password'],
    ['a password over 1024 characters', { ...valid, password: 'x'.repeat(1025) }, '/password'],
    ['an empty name', { ...valid, name: '   ' }, '/name'],
    ['a name over 100 characters', { ...valid, name: 'n'.repeat(101) }, '/name'],
    ['a missing organization name', { ...valid, organizationName: undefined }, '/organizationName'],
    [
      'an organization name over 100 characters',
      { ...valid, organizationName: 'o'.repeat(101) },
      '/organizationName',
    ],
  ])('answers 400 for %s and stores nothing', async (_case, payload, path) => {
    // Given a gateway
    const app = await gateway()
    const before = { orgs: await countRows('organizations'), users: await countRows('users') }

    // When a sign-up body breaks a rule
    const response = await app.inject(signupRequest(payload))

    // Then it is refused with the offending field named, and nothing is stored
    expect(response.statusCode).toBe(400)
    const body = response.json()
    expect(body.ok).toBe(false)
    expect(body.error.code).toBe('invalid_request')
    expect(body.error.details).toContainEqual(expect.objectContaining({ path }))
    expect({ orgs: await countRows('organizations'), users: await countRows('users') }).toEqual(before)
  })

  it('answers 403 when sign-up is disabled, and stores nothing', async () => {
    // Given a gateway with sign-up turned off
    const app = await gateway({ SIGNUP_ENABLED: 'false' })
    const before = { orgs: await countRows('organizations'), users: await countRows('users') }

    // When someone tries to sign up
    const response = await app.inject(
      signupRequest({ email: 'closed@example.com', password: TEST_PASSWORD, organizationName: 'Closed' }),
    )

    // Then they are refused and nothing is stored
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual({
      ok: false,
      error: { code: 'forbidden', message: 'Sign-up is disabled on this server.' },
    })
    expect({ orgs: await countRows('organizations'), users: await countRows('users') }).toEqual(before)
  })
})
