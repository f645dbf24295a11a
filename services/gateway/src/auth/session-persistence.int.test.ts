import { loadSessionSecret, revokeUserSessions } from '@cas/auth'
import { Signer } from '@fastify/cookie'
import { beforeAll, describe, expect, it } from 'vitest'
import { me, SESSION_COOKIE, sessionIdOf, signUp, storedSession } from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { sweepExpired } from './expiry-sweeper.ts'
import { LOGIN_THROTTLE } from './login-throttle.ts'

const { db, gateway, now, setNow, advance } = useTestGateways()

const MINUTE = 60_000

const sessionRow = (cookie: string) =>
  storedSession(db.pool, cookie, ['user_id', 'last_seen_at', 'expires_at'])

describe('session persistence and revocation', () => {
  beforeAll(() => {
    setNow(new Date('2030-01-01T00:00:00Z'))
  })

  it('keeps sessions across a restart: a second app on the same database accepts the cookie', async () => {
    // Given a session created by one gateway process, which then shuts down
    const first = await gateway()
    const { cookie, user } = await signUp(first)
    await first.close()

    // When a new process (no SESSION_SECRET configured) starts on the same database
    const second = await gateway()
    const response = await me(second, cookie)

    // Then the old cookie still signs the user in, both having used the one generated secret
    expect(response.statusCode).toBe(200)
    expect(response.json().user).toEqual(user)
    const { rows } = await db.pool.query(
      "SELECT length(value) AS n FROM app_secrets WHERE name = 'session_secret'",
    )
    expect(rows).toEqual([{ n: 64 }])
  })

  it('generates one session secret even when several instances start at once', async () => {
    // Given a database with no generated secret yet
    await db.pool.query('DELETE FROM app_secrets')

    // When five instances load the secret concurrently
    const secrets = await Promise.all([1, 2, 3, 4, 5].map(() => loadSessionSecret(db.pool, undefined)))

    // Then they all got the single stored one
    const { rows } = await db.pool.query('SELECT value FROM app_secrets')
    expect(rows).toHaveLength(1)
    expect(new Set(secrets)).toEqual(new Set([rows[0].value]))
  })

  it('signs cookies with SESSION_SECRET when it is configured', async () => {
    // Given a configured secret
    const secret = 's'.repeat(40)
    const app = await gateway({ SESSION_SECRET: secret })

    // When someone signs up
    const { cookie } = await signUp(app)

    // Then the cookie carries a signature made with that secret, and the session is stored under its id
    const value = decodeURIComponent(cookie.slice(cookie.indexOf('=') + 1))
    expect(new Signer(secret).unsign(value)).toMatchObject({ valid: true, value: sessionIdOf(cookie) })
    expect(await sessionRow(cookie)).not.toBeNull()
  })

  it('revokeUserSessions signs a user out everywhere, and no one else', async () => {
    // Given a user signed in on two devices, and another user
    const app = await gateway()
    const laptop = await signUp(app, { password: 'laptop and phone password' })
    const phoneLogin = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: laptop.user.email, password: 'laptop and phone password' },
    })
    const phone = `${SESSION_COOKIE}=${encodeURIComponent(phoneLogin.cookies.find((c) => c.name === SESSION_COOKIE)?.value ?? '')}`
    const other = await signUp(app)

    // When their sessions are revoked
    const revoked = await revokeUserSessions(db.pool, laptop.user.id)

    // Then both of theirs are gone from the table and refused, and the other user's is not
    expect(revoked).toBe(2)
    expect(await sessionRow(laptop.cookie)).toBeNull()
    expect(await sessionRow(phone)).toBeNull()
    expect((await me(app, laptop.cookie)).statusCode).toBe(401)
    expect((await me(app, phone)).statusCode).toBe(401)
    expect((await me(app, other.cookie)).statusCode).toBe(200)
  })

  it('deleting a user deletes their sessions', async () => {
    // Given a signed-in user
    const app = await gateway()
    const { cookie, user } = await signUp(app)

    // When the user is deleted
    await db.pool.query('DELETE FROM users WHERE id = $1', [user.id])

    // Then their session row went with them and the cookie is refused
    expect(await sessionRow(cookie)).toBeNull()
    expect((await me(app, cookie)).statusCode).toBe(401)
  })

  it('sweeps expired sessions and stale throttle counts, and nothing live', async () => {
    // Given one session about to expire, one fresh, and throttle counts old and new
    const app = await gateway({ SESSION_IDLE_MINUTES: '10' })
    const old = await signUp(app)
    advance(5 * MINUTE)
    const fresh = await signUp(app)
    await db.pool.query(
      'INSERT INTO login_failures (email, failures, window_started_at) VALUES ($1, 2, $2), ($3, 1, $4)',
      ['stale@example.com', new Date(now().getTime() - LOGIN_THROTTLE.windowMs), 'recent@example.com', now()],
    )

    // When the sweeper runs after the first session's idle time has passed
    advance(5 * MINUTE)
    const swept = await sweepExpired(db.pool, now(), LOGIN_THROTTLE.windowMs)

    // Then exactly the expired rows are deleted
    expect(swept).toEqual({ sessions: 1, loginFailures: 1 })
    expect(await sessionRow(old.cookie)).toBeNull()
    expect(await sessionRow(fresh.cookie)).not.toBeNull()
    const { rows } = await db.pool.query('SELECT email FROM login_failures ORDER BY email')
    expect(rows).toEqual([{ email: 'recent@example.com' }])
  })
})
