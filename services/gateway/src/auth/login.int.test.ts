import { performance } from 'node:perf_hooks'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  me,
  randomClientAddress,
  SESSION_COOKIE,
  sessionCookie,
  sessionIdOf,
  signUp,
  storedSession,
  TEST_PASSWORD,
} from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { INVALID_CREDENTIALS } from './routes.ts'

const { db, gateway, setNow, advance } = useTestGateways({
  env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' },
})

// Each test starts its gateway at the same time.
beforeEach(() => {
  setNow(new Date('2030-01-01T00:00:00Z'))
})

function login(email: string, password: string, extra: Partial<InjectOptions> = {}): InjectOptions {
  return { method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, ...extra }
}

const sessionRow = (cookie: string) => storedSession(db.pool, cookie, ['user_id', 'org_id'])

/** The email's count over every address, or (given `client`) its count from that address. */
async function failuresFor(email: string, client = ''): Promise<number | null> {
  const { rows } = await db.pool.query<{ failures: number }>(
    'SELECT failures FROM login_failures WHERE email = $1 AND client = $2',
    [email, client],
  )
  return rows[0]?.failures ?? null
}

// app.inject's default client address.
const LOCAL = '127.0.0.1'

describe('POST /api/v1/auth/login', () => {
  it('signs in with a new session id, ending the session the request came with', async () => {
    // Given a user who is already signed in with session A
    const app = await gateway()
    const {
      cookie: before,
      user,
      organization,
      organizations,
    } = await signUp(app, { email: 'lin@example.com' })

    // When they sign in again, sending cookie A along, with their email in another case
    const response = await app.inject(
      login(' LIN@example.com', TEST_PASSWORD, { headers: { cookie: before } }),
    )

    // Then they are signed in under a different session id
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ok: true, user, organization, organizations })
    expect(response.body).not.toContain(TEST_PASSWORD)
    expect(response.body).not.toMatch(/argon2/i)
    const after = sessionCookie(response)
    expect(sessionIdOf(after)).not.toBe(sessionIdOf(before))

    // And only the new session is stored: the old id no longer signs anyone in
    expect(await sessionRow(after)).toEqual({ user_id: user.id, org_id: organization.id })
    expect(await sessionRow(before)).toBeNull()
    expect((await me(app, after)).statusCode).toBe(200)
    expect((await me(app, before)).statusCode).toBe(401)
  })

  it('answers a wrong password and an unknown email identically, without a session', async () => {
    // Given one account
    const app = await gateway()
    await signUp(app, { email: 'known@example.com' })
    const { rows: before } = await db.pool.query('SELECT count(*)::int AS n FROM sessions')

    // When someone signs in with the wrong password, and someone with an email nobody has
    const wrongPassword = await app.inject(login('known@example.com', 'not the password'))
    const unknownEmail = await app.inject(login('nobody@example.com', 'not the password'))

    // Then both get the same 401 and no cookie
    expect(wrongPassword.statusCode).toBe(401)
    expect(unknownEmail.statusCode).toBe(401)
    expect(wrongPassword.json()).toEqual({
      ok: false,
      error: { code: 'unauthorized', message: INVALID_CREDENTIALS },
    })
    expect(unknownEmail.body).toBe(wrongPassword.body)
    for (const r of [wrongPassword, unknownEmail]) {
      expect(r.cookies.find((c) => c.name === SESSION_COOKIE && c.value)).toBeUndefined()
    }

    // And no session was stored, while both attempts count towards their email's throttle
    const { rows: after } = await db.pool.query('SELECT count(*)::int AS n FROM sessions')
    expect(after).toEqual(before)
    expect(await failuresFor('known@example.com')).toBe(1)
    expect(await failuresFor('nobody@example.com')).toBe(1)
  })

  it('spends the same password-hashing work on an unknown email as on a wrong password', async () => {
    // Given one account per attempt (so the per-email throttle never kicks in)
    const app = await gateway()
    const known = await Promise.all([0, 1, 2, 3, 4].map(() => signUp(app)))

    // When wrong passwords and unknown emails are tried alternately
    const timings = { wrongPassword: [] as number[], unknownEmail: [] as number[] }
    for (const [i, account] of known.entries()) {
      timings.wrongPassword.push(await timed(app, login(account.user.email, 'not the password')))
      timings.unknownEmail.push(await timed(app, login(`ghost-${i}@example.com`, 'not the password')))
    }

    // Then an unknown email takes about as long: a verification ran against the dummy hash
    // (without it, it would take a small fraction: one indexed query instead of ~20 ms of argon2)
    expect(median(timings.unknownEmail)).toBeGreaterThan(median(timings.wrongPassword) * 0.5)
  })

  it('refuses sign-in for an email from an address after 5 failed attempts from it, even with the right password, for 15 minutes', async () => {
    // Given an account whose password was guessed wrong 5 times
    const app = await gateway()
    await signUp(app, { email: 'target@example.com' })
    for (let i = 0; i < 5; i++) {
      expect((await app.inject(login('target@example.com', `guess ${i}`))).statusCode).toBe(401)
    }

    // When the right password is tried next
    const throttled = await app.inject(login('target@example.com', TEST_PASSWORD))

    // Then it is refused with 429 saying when to come back (the window started at the first failure)
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json()).toEqual({
      ok: false,
      error: {
        code: 'rate_limited',
        message: 'Too many failed sign-in attempts for this email from this address; try again later.',
      },
    })
    expect(throttled.headers['retry-after']).toBe('900')
    expect(throttled.headers['ratelimit-limit']).toBe('5')
    expect(throttled.headers['ratelimit-remaining']).toBe('0')
    expect(throttled.cookies.find((c) => c.name === SESSION_COOKIE && c.value)).toBeUndefined()
    expect(await failuresFor('target@example.com', LOCAL)).toBeGreaterThan(5)
    // (the refused attempt is not counted for the email over all addresses)
    expect(await failuresFor('target@example.com')).toBe(5)

    // And a minute before the window ends it is still refused, saying so
    advance(14 * 60_000)
    const stillThrottled = await app.inject(login('target@example.com', TEST_PASSWORD))
    expect(stillThrottled.statusCode).toBe(429)
    expect(stillThrottled.headers['retry-after']).toBe('60')

    // And once the window has passed, the right password signs in and the count is gone
    advance(60_000)
    const afterWindow = await app.inject(login('target@example.com', TEST_PASSWORD))
    expect(afterWindow.statusCode).toBe(200)
    expect(await failuresFor('target@example.com')).toBeNull()
    expect(await failuresFor('target@example.com', LOCAL)).toBeNull()
  })

  it('Regression (trial3): five wrong passwords from any address locked the owner out; the owner signs in from another address while the attacker is refused', async () => {
    // Given an account whose email an attacker knows, and an attacker whose address has used up its 5 tries
    const app = await gateway()
    await signUp(app, { email: 'owner@example.com' })
    const attacker = { remoteAddress: '203.0.113.9' }
    for (let i = 0; i < 5; i++) {
      expect((await app.inject(login('owner@example.com', `guess ${i}`, attacker))).statusCode).toBe(401)
    }
    for (let i = 0; i < 10; i++) {
      expect((await app.inject(login('owner@example.com', `more ${i}`, attacker))).statusCode).toBe(429)
    }

    // When the owner signs in from their own address
    const owner = await app.inject(
      login('owner@example.com', TEST_PASSWORD, { remoteAddress: '198.51.100.4' }),
    )

    // Then they are signed in, the attacker is still refused (even with the right password), and the
    // attacker's refused tries never counted towards the email's limit over all addresses
    expect(owner.statusCode, owner.body).toBe(200)
    expect(sessionCookie(owner)).toBeTruthy()
    const stillRefused = await app.inject(login('owner@example.com', TEST_PASSWORD, attacker))
    expect(stillRefused.statusCode).toBe(429)
    expect(stillRefused.json().error.message).toMatch(/from this address/)
    expect(await failuresFor('owner@example.com')).toBe(5)
    expect(await failuresFor('owner@example.com', '198.51.100.4')).toBeNull()
  })

  it('Regression (mend2): each IPv6 address had 5 tries of its own, so one /64 gave an attacker unlimited tries; the /64 counts as one address', async () => {
    // Given an attacker who has used up 5 tries from one IPv6 address
    const app = await gateway()
    await signUp(app, { email: 'v6@example.com' })
    for (let i = 0; i < 5; i++) {
      const r = await app.inject(login('v6@example.com', `guess ${i}`, { remoteAddress: '2001:db8:1:2::a' }))
      expect(r.statusCode).toBe(401)
    }

    // When it moves to another address of the same /64, even with the right password
    const sameBlock = await app.inject(
      login('v6@example.com', TEST_PASSWORD, { remoteAddress: '2001:db8:1:2:9a3f:11ff:fe00:42' }),
    )

    // Then it is refused by this address's limit; another /64 (the owner's) is not held back
    expect(sameBlock.statusCode).toBe(429)
    expect(sameBlock.json().error.message).toMatch(/from this address/)
    expect(await failuresFor('v6@example.com', '2001:db8:1:2::/64')).toBe(6)
    expect(await failuresFor('v6@example.com')).toBe(5)
    const owner = await app.inject(
      login('v6@example.com', TEST_PASSWORD, { remoteAddress: '2001:db8:1:3::a' }),
    )
    expect(owner.statusCode, owner.body).toBe(200)
  })

  it('refuses an attacker rotating through addresses once the email has 50 failures over all of them, for 15 minutes', async () => {
    // Given 50 wrong passwords for one email from 10 addresses, 5 each (none of them refused)
    const app = await gateway()
    await signUp(app, { email: 'sprayed@example.com' })
    for (let a = 0; a < 10; a++) {
      for (let i = 0; i < 5; i++) {
        const r = await app.inject(
          login('sprayed@example.com', `guess ${a}.${i}`, { remoteAddress: `192.0.2.${a + 1}` }),
        )
        expect(r.statusCode).toBe(401)
      }
    }

    // When an eleventh address tries, even with the right password
    const fresh = await app.inject(
      login('sprayed@example.com', TEST_PASSWORD, { remoteAddress: '192.0.2.200' }),
    )

    // Then it is refused by the email's limit over all addresses, saying when to come back
    expect(fresh.statusCode).toBe(429)
    expect(fresh.json().error.message).toBe(
      'Too many failed sign-in attempts for this email; try again later.',
    )
    expect(fresh.headers['ratelimit-limit']).toBe('50')
    expect(fresh.headers['retry-after']).toBe('900')

    // And once the window has passed, the right password signs in from anywhere
    advance(15 * 60_000)
    const afterWindow = await app.inject(
      login('sprayed@example.com', TEST_PASSWORD, { remoteAddress: '192.0.2.201' }),
    )
    expect(afterWindow.statusCode).toBe(200)
  })

  it('forgets earlier failures after a successful sign-in', async () => {
    // Given an account with 4 failed attempts, then a successful sign-in
    const app = await gateway()
    await signUp(app, { email: 'forgetful@example.com' })
    for (let i = 0; i < 4; i++) await app.inject(login('forgetful@example.com', `guess ${i}`))
    expect(await failuresFor('forgetful@example.com')).toBe(4)
    expect((await app.inject(login('forgetful@example.com', TEST_PASSWORD))).statusCode).toBe(200)
    expect(await failuresFor('forgetful@example.com')).toBeNull()

    // When 4 more attempts fail
    for (let i = 0; i < 4; i++) {
      expect((await app.inject(login('forgetful@example.com', `again ${i}`))).statusCode).toBe(401)
    }

    // Then the right password still signs in (9 attempts in the window, but only 4 since the success)
    expect((await app.inject(login('forgetful@example.com', TEST_PASSWORD))).statusCode).toBe(200)
  })

  it('limits sign-in requests per client address, and only the sign-in routes', async () => {
    // Given a limit of 3 unauthenticated requests per minute per address, used up by one address
    const app = await gateway({ UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '3' })
    const address = '192.0.2.7'
    for (let i = 0; i < 3; i++) {
      const r = await app.inject(login(`spray-${i}@example.com`, 'password123', { remoteAddress: address }))
      expect(r.statusCode).toBe(401)
    }

    // When that address tries once more
    const limited = await app.inject(login('spray-3@example.com', 'password123', { remoteAddress: address }))

    // Then it is refused before the attempt is even counted, with the rate-limit headers
    expect(limited.statusCode).toBe(429)
    expect(limited.json().error.code).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers['ratelimit-limit']).toBe('3')
    expect(await failuresFor('spray-3@example.com')).toBeNull()

    // And sign-up from that address is limited too, while another address is not
    const signupLimited = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      remoteAddress: address,
      payload: { email: 'new@example.com', password: TEST_PASSWORD, organizationName: 'Org' },
    })
    expect(signupLimited.statusCode).toBe(429)
    const { rows } = await db.pool.query('SELECT 1 FROM users WHERE email = $1', ['new@example.com'])
    expect(rows).toEqual([])
    const elsewhere = await app.inject(
      login('spray-4@example.com', 'password123', { remoteAddress: '192.0.2.8' }),
    )
    expect(elsewhere.statusCode).toBe(401)

    // And routes outside sign-in are not limited for that address
    for (let i = 0; i < 5; i++) {
      const r = await app.inject({ method: 'GET', url: '/api/v1/auth/me', remoteAddress: address })
      expect(r.statusCode).toBe(401)
      expect((await app.inject({ method: 'GET', url: '/healthz', remoteAddress: address })).statusCode).toBe(
        200,
      )
    }
  })
})

async function timed(app: FastifyInstance, request: InjectOptions): Promise<number> {
  const start = performance.now()
  const response = await app.inject({ ...request, remoteAddress: randomClientAddress() })
  expect(response.statusCode).toBe(401)
  return performance.now() - start
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}
