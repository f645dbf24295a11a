import { loadConfig } from '@cas/config'
import { migrate, withDatabase } from '@cas/db'
import { buildGatewayApp } from '@cas/service-gateway'
import { registerQueryRoutes } from '@cas/service-query'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { pino } from 'pino'
import { benchKeyring } from './keyring.ts'

/** (Re)creates database `name` on the server of `adminUrl` and migrates it; returns its URL. */
export async function createBenchDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = withDatabase(adminUrl, name)
  await migrate(url)
  return url
}

/**
 * The dashboard's HTTP surface (gateway and, given a reader pool, query routes) in this process, driven
 * with app.inject: for setting up accounts and for timing queries without a network hop.
 */
export async function buildDashboardApp(opts: {
  pool: pg.Pool
  databaseUrl: string
  readerPool?: pg.Pool
  now?: () => Date
}): Promise<FastifyInstance> {
  const config = loadConfig({
    DATABASE_URL: opts.databaseUrl,
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000000',
    CAPTURE_RATE_LIMIT_PER_MINUTE: '1000000000',
  })
  const now = opts.now ?? (() => new Date())
  // BENCH_LOGS=1 shows the app's errors (the causes of 500s).
  const logger = process.env.BENCH_LOGS ? pino({ level: 'error' }) : false
  const app = await buildGatewayApp({
    pool: opts.pool,
    keyring: benchKeyring,
    config,
    logger,
    readiness: [],
    now,
    sessionRoutes: async (scope) => {
      if (opts.readerPool) await registerQueryRoutes(scope, { readerPool: opts.readerPool, now })
    },
  })
  await app.ready()
  return app
}

/** Signs up a user with an organization; returns the session cookie and the organization's id. */
export async function signUpInProcess(
  app: FastifyInstance,
  email = 'bench@example.com',
): Promise<{ cookie: string; orgId: string }> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/signup',
    payload: { email, password: 'a long bench password', organizationName: 'Bench' },
  })
  if (res.statusCode !== 200) throw new Error(`sign-up answered ${res.statusCode}: ${res.body}`)
  const cookie = String(res.headers['set-cookie']).split(';')[0]!
  return { cookie, orgId: (res.json() as { organization: { id: string } }).organization.id }
}

export async function createChatbotInProcess(
  app: FastifyInstance,
  cookie: string,
  name: string,
): Promise<{ id: string; apiKey: string }> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/chatbots',
    headers: { cookie },
    payload: { name },
  })
  if (res.statusCode !== 200) throw new Error(`creating a chatbot answered ${res.statusCode}: ${res.body}`)
  const body = res.json() as { apiKey: string; chatbot: { id: string } }
  return { id: body.chatbot.id, apiKey: body.apiKey }
}
