/**
 * SIGTERM to a real service process (the all-in-one: gateway, query, projector and analysis) in the
 * middle of capture load: it stops accepting, answers the requests in flight, finishes and commits the
 * consumers' batches, and exits 0. Every acknowledged capture is stored, and once a new projector has
 * caught up, every stored message is in the read models exactly once.
 */
import { fileURLToPath } from 'node:url'
import { freePort } from '@cas/db'
import { createProjector } from '@cas/service-projector'
import type pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { waitFor } from './support/wait.ts'
import { spawnWorker, type Worker } from './support/worker-process.ts'

const ALL_IN_ONE = fileURLToPath(new URL('../services/all-in-one/src/main.ts', import.meta.url))
// A request that takes longer than this is a hang, not a slow answer.
const CLIENT_TIMEOUT_MS = 15_000

interface Outcome {
  readonly ids: readonly string[]
  readonly status: number | 'network-error'
  readonly sentAfterSigterm: boolean
}

async function json(base: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  })
  return { res, body: (await res.json()) as Record<string, unknown> }
}

async function count(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(sql, params)
  return Number(rows[0]!.n)
}

describe('graceful shutdown on SIGTERM', () => {
  let db: TestDatabase | undefined
  let child: Worker | undefined
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    await child?.kill('SIGKILL')
    for (const c of cleanups.splice(0).reverse()) await c()
    await db?.drop()
  })

  it('answers the captures in flight, commits, exits 0, and loses or doubles nothing', async () => {
    db = await createTestDatabase()
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    child = spawnWorker(
      {
        DATABASE_URL: db.url,
        KAFKA_BROKERS: '',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        CAPTURE_RATE_LIMIT_PER_MINUTE: '1000000',
      },
      ALL_IN_ONE,
    )
    await child.waitForLine((l) => l.includes('conversation analytics is up'), 60_000)

    const signup = await json(base, '/api/v1/auth/signup', {
      email: 'ops@example.com',
      password: 'a long passphrase',
      organizationName: 'Ops',
    })
    const cookie = signup.res.headers.get('set-cookie')!.split(';')[0]!
    const created = await json(base, '/api/v1/chatbots', { name: 'Load' }, { cookie })
    const apiKey = created.body.apiKey as string
    const chatbotId = (created.body.chatbot as { id: string }).id

    // Capture load: four clients, each sending two new messages per request until the service is gone.
    let sigtermAt: number | undefined
    const outcomes: Outcome[] = []
    let stop = false
    const client = async (c: number) => {
      for (let i = 0; !stop; i++) {
        const ids = [`c${c}-m${i}-a`, `c${c}-m${i}-b`]
        const sentAfterSigterm = sigtermAt !== undefined
        try {
          const { res } = await json(
            base,
            '/api/v1/capture',
            {
              conversationId: `conv-${c}-${i % 7}`,
              messages: ids.map((id) => ({ id, role: 'user', content: `hello ${id}` })),
            },
            { authorization: `Bearer ${apiKey}` },
          )
          outcomes.push({ ids, status: res.status, sentAfterSigterm })
        } catch (err) {
          if ((err as Error).name === 'TimeoutError') throw new Error(`a capture hung: ${ids.join(', ')}`)
          outcomes.push({ ids, status: 'network-error', sentAfterSigterm })
          return // the service has stopped listening
        }
      }
    }
    const clients = Promise.all([0, 1, 2, 3].map(client))
    await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 40, { what: '40 captures' })

    // Hold the captures that arrive now in flight: they wait for the chatbot row this transaction locks.
    const lock = await db.pool.connect()
    cleanups.push(async () => {
      await lock.query('ROLLBACK').catch(() => {})
      lock.release()
    })
    await lock.query('BEGIN')
    await lock.query('SELECT 1 FROM chatbots WHERE id = $1 FOR UPDATE', [chatbotId])
    const blocked = () =>
      count(
        db!.pool,
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name = 'all-in-one'`,
      )
    // Every client ends up with a capture waiting: the load is frozen, with four captures in flight.
    await waitFor(async () => (await blocked()) === 4, { what: 'four captures waiting on the lock' })
    const heldBefore = outcomes.length

    sigtermAt = Date.now()
    child.process.kill('SIGTERM')
    await child.waitForLine((l) => l.includes('"msg":"shutting down"'))
    // No new connection is accepted while the captures in flight are still being answered.
    await waitFor(
      async () => {
        try {
          await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })
          return false
        } catch {
          return true
        }
      },
      { what: 'the listener to close' },
    )
    expect(outcomes.length).toBe(heldBefore)
    await lock.query('COMMIT')

    const exitCode = await new Promise<number | null>((resolve) => {
      if (child!.process.exitCode !== null) resolve(child!.process.exitCode)
      else child!.process.once('exit', (code) => resolve(code))
    })
    stop = true
    await clients
    expect(exitCode).toBe(0)
    await child.waitForLine((l) => l.includes('"msg":"stopped"'))

    // Every request got an answer (200, or a 503 while going away) or, once the listener was closed,
    // a refused connection; the ones held in flight were answered 200.
    const answered = outcomes.filter((o) => o.status !== 'network-error')
    expect(answered.every((o) => o.status === 200 || o.status === 503)).toBe(true)
    expect(outcomes.filter((o) => o.status === 'network-error').every((o) => o.sentAfterSigterm)).toBe(true)
    const heldAnswers = outcomes.slice(heldBefore).filter((o) => !o.sentAfterSigterm)
    expect(heldAnswers).toHaveLength(4)
    expect(heldAnswers.every((o) => o.status === 200)).toBe(true)

    // Acknowledged = stored.
    const acked = outcomes.filter((o) => o.status === 200).flatMap((o) => o.ids)
    const { rows } = await db.pool.query<{ message_id: string }>('SELECT message_id FROM capture_message_ids')
    const stored = new Set(rows.map((r) => r.message_id))
    expect(acked.filter((id) => !stored.has(id))).toEqual([])

    // A new projector continues from the committed checkpoint: each stored message is projected once.
    const projector = createProjector({
      pool: db.pool,
      eventLog: { kind: 'journal', pollIntervalMs: 5 },
      logger: false,
    })
    await projector.consumer.start()
    cleanups.push(() => projector.consumer.stop())
    await waitFor(
      async () => (await count(db!.pool, 'SELECT count(*) AS n FROM rm_messages')) === stored.size,
      {
        what: 'every stored message in the read model',
      },
    )
    expect(await count(db.pool, 'SELECT coalesce(sum(messages), 0) AS n FROM rm_hourly_stats')).toBe(
      stored.size,
    )
    expect(await count(db.pool, 'SELECT coalesce(sum(message_count), 0) AS n FROM rm_conversations')).toBe(
      stored.size,
    )
  })
})
