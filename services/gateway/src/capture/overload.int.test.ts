import { loadConfig } from '@cas/config'
import { createPool, freePort } from '@cas/db'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { captureBody, createChatbot, postCapture } from '../../../../test/support/chatbots.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { countRows } from '../../../../test/support/journal.ts'
import { testKeyring } from '../../../../test/support/keyring.ts'
import { waitFor } from '../../../../test/support/wait.ts'
import { buildGatewayApp } from '../app.ts'

const { db, gateway, closeAfterTest } = useTestGateways()
let apiKey: string
const pools: pg.Pool[] = []

beforeAll(async () => {
  const app = await gateway()
  apiKey = (await createChatbot(app, (await signUp(app)).cookie)).apiKey
})
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()))
})

/** A gateway on its own pool (size, wait timeout and database chosen by the test), `env` over the defaults. */
async function gatewayOn(pool: pg.Pool, env: Record<string, string> = {}): Promise<FastifyInstance> {
  pools.push(pool)
  const app = await buildGatewayApp({
    pool,
    keyring: testKeyring,
    config: loadConfig({ DATABASE_URL: db.url, ...env }),
    logger: false,
    readiness: [{ name: 'database', check: () => pool.query('SELECT 1').then(() => {}) }],
  })
  app.metrics.observePool('primary', pool)
  return closeAfterTest(app)
}

function expectUnavailable(res: Awaited<ReturnType<typeof postCapture>>) {
  expect(res.statusCode, res.body).toBe(503)
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
  expect(res.json()).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.any(String) } })
  expect(res.body).not.toMatch(/pg_|ECONN|timeout exceeded|at .*\.ts/)
}

/** Settles to 'pending' while the promise has not settled yet. */
async function state(p: Promise<unknown>): Promise<'pending' | 'settled'> {
  const pending = Symbol('pending')
  return (await Promise.race([p.then(() => 'settled' as const), Promise.resolve(pending)])) === pending
    ? 'pending'
    : 'settled'
}

describe('capture under overload', () => {
  it('sheds with 503 + Retry-After at once while the pool is saturated by slow queries, then serves again', async () => {
    const pool = createPool(db.url, { max: 2 })
    const app = await gatewayOn(pool, { OVERLOAD_MAX_POOL_WAITING: '1' })
    const before = await countRows(db.pool, 'capture_message_ids')

    // Two slow queries hold both connections; a third query waits for one.
    const slow = Promise.all([pool.query('SELECT pg_sleep(2)'), pool.query('SELECT pg_sleep(2)')])
    const queued = pool.query('SELECT 1')
    await waitFor(() => pool.totalCount === 2 && pool.idleCount === 0 && pool.waitingCount === 1)

    const shed = await postCapture(app, apiKey, captureBody('overload-1', ['o-1']))
    expectUnavailable(shed)
    // Answered before the pool freed up: the request never queued behind the slow queries.
    expect(await state(slow)).toBe('pending')
    expect((await app.inject('/healthz')).statusCode).toBe(200)
    const metrics = await app.inject('/metrics')
    expect(metrics.statusCode).toBe(200)
    expect(metrics.body).toContain('cas_pg_pool_waiting_requests{pool="primary"} 1')
    expect(metrics.body).toContain('cas_http_unavailable_responses_total{reason="pool_saturated"} 1')

    await Promise.all([slow, queued])
    expect(await countRows(db.pool, 'capture_message_ids')).toBe(before)
    const served = await postCapture(app, apiKey, captureBody('overload-1', ['o-1']))
    expect(served.statusCode, served.body).toBe(200)
    expect(served.json().messagesStored).toBe(1)
  })

  it('answers 503 when no connection frees up within DATABASE_CONNECT_TIMEOUT_MS, rather than waiting on', async () => {
    const pool = createPool(db.url, { max: 1, connectionTimeoutMs: 200 })
    const app = await gatewayOn(pool, { OVERLOAD_MAX_POOL_WAITING: '0' })
    const slow = pool.query('SELECT pg_sleep(2)')
    await waitFor(() => pool.totalCount === 1 && pool.idleCount === 0)

    const res = await postCapture(app, apiKey, captureBody('overload-2', ['o-1']))
    expectUnavailable(res)
    expect(await state(slow)).toBe('pending')
    expect((await app.inject('/metrics')).body).toContain(
      'cas_http_unavailable_responses_total{reason="database_unavailable"} 1',
    )
    await slow
    expect((await postCapture(app, apiKey, captureBody('overload-2', ['o-1']))).statusCode).toBe(200)
  })

  it('answers 503 when Postgres refuses connections, and keeps /healthz up while /readyz reports it', async () => {
    const nowhere = new URL(db.url)
    nowhere.port = String(await freePort())
    // The session secret from config: the app starts without reaching the database.
    const app = await gatewayOn(createPool(nowhere.toString(), { max: 2, connectionTimeoutMs: 2_000 }), {
      SESSION_SECRET: 'a'.repeat(32),
    })

    expectUnavailable(await postCapture(app, apiKey, captureBody('overload-3', ['o-1'])))
    const signup = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'down@example.com', password: 'a long passphrase', organizationName: 'Down' },
    })
    expectUnavailable(signup)
    expect((await app.inject('/healthz')).statusCode).toBe(200)
    const ready = await app.inject('/readyz')
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toMatchObject({ checks: { database: 'unreachable' } })
  })
})

describe('capture metrics', () => {
  it('counts messages stored, duplicates dropped, capture transactions and rate-limited requests', async () => {
    const app = await gateway({ CAPTURE_RATE_LIMIT_PER_MINUTE: '2' })
    const first = await postCapture(app, apiKey, captureBody('metrics-1', ['a', 'b', 'a']))
    expect(first.json().messagesStored).toBe(2)
    const again = await postCapture(app, apiKey, captureBody('metrics-1', ['a', 'b', 'c']))
    expect(again.json().messagesStored).toBe(1)
    expect((await postCapture(app, apiKey, captureBody('metrics-1', ['d']))).statusCode).toBe(429)

    const text = (await app.inject('/metrics')).body
    expect(text).toContain('cas_capture_messages_stored_total 3')
    expect(text).toContain('cas_capture_duplicate_messages_total 3')
    // Sent one after the other: two transactions of one capture each.
    expect(text).toContain('cas_capture_group_size_count 2')
    expect(text).toContain('cas_capture_group_size_sum 2')
    expect(text).toContain('cas_http_rate_limited_requests_total{route="/api/v1/capture"} 1')
    expect(text).toContain(
      'cas_http_request_duration_seconds_count{method="POST",route="/api/v1/capture",status_code="200"} 2',
    )
    expect(text).toMatch(
      /cas_http_request_duration_seconds_bucket\{le="\+Inf",method="POST",route="\/api\/v1\/capture",status_code="429"\} 1/,
    )
  })
})
