import { beforeAll, describe, expect, it } from 'vitest'
import { me, SESSION_COOKIE, sessionIdOf, signUp, storedSession } from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'

const { db, gateway, now, setNow, advance } = useTestGateways()

const MINUTE = 60_000

const sessionRow = (cookie: string) =>
  storedSession(db.pool, cookie, ['user_id', 'last_seen_at', 'expires_at'])

const UNAUTHORIZED = { ok: false, error: { code: 'unauthorized', message: 'Sign in first.' } }

describe('dashboard sessions', () => {
  beforeAll(() => {
    setNow(new Date('2030-01-01T00:00:00Z'))
  })

  it('GET /me answers the signed-in user and organization', async () => {
    // Given a signed-up user
    const app = await gateway()
    const { cookie, user, organization, organizations } = await signUp(app)

    // When they ask who they are
    const response = await me(app, cookie)

    // Then they get their user and organization (as its owner), matching what is stored
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ok: true, user, organization, organizations })
    expect(organization.role).toBe('owner')
    expect(organizations).toEqual([{ id: organization.id, name: organization.name, role: 'owner' }])
    expect(response.body).not.toMatch(/password|argon2/i)
    const { rows } = await db.pool.query('SELECT email, name FROM users WHERE id = $1', [user.id])
    expect(rows).toEqual([{ email: user.email, name: user.name }])
    const { rows: memberships } = await db.pool.query(
      'SELECT org_id, role FROM memberships WHERE user_id = $1',
      [user.id],
    )
    expect(memberships).toEqual([{ org_id: organization.id, role: 'owner' }])
  })

  it('GET /me answers 401 without a cookie, with a garbage cookie and with a forged signature', async () => {
    // Given a gateway and a genuine session, to forge from
    const app = await gateway()
    const { cookie } = await signUp(app)

    // When /me is called with no session, with nonsense, and with a real id under a made-up signature
    const responses = await Promise.all([
      me(app),
      me(app, `${SESSION_COOKIE}=garbage`),
      me(app, `${SESSION_COOKIE}=${sessionIdOf(cookie)}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`),
    ])

    // Then each is 401 with the API's error body
    for (const response of responses) {
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual(UNAUTHORIZED)
    }
    // And the genuine session is untouched
    expect((await me(app, cookie)).statusCode).toBe(200)
  })

  it('logout destroys the session server-side, so the old cookie no longer works', async () => {
    // Given a signed-in user
    const app = await gateway()
    const { cookie, user } = await signUp(app)
    expect(await sessionRow(cookie)).toMatchObject({ user_id: user.id })

    // When they sign out
    const response = await app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie } })

    // Then it succeeds, tells the browser to drop the cookie, and the session row is gone
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ok: true })
    const cleared = response.cookies.find((c) => c.name === SESSION_COOKIE)
    expect(cleared?.value).toBe('')
    expect(cleared?.expires?.getTime()).toBeLessThan(Date.now())
    expect(await sessionRow(cookie)).toBeNull()

    // And replaying the old cookie is refused
    const replay = await me(app, cookie)
    expect(replay.statusCode).toBe(401)
    expect(replay.json()).toEqual(UNAUTHORIZED)
  })

  it('logout without a session still succeeds', async () => {
    // Given no session
    const app = await gateway()
    const { rows: before } = await db.pool.query('SELECT count(*)::int AS n FROM sessions')

    // When someone signs out anyway
    const response = await app.inject({ method: 'POST', url: '/api/v1/auth/logout' })

    // Then it is a no-op success and no session was touched
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ok: true })
    const { rows: after } = await db.pool.query('SELECT count(*)::int AS n FROM sessions')
    expect(after).toEqual(before)
  })

  it('expires a session left unused for the idle time, and keeps a used one alive', async () => {
    // Given a 30-minute idle limit and a session used 29 minutes after sign-in
    const app = await gateway({ SESSION_IDLE_MINUTES: '30' })
    const { cookie } = await signUp(app)
    advance(29 * MINUTE)
    expect((await me(app, cookie)).statusCode).toBe(200)

    // When it is used again 29 minutes later (58 after sign-in)
    advance(29 * MINUTE)
    const stillAlive = await me(app, cookie)

    // Then it still works: each use moved the idle deadline
    expect(stillAlive.statusCode).toBe(200)
    expect((await sessionRow(cookie))?.expires_at).toEqual(new Date(now().getTime() + 30 * MINUTE))

    // But when it then lies unused for 30 minutes, it is refused and its row deleted
    advance(30 * MINUTE)
    const expired = await me(app, cookie)
    expect(expired.statusCode).toBe(401)
    expect(await sessionRow(cookie)).toBeNull()
  })

  it('rewrites last_seen_at at most once a minute', async () => {
    // Given a session signed in at T
    const app = await gateway()
    const { cookie } = await signUp(app)
    const signedInAt = now()

    // When it is used 30 seconds later
    advance(30_000)
    expect((await me(app, cookie)).statusCode).toBe(200)

    // Then the row is not written
    expect((await sessionRow(cookie))?.last_seen_at).toEqual(signedInAt)

    // But when it is used a minute after the last write, last_seen_at moves to now
    advance(30_000)
    expect((await me(app, cookie)).statusCode).toBe(200)
    expect((await sessionRow(cookie))?.last_seen_at).toEqual(now())
  })

  it('expires a session at the absolute limit after sign-in, however active', async () => {
    // Given a 1-hour absolute limit and a session used every 20 minutes
    const app = await gateway({ SESSION_ABSOLUTE_HOURS: '1', SESSION_IDLE_MINUTES: '30' })
    const { cookie } = await signUp(app)
    for (let i = 0; i < 2; i++) {
      advance(20 * MINUTE)
      expect((await me(app, cookie)).statusCode).toBe(200)
    }
    // (its stored expiry never reaches past the absolute limit)
    expect((await sessionRow(cookie))?.expires_at).toEqual(new Date(now().getTime() + 20 * MINUTE))

    // When it is used again one hour after sign-in
    advance(20 * MINUTE)
    const response = await me(app, cookie)

    // Then it is refused and its row deleted
    expect(response.statusCode).toBe(401)
    expect(await sessionRow(cookie)).toBeNull()
  })

  it('sets a cookie that lasts until the absolute limit', async () => {
    // Given a 2-hour absolute limit
    const app = await gateway({ SESSION_ABSOLUTE_HOURS: '2' })

    // When someone signs up
    const sentAt = Date.now()
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: {
        email: `maxage-${sentAt}@example.com`,
        password: 'long enough password',
        organizationName: 'O',
      },
    })
    const answeredAt = Date.now()

    // Then the browser is told to keep the cookie 2 hours from now (by its own clock), no longer
    const expires = response.cookies.find((c) => c.name === SESSION_COOKIE)?.expires?.getTime() ?? 0
    // (Expires has whole-second precision)
    expect(expires).toBeGreaterThanOrEqual(sentAt + 2 * 3_600_000 - 1000)
    expect(expires).toBeLessThanOrEqual(answeredAt + 2 * 3_600_000)
  })
})
