import { type Config, loadConfig } from '@cas/config'
import { buildGatewayApp } from '@cas/service-gateway'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import type { TestDatabase } from './database.ts'

/**
 * The gateway app on a test database, driven with app.inject. `env` overrides configuration.
 * TEST_LOGS=1 prints the app's error logs (the 500s' causes) while debugging.
 */
export async function buildTestGateway(
  db: TestDatabase,
  env: Record<string, string> = {},
  now?: () => Date,
): Promise<{ app: FastifyInstance; config: Config }> {
  const config = loadConfig({ DATABASE_URL: db.url, ...env })
  const app = await buildGatewayApp({
    pool: db.pool,
    config,
    logger: process.env.TEST_LOGS ? pino({ level: 'error' }) : false,
    readiness: [],
    now,
  })
  await app.ready()
  return { app, config }
}
