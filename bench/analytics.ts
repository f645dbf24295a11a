import { randomBytes } from 'node:crypto'
/**
 * Dashboard analytics latency at scale: overview and sentiment trend over 30 and 365 days, for read models
 * holding 1M and 10M messages (one organization, 10 chatbots, a year of traffic, ten messages per
 * conversation, three per end user).
 *
 *   npm run bench:analytics [-- --scales 1000000,10000000 --runs 20]
 *
 * The seed writes, with SQL, exactly the rows the projector keeps for that many messages in the tables the
 * analytics read (hourly rollups, hourly activity); analytics never read messages, so those are not
 * generated. Requests go through the real HTTP routes (app.inject), session and row-level security
 * included. Prints the machine, then p50/p95/max per query.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '@cas/config'
import { createPool, ensureReaderLogin, migrate, startEmbeddedPostgres } from '@cas/db'
import { Keyring } from '@cas/keyring'
import { buildGatewayApp } from '@cas/service-gateway'
import { registerQueryRoutes } from '@cas/service-query'
import type { FastifyInstance } from 'fastify'

const benchKeyring = new Keyring(randomBytes(32))

const { values } = parseArgs({
  options: {
    scales: { type: 'string', default: '1000000,10000000' },
    runs: { type: 'string', default: '20' },
  },
})
const SCALES = values.scales.split(',').map(Number)
const RUNS = Number(values.runs)
const CHATBOTS = 10
const NOW = new Date('2026-11-21T12:00:00Z')

const scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-bench-analytics-'))
await chmod(scratch, 0o755)
const postgres = await startEmbeddedPostgres({
  dataDir: path.join(scratch, 'pg'),
  settings: { shared_buffers: '1GB', work_mem: '64MB', max_wal_size: '8GB' },
})
try {
  await migrate(postgres.url)
  const pool = createPool(postgres.url, { max: 10 })
  const readerPool = createPool(await ensureReaderLogin(postgres.url), { max: 10 })
  const config = loadConfig({ DATABASE_URL: postgres.url, UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '100000' })
  const app = await buildGatewayApp({
    pool,
    keyring: benchKeyring,
    config,
    logger: false,
    readiness: [],
    now: () => NOW,
  })
  await registerQueryRoutes(app, { readerPool, now: () => NOW })
  await app.ready()
  const { rows: version } = await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
      `Node ${process.version}, PostgreSQL ${version[0]!.v} (embedded)`,
  )
  const cookie = await signUp(app)
  const chatbotIds: string[] = []
  for (let i = 0; i < CHATBOTS; i++) chatbotIds.push(await createChatbot(app, cookie, i))
  const { rows: org } = await pool.query<{ org_id: string }>('SELECT org_id FROM chatbots LIMIT 1')

  for (const messages of SCALES) {
    const seeded = await timed(() => seed(pool, org[0]!.org_id, chatbotIds, messages))
    console.log(`\n${messages.toLocaleString('en')} messages (seeded in ${seeded.toFixed(0)} s)`)
    for (const [label, url] of [
      ['overview, 30 days', '/api/v1/analytics/overview?days=30'],
      ['overview, 365 days', '/api/v1/analytics/overview?days=365'],
      ['overview, 30 days, one chatbot', `/api/v1/analytics/overview?days=30&chatbotId=${chatbotIds[0]}`],
      ['sentiment by day, 30 days', '/api/v1/analytics/sentiment?days=30'],
      ['sentiment by day, 365 days', '/api/v1/analytics/sentiment?days=365'],
      [
        'sentiment by week, 365 days, Europe/Berlin',
        '/api/v1/analytics/sentiment?days=365&interval=week&tz=Europe/Berlin',
      ],
    ] as const) {
      const ms: number[] = []
      for (let i = 0; i < RUNS + 2; i++) {
        const start = process.hrtime.bigint()
        const res = await app.inject({ method: 'GET', url, headers: { cookie } })
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
        if (i >= 2) ms.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
      ms.sort((a, b) => a - b)
      const pick = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(1)
      console.log(
        `  ${label.padEnd(46)} p50 ${pick(0.5).padStart(7)} ms   p95 ${pick(0.95).padStart(7)} ms   max ${pick(1).padStart(7)} ms`,
      )
    }
  }
  await app.close()
  await readerPool.end()
  await pool.end()
} finally {
  await postgres.stop()
  await rm(scratch, { recursive: true, force: true })
}

/**
 * The rollup and activity rows a year of `messages` leaves: spread evenly over the chatbots and the
 * 8,760 hours; a conversation of 10 messages lives within one hour; an end user has three conversations.
 */
async function seed(
  pool: ReturnType<typeof createPool>,
  orgId: string,
  chatbotIds: string[],
  messages: number,
) {
  await pool.query('TRUNCATE rm_hourly_stats, rm_hourly_topics, rm_hourly_activity')
  const hours = 365 * 24
  const perHour = messages / (hours * chatbotIds.length)
  const conversations = Math.round(messages / 10)
  await pool.query(
    `INSERT INTO rm_hourly_stats (org_id, chatbot_id, hour, messages, user_messages, assistant_messages,
       sentiment_sum, sentiment_count, positive, neutral, negative)
     SELECT $1, c, $2::timestamptz - make_interval(hours => h), m, m / 2, m - m / 2, m * 0.1, m, m / 3, m / 3, m - 2 * (m / 3)
       FROM unnest($3::uuid[]) c, generate_series(1, $4) h, LATERAL (SELECT round($5 * (0.5 + random()))::int AS m) x`,
    [orgId, NOW, chatbotIds, hours, perHour],
  )
  await pool.query(
    `INSERT INTO rm_hourly_topics (org_id, chatbot_id, hour, topic, messages)
     SELECT org_id, chatbot_id, hour, t, greatest(1, messages / 4) FROM rm_hourly_stats,
            unnest(ARRAY['billing', 'shipping', 'login', 'refunds']) t WHERE random() < 0.75`,
  )
  await pool.query(
    `INSERT INTO rm_hourly_activity (org_id, chatbot_id, hour, conversation_id, end_user_id)
     SELECT $1, ($2::uuid[])[1 + i % $3], $4::timestamptz - make_interval(hours => 1 + (i / $3) % $5),
            md5(i::text)::uuid, 'user-' || (i / 3)
       FROM generate_series(0, $6 - 1) i`,
    [orgId, chatbotIds, chatbotIds.length, NOW, hours, conversations],
  )
  await pool.query('VACUUM ANALYZE rm_hourly_stats, rm_hourly_topics, rm_hourly_activity')
}

async function signUp(app: FastifyInstance): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/signup',
    payload: { email: 'bench@example.com', password: 'a long bench password', organizationName: 'Bench' },
  })
  return String(res.headers['set-cookie']).split(';')[0]!
}

async function createChatbot(app: FastifyInstance, cookie: string, i: number): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/chatbots',
    headers: { cookie },
    payload: { name: `bot ${i}` },
  })
  return res.json().chatbot.id
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1e9
}
