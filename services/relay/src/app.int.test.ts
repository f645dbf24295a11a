import { createPool } from '@cas/db'
import { createHttpApp } from '@cas/http'
import { Metrics } from '@cas/metrics'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { createTestTopics, kafkaBrokers, type TestKafka } from '../../../test/support/kafka.ts'
import { samples } from '../../../test/support/metrics.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { relayService } from './app.ts'

interface RunningRelay {
  readonly app: FastifyInstance
  readonly service: ReturnType<typeof relayService>
  /** The backend holding its lock, while it leads. */
  lockPid(): Promise<number | undefined>
}

describe.skipIf(kafkaBrokers() === null)("the relay's /readyz and /metrics: whether it leads", () => {
  let db: TestDatabase
  let t: TestKafka
  const cleanups: (() => Promise<unknown>)[] = []

  beforeEach(async () => {
    db = await createTestDatabase()
    t = await createTestTopics(1)
  })
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
    await db.drop()
  })

  /** A relay as its process composes it, on a pool of its own (its own sessions, as another process's). */
  async function startRelay(name: string): Promise<RunningRelay> {
    const pool = createPool(db.url, { max: 3, applicationName: name })
    const service = relayService({
      pool,
      kafka: t.kafka,
      topicPrefix: t.topicPrefix,
      logger: pino({ level: 'silent' }),
    })
    const metrics = new Metrics()
    for (const set of service.metricSets ?? []) metrics.use(set)
    await service.start?.(metrics)
    const app = await createHttpApp({ logger: false, readiness: service.readiness?.() ?? [], metrics })
    service.metrics?.(app.metrics)
    await app.ready()
    cleanups.push(async () => {
      await app.close()
      await service.close()
      await pool.end()
    })
    const lockPid = async () => {
      const { rows } = await pool.query<{ pid: number }>(
        `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
          WHERE l.locktype = 'advisory' AND l.classid = x'72656c61'::int AND l.objid = 1 AND l.granted
            AND a.application_name = $1`,
        [name],
      )
      return rows[0]?.pid
    }
    return { app, service, lockPid }
  }

  const readiness = async (relay: RunningRelay) => {
    const response = await relay.app.inject('/readyz')
    return { status: response.statusCode, relay: response.json().details?.relay }
  }
  const leaderGauge = async (relay: RunningRelay) =>
    samples((await relay.app.inject('/metrics')).body, 'cas_relay_leader').get('')

  it('says which relay leads and since when, keeps the standby ready, and shows the standby taking over', async () => {
    // Given two relays on one database, the first leading
    const first = await startRelay('relay-first')
    await waitFor(() => first.service.relay.stats.isLeader, { what: 'the first relay to lead' })
    const second = await startRelay('relay-second')

    // Then both are ready, and each says whether it leads, in /readyz and /metrics
    const leading = await readiness(first)
    const standing = await readiness(second)
    expect(leading).toMatchObject({ status: 200, relay: { leader: true } })
    expect(standing).toMatchObject({ status: 200, relay: { leader: false } })
    expect(Number.isNaN(Date.parse(standing.relay.since))).toBe(false)
    expect(await leaderGauge(first)).toBe(1)
    expect(await leaderGauge(second)).toBe(0)

    // When the leader dies (its session ends with its lock, as its process's would)
    const pid = await first.lockPid()
    expect(pid).toBeDefined()
    const stopping = first.service.close()
    await db.pool.query('SELECT pg_terminate_backend($1)', [pid])
    await stopping

    // Then the standby leads, says so since a later time than it stood by, and stayed ready throughout
    const tookOver = await waitFor(
      async () => {
        const now = await readiness(second)
        expect(now.status).toBe(200)
        return now.relay.leader === true && now
      },
      { what: 'the standby to lead' },
    )
    expect(Date.parse(tookOver.relay.since)).toBeGreaterThan(Date.parse(standing.relay.since))
    expect(await leaderGauge(second)).toBe(1)
  })
})
