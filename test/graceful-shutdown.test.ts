/**
 * SIGTERM to real service processes in the middle of capture load: the all-in-one (gateway, query,
 * projector and analysis) stops accepting, answers the requests in flight, finishes and commits the
 * consumers' batches, and exits 0; a Kafka projector process commits its batch and leaves its group.
 * Every acknowledged capture is stored, and once a new projector has caught up, every stored message is
 * in the read models exactly once.
 */

import { fileURLToPath } from 'node:url'
import { freePort } from '@cas/db'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import { createProjector } from '@cas/service-projector'
import type pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { CaptureLoad, signUpWithChatbot, waitUntilListening } from './support/capture-load.ts'
import { captureBody, createChatbot, postCapture } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { kafkaBrokers } from './support/kafka.ts'
import { testKeyring } from './support/keyring.ts'
import { startPipeline } from './support/pipeline.ts'
import { waitFor } from './support/wait.ts'
import { spawnWorker, type Worker } from './support/worker-process.ts'

const ALL_IN_ONE = fileURLToPath(new URL('../services/all-in-one/src/main.ts', import.meta.url))
const PROJECTOR = fileURLToPath(new URL('../services/projector/src/main.ts', import.meta.url))

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
        // One capture per transaction (four at once), so that each capture held below is seen waiting.
        CAPTURE_MAX_GROUP: '1',
      },
      ALL_IN_ONE,
    )
    await child.waitForLine((l) => l.includes('conversation analytics is up'), 60_000)

    const { apiKey, chatbotId } = await signUpWithChatbot(base)

    // Capture load: four clients, each sending two new messages per request until the service is gone.
    const load = new CaptureLoad({ base, apiKey, clients: 4, stopOnNetworkError: true })
    cleanups.push(() => load.stop())
    await waitFor(() => load.count(200) >= 40, { what: '40 captures' })

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
    const heldBefore = load.outcomes.length

    const sigtermAt = Date.now()
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
    expect(load.outcomes.length).toBe(heldBefore)
    await lock.query('COMMIT')

    const exitCode = await new Promise<number | null>((resolve) => {
      if (child!.process.exitCode !== null) resolve(child!.process.exitCode)
      else child!.process.once('exit', (code) => resolve(code))
    })
    await load.stop()
    expect(exitCode).toBe(0)
    await child.waitForLine((l) => l.includes('"msg":"stopped"'))

    // Every request got an answer (200, or a 503 while going away) or, once the listener was closed,
    // a refused connection; the ones held in flight were answered 200. None hung.
    expect(load.hangs).toEqual([])
    expect(load.outcomes.filter((o) => o.status !== 200 && o.status !== 503)).toEqual([])
    expect(load.failures.every((f) => f.sentAt >= sigtermAt)).toBe(true)
    const held = load.outcomes.slice(heldBefore).filter((o) => o.sentAt < sigtermAt)
    expect(held.map((o) => o.status)).toEqual([200, 200, 200, 200])

    // Acknowledged = stored.
    const { rows } = await db.pool.query<{ message_id: string }>('SELECT message_id FROM capture_message_ids')
    const stored = new Set(rows.map((r) => r.message_id))
    expect(load.acknowledged().filter((id) => !stored.has(id))).toEqual([])

    // A new projector continues from the committed checkpoint: each stored message is projected once.
    const projector = createProjector({
      pool: db.pool,
      keyring: testKeyring,
      eventLog: { ...EMBEDDED_EVENT_LOG, pollIntervalMs: 5 },
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

  it.skipIf(kafkaBrokers() === null)(
    'stops a Kafka projector process mid-load after committing its batch; its successor applies the rest once',
    async () => {
      const pipeline = await startPipeline('kafka', cleanups)
      db = undefined // the pipeline drops its own database
      const { app, eventLog } = pipeline
      const pool = pipeline.db.pool
      if (eventLog.kind !== 'kafka') throw new Error('expected the Kafka pipeline')
      const projectorEnv = async () => {
        const port = await freePort()
        return {
          env: {
            DATABASE_URL: pipeline.db.url,
            KAFKA_BROKERS: kafkaBrokers()!.join(','),
            KAFKA_TOPIC_PREFIX: eventLog.topicPrefix ?? '',
            PORT: String(port),
            HOST: '127.0.0.1',
            LOG_LEVEL: 'warn',
          },
          base: `http://127.0.0.1:${port}`,
        }
      }
      const first = await projectorEnv()
      child = spawnWorker(first.env, PROJECTOR)
      await waitUntilListening(first.base)

      // Captures keep coming while the projector is stopped and replaced.
      const { apiKey } = await createChatbot(app, (await signUp(app)).cookie)
      let stop = false
      let sent = 0
      const load = (async () => {
        for (let i = 0; !stop; i++) {
          const res = await postCapture(app, apiKey, captureBody(`kafka-${i % 20}`, [`k${i}-a`, `k${i}-b`]))
          expect(res.statusCode, res.body).toBe(200)
          sent++
        }
      })()
      await waitFor(async () => (await count(pool, 'SELECT count(*) AS n FROM rm_messages')) >= 40, {
        what: 'the projector applying captures',
      })

      const stopping = child
      const exited = new Promise<number | null>((resolve) =>
        stopping.process.once('exit', (code) => resolve(code)),
      )
      stopping.process.kill('SIGTERM')
      expect(await exited).toBe(0)
      const sentAtStop = sent
      await waitFor(() => sent >= sentAtStop + 20, { what: 'captures while no projector runs' })

      const second = await projectorEnv()
      child = spawnWorker(second.env, PROJECTOR)
      await waitUntilListening(second.base)
      await waitFor(() => sent >= sentAtStop + 40, { what: 'captures with the new projector' })
      stop = true
      await load

      const stored = await count(pool, 'SELECT count(*) AS n FROM capture_message_ids')
      expect(stored).toBe(sent * 2)
      await waitFor(async () => (await count(pool, 'SELECT count(*) AS n FROM rm_messages')) === stored, {
        what: 'every stored message in the read model',
        timeoutMs: 60_000,
      })
      expect(await count(pool, 'SELECT coalesce(sum(messages), 0) AS n FROM rm_hourly_stats')).toBe(stored)
      expect(await count(pool, 'SELECT coalesce(sum(message_count), 0) AS n FROM rm_conversations')).toBe(
        stored,
      )
    },
  )
})
