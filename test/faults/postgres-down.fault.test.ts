/**
 * Fault test 4 (issue 7): stop Postgres during capture load.
 *
 * A real service process (the all-in-one: gateway, projector and analysis, on DATABASE_URL) against an
 * embedded Postgres server of this test's own (not the shared one of the test run: it is stopped and
 * started again). While Postgres is down every capture is answered 503 with a Retry-After in the API's
 * error shape, quickly (never a 500, never a hang: every request has a client timeout), and /healthz
 * keeps answering; once Postgres is back the service resumes by itself. Everything acknowledged (200)
 * is stored, and reaches the read models exactly once.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createPool, freePort, migrate, type RunningPostgres, startEmbeddedPostgres } from '@cas/db'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CaptureLoad, signUpWithChatbot, waitUntilListening } from '../support/capture-load.ts'
import { waitFor } from '../support/wait.ts'
import { spawnWorker, type Worker } from '../support/worker-process.ts'

const ALL_IN_ONE = fileURLToPath(new URL('../../services/all-in-one/src/main.ts', import.meta.url))
/** A capture not answered within this is a hang. */
const CLIENT_TIMEOUT_MS = 10_000
/** How long the service may take to notice an outage and answer 503 (connection timeout and margin). */
const CONNECT_TIMEOUT_MS = 2_000

let scratch: string
let postgres: RunningPostgres | undefined
let child: Worker | undefined
let pool: pg.Pool | undefined

async function startPostgres(port: number) {
  postgres = await startEmbeddedPostgres({ dataDir: path.join(scratch, 'postgres'), port })
  return postgres
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-fault-pg-'))
  // Postgres runs as its own user when we are root: it must be able to reach its data directory.
  await import('node:fs/promises').then((fs) => fs.chmod(scratch, 0o755))
})

afterAll(async () => {
  await child?.kill('SIGKILL')
  await pool?.end()
  await postgres?.stop().catch(() => {})
  await rm(scratch, { recursive: true, force: true })
})

async function count(sql: string): Promise<number> {
  const { rows } = await pool!.query<{ n: string }>(sql)
  return Number(rows[0]!.n)
}

describe('fault: Postgres stops during capture load', () => {
  it('answers 503 while it is down, resumes when it is back, and loses nothing acknowledged', async () => {
    const server = await startPostgres(await freePort())
    await migrate(server.url)
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    child = spawnWorker(
      {
        DATABASE_URL: server.url,
        KAFKA_BROKERS: '',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        CAPTURE_RATE_LIMIT_PER_MINUTE: '1000000',
        DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      },
      ALL_IN_ONE,
    )
    await waitUntilListening(base)
    const { apiKey } = await signUpWithChatbot(base)

    const load = new CaptureLoad({ base, apiKey, clients: 4, timeoutMs: CLIENT_TIMEOUT_MS })
    try {
      await waitFor(() => load.count(200) >= 50, { what: '50 acknowledged captures', timeoutMs: 60_000 })

      // Postgres goes away (a fast shutdown: connections are terminated, new ones refused).
      await server.stop()
      const stoppedAt = Date.now()
      await waitFor(
        () => load.outcomes.filter((o) => o.status === 503 && o.sentAt > stoppedAt).length >= 20,
        {
          what: '20 captures answered 503 while Postgres is down',
          timeoutMs: 60_000,
        },
      )
      const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      expect(health.status).toBe(200)
      const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) })
      expect(ready.status).toBe(503)

      // It comes back on the same port; the service reconnects by itself.
      await startPostgres(server.port)
      const restartedAt = Date.now()
      await waitFor(
        () => load.outcomes.filter((o) => o.status === 200 && o.sentAt > restartedAt).length >= 50,
        {
          what: '50 acknowledged captures after the restart',
          timeoutMs: 60_000,
        },
      )
    } catch (err) {
      // What the clients saw, to tell a hang from a crash from wrong answers.
      const statuses = new Map<number, number>()
      for (const o of load.outcomes) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1)
      console.error('capture outcomes by status:', [...statuses])
      console.error('network failures:', load.failures.slice(0, 5), 'hangs:', load.hangs.length)
      throw err
    } finally {
      await load.stop()
    }

    // Only 200s and 503s, every request answered in time, no connection ever refused or reset.
    expect(load.hangs).toEqual([])
    expect(load.failures).toEqual([])
    expect(
      load.outcomes.filter((o) => o.status !== 200 && o.status !== 503).map((o) => [o.status, o.body]),
    ).toEqual([])
    const unavailable = load.outcomes.filter((o) => o.status === 503)
    for (const o of unavailable) {
      expect(Number(o.retryAfter)).toBeGreaterThan(0)
      expect(o.body).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.any(String) } })
    }
    // Quickly: within the connection timeout (and some scheduling slack), never the client's timeout.
    const slowest = Math.max(...unavailable.map((o) => o.answeredAt - o.sentAt))
    expect(slowest).toBeLessThan(CONNECT_TIMEOUT_MS + 3_000)

    // Everything acknowledged is stored.
    pool = createPool(postgres!.url, { max: 2 })
    const { rows } = await pool.query<{ message_id: string }>('SELECT message_id FROM capture_message_ids')
    const stored = new Set(rows.map((r) => r.message_id))
    const acknowledged = load.acknowledged()
    expect(acknowledged.length).toBeGreaterThanOrEqual(200)
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([])

    // The service's projector resumed too: every stored message is in the read models, once.
    await waitFor(async () => (await count('SELECT count(*) AS n FROM rm_messages')) === stored.size, {
      what: 'every stored message in the read model',
      timeoutMs: 60_000,
    })
    expect(await count('SELECT coalesce(sum(messages), 0) AS n FROM rm_hourly_stats')).toBe(stored.size)
    expect(await count('SELECT coalesce(sum(message_count), 0) AS n FROM rm_conversations')).toBe(stored.size)

    // And it still shuts down cleanly.
    const exited = new Promise<number | null>((resolve) =>
      child!.process.once('exit', (code) => resolve(code)),
    )
    child.process.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
