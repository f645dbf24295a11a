import { loadConfig } from '@cas/config'
import { createHttpApp } from '@cas/http'
import type { InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { signUp, storedSession, TEST_PASSWORD } from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { testKeyring } from '../../../../test/support/keyring.ts'
import { registerGateway } from '../app.ts'

const { db, gateway, closeAfterTest } = useTestGateways({
  env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' },
})

function signup(email: string, headers: Record<string, string>): InjectOptions {
  return {
    method: 'POST',
    url: '/api/v1/auth/signup',
    headers,
    payload: { email, password: TEST_PASSWORD, organizationName: 'Origin Org' },
  }
}

async function userExists(email: string): Promise<boolean> {
  const { rows } = await db.pool.query('SELECT 1 FROM users WHERE email = $1', [email])
  return rows.length === 1
}

async function sessionExists(cookie: string): Promise<boolean> {
  return (await storedSession(db.pool, cookie, ['sid'])) !== null
}

const FORBIDDEN = {
  ok: false,
  error: { code: 'forbidden', message: 'Cross-origin requests from this origin are not allowed.' },
}

describe('Origin check on mutating API requests', () => {
  it('refuses a sign-up from a foreign origin, storing nothing', async () => {
    // Given a gateway
    const app = await gateway()

    // When a page on another site posts a sign-up
    const response = await app.inject(signup('csrf@example.com', { origin: 'https://evil.example' }))

    // Then it is refused and no account exists
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual(FORBIDDEN)
    expect(await userExists('csrf@example.com')).toBe(false)
  })

  it("refuses a foreign origin's logout carrying the victim's cookie, keeping the session", async () => {
    // Given a signed-in user
    const app = await gateway()
    const { cookie } = await signUp(app)

    // When another site makes their browser post a logout, cookie and all
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { cookie, origin: 'http://localhost.evil.example' },
    })

    // Then it is refused and the session survives
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual(FORBIDDEN)
    expect(await sessionExists(cookie)).toBe(true)
  })

  it.each([
    ['the literal origin null', 'null'],
    ['a different scheme for our own host', 'https://localhost'],
    ['a different port for our own host', 'http://localhost:8080'],
    ['a lookalike of an allowed origin', 'https://admin.example.com.evil.example'],
    ['garbage', 'not a url'],
  ])('refuses %s', async (_case, origin) => {
    // Given a gateway that allows https://admin.example.com besides itself
    const app = await gateway({ ALLOWED_ORIGINS: 'https://admin.example.com' })
    const email = `refused-${Math.random().toString(36).slice(2)}@example.com`

    // When a sign-up arrives from that origin
    const response = await app.inject(signup(email, { origin }))

    // Then it is refused and nothing is stored
    expect(response.statusCode).toBe(403)
    expect(await userExists(email)).toBe(false)
  })

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['a Referer of another site', { referer: 'https://evil.example/page' }],
    ['a Referer of another port of our host', { referer: 'http://localhost:8080/' }],
  ])('refuses a request without Origin that carries %s', async (_case, headers: Record<string, string>) => {
    // Given a signed-in user
    const app = await gateway()
    const { cookie } = await signUp(app)

    // When their browser posts a logout from another site, with no Origin (a browser or proxy left it out)
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { cookie, ...headers },
    })

    // Then it is refused and the session survives
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual(FORBIDDEN)
    expect(await sessionExists(cookie)).toBe(true)
  })

  it.each([
    ['our own origin', { origin: 'http://localhost' }, {}],
    ['no Origin, a Referer of our own pages', { referer: 'http://localhost/chatbots' }, {}],
    ['no Origin, a Referer of a listed origin', { referer: 'https://admin.example.com/x' }, {}],
    ['no Origin, Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin' }, {}],
    [
      'our own origin under another Host name',
      { host: 'dash.example.com', origin: 'http://dash.example.com' },
      {},
    ],
    [
      'our own https origin behind a trusted proxy',
      { host: 'dash.example.com', origin: 'https://dash.example.com', 'x-forwarded-proto': 'https' },
      { TRUST_PROXY: 'true' },
    ],
    ['a listed origin', { origin: 'https://admin.example.com' }, {}],
    ['a listed origin written with its default port', { origin: 'https://admin.example.com:443' }, {}],
    ['no Origin header (a non-browser client)', {}, {}],
  ])('accepts %s', async (_case, headers: Record<string, string>, env: Record<string, string>) => {
    // Given a gateway that allows https://admin.example.com besides itself
    const app = await gateway({ ALLOWED_ORIGINS: 'https://admin.example.com', ...env })
    const email = `accepted-${Math.random().toString(36).slice(2)}@example.com`

    // When a sign-up arrives with those headers
    const response = await app.inject(signup(email, headers))

    // Then it goes through and the account is stored
    expect(response.statusCode).toBe(200)
    expect(await userExists(email)).toBe(true)
  })

  it('lets reads from any origin through (they change nothing)', async () => {
    // Given a signed-in user
    const app = await gateway()
    const { cookie } = await signUp(app)

    // When a GET arrives with a foreign Origin
    const response = await app.inject({
      method: 'GET',
      url: '/api/v1/auth/me',
      headers: { cookie, origin: 'https://evil.example' },
    })

    // Then the Origin check doesn't interfere
    expect(response.statusCode).toBe(200)
  })

  it('leaves capture to its API key: a foreign Origin is not refused there', async () => {
    // Given a gateway
    const app = await gateway()

    // When a capture call carries a foreign Origin
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/capture',
      headers: { origin: 'https://chatbot.example' },
      payload: {},
    })

    // Then whatever capture answers, it is not the Origin check's 403
    expect(response.statusCode).not.toBe(403)
  })

  it('protects mutating routes registered after it in other plugins, outside the session scope too', async () => {
    // Given the gateway's routes, and another plugin adding a POST route after them, outside the scope
    // where the gateway registers sessions
    const config = loadConfig({ DATABASE_URL: db.url })
    const app = closeAfterTest(await createHttpApp({ logger: false, readiness: [] }))
    await registerGateway(app, { pool: db.pool, keyring: testKeyring, config, logger: false, readiness: [] })
    let calls = 0
    await app.register(async (other) => {
      other.post('/api/v1/other', async () => {
        calls++
        return { ok: true }
      })
    })
    await app.ready()

    // When a foreign origin posts to it, and then our own origin does
    const foreign = await app.inject({
      method: 'POST',
      url: '/api/v1/other',
      headers: { origin: 'https://evil.example' },
    })
    const own = await app.inject({
      method: 'POST',
      url: '/api/v1/other',
      headers: { origin: 'http://localhost' },
    })

    // Then the foreign one never reaches the handler and our own does
    expect(foreign.statusCode).toBe(403)
    expect(foreign.json()).toEqual(FORBIDDEN)
    expect(own.statusCode).toBe(200)
    expect(calls).toBe(1)
  })
})
