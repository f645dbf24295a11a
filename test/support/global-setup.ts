import { execFileSync } from 'node:child_process'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { ensureReaderLogin, migrate, startEmbeddedPostgres, withDatabase } from '@cas/db'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { dockerEngineReachable, startKafkaContainer, startPostgresContainer } from './containers.ts'
import { TEST_MASTER_KEY } from './keyring.ts'
import { hasTestModel, requireTestModel, TEST_MODEL_DIR, UNREACHABLE_HUB } from './model.ts'
import { TEST_POSTGRES_BINARIES, testPostgresBinaries } from './postgres-binaries.ts'
import { hasRedisServer, startRedis } from './redis.ts'

export const TEMPLATE_DATABASE = 'cas_test_template'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin connection string of the test Postgres server (database `postgres`). */
    postgresUrl: string
    /** That server's `server_version_num` (150018 for 15.18): statements differ before 18. */
    postgresVersion: number
    /** Kafka bootstrap servers, or null when Kafka tests are skipped (no Java, outside CI). */
    kafkaBrokers: string[] | null
    kafkaVersion: string | null
    /** A Redis server for the shared rate-limit store, or null when skipped (no redis-server, outside CI). */
    redisUrl: string | null
  }
}

/**
 * Starts Postgres and Kafka once per test run and prepares a migrated template database that each test
 * file clones (test/support/database.ts). DATABASE_URL / KAFKA_BROKERS point it at existing servers;
 * otherwise Testcontainers when a Docker engine is reachable, else embedded Postgres and the broker run
 * from its jars (infra/kafka). TEST_POSTGRES_BINARIES starts the Postgres from another installation
 * (test/support/postgres-binaries.ts), before any container: CI's second pass runs on a PostgreSQL before 18.
 */
export default async function setup(project: TestProject) {
  const stops: (() => Promise<void>)[] = []
  // Services the tests start as child processes (CLIs, workers) must open what the in-process ones seal.
  process.env.ENCRYPTION_MASTER_KEY = TEST_MASTER_KEY
  // The services the tests start (the built app, CLIs) analyse with the test model, never downloading.
  requireTestModel()
  if (hasTestModel) process.env.ANALYSIS_MODEL_DIR = TEST_MODEL_DIR
  process.env.ANALYSIS_MODEL_HUB_URL ??= UNREACHABLE_HUB
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-test-'))
  // Postgres runs as its own user when we are root: it must be able to reach its data directory.
  await chmod(scratch, 0o755)
  stops.push(() => rm(scratch, { recursive: true, force: true }))
  // The test files that need the built app share one build of it (buildApp, test/support/built-app.ts).
  process.env.CAS_TEST_BUILD_DIR = path.join(scratch, 'build')

  // Read first: a value that names no usable installation fails the run before anything starts.
  const binaries = testPostgresBinaries()
  if (binaries && process.env.DATABASE_URL) {
    throw new Error(
      `${TEST_POSTGRES_BINARIES} and DATABASE_URL are both set: the tests can run on one server only`,
    )
  }
  const docker =
    !process.env.DATABASE_URL || !process.env.KAFKA_BROKERS ? await dockerEngineReachable() : false
  let postgresUrl = process.env.DATABASE_URL
  if (!postgresUrl && docker && !binaries) {
    const container = await startPostgresContainer()
    stops.unshift(container.stop)
    postgresUrl = container.url
  } else if (!postgresUrl) {
    // A throwaway cluster: durability settings off, the tests check our guarantees, not the disk's.
    const server = await startEmbeddedPostgres({
      dataDir: path.join(scratch, 'postgres'),
      ...(binaries ? { binaries } : {}),
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    })
    stops.unshift(server.stop)
    postgresUrl = server.url
  }
  const postgresVersion = await prepareTemplate(postgresUrl)
  console.log(`PostgreSQL under test: ${postgresVersion.text}${binaries ? ` (${binaries.root})` : ''}`)

  let kafkaBrokers: string[] | null = null
  let kafkaVersion: string | null = process.env.KAFKA_VERSION ?? null
  if (process.env.KAFKA_BROKERS) {
    kafkaBrokers = process.env.KAFKA_BROKERS.split(',')
  } else if (docker) {
    const { KAFKA_VERSION } = await import('../../infra/kafka/broker.ts')
    const container = await startKafkaContainer(KAFKA_VERSION)
    stops.unshift(container.stop)
    kafkaBrokers = container.brokers
    kafkaVersion = KAFKA_VERSION
  } else if (hasJava()) {
    const { startKafka } = await import('../../infra/kafka/broker.ts')
    const broker = await startKafka({ dataDir: path.join(scratch, 'kafka') })
    stops.unshift(broker.stop)
    kafkaBrokers = broker.brokers
    kafkaVersion = broker.version
  } else if (process.env.CI === 'true') {
    throw new Error('Java is required to run the Kafka tests in CI (install a JDK 17+)')
  } else {
    console.warn(
      `\n${'!'.repeat(78)}\n!! Java not found: every Kafka-backed test is SKIPPED. Install a JDK 17+ or set\n!! KAFKA_BROKERS to run them. CI never skips them.\n${'!'.repeat(78)}\n`,
    )
  }
  if (kafkaVersion) console.log(`Kafka broker under test: Apache Kafka ${kafkaVersion} at ${kafkaBrokers}`)

  let redisUrl = process.env.REDIS_URL ?? null
  if (!redisUrl && hasRedisServer()) {
    const redis = await startRedis()
    stops.unshift(redis.stop)
    redisUrl = redis.url
  } else if (!redisUrl && process.env.CI === 'true') {
    throw new Error('redis-server is required to run the Redis tests in CI (apt-get install redis-server)')
  } else if (!redisUrl) {
    console.warn(
      '\n!! redis-server not found: the shared rate-limit store tests are SKIPPED (apt-get install redis-server)\n',
    )
  }

  project.provide('postgresUrl', postgresUrl)
  project.provide('postgresVersion', postgresVersion.number)
  project.provide('redisUrl', redisUrl)
  project.provide('kafkaBrokers', kafkaBrokers)
  project.provide('kafkaVersion', kafkaVersion)

  return async () => {
    for (const stop of stops) await stop().catch(() => {})
  }
}

/** Makes the migrated template database; returns the server's version. */
async function prepareTemplate(postgresUrl: string): Promise<{ number: number; text: string }> {
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  let version: { number: number; text: string }
  try {
    const { rows } = await admin.query<{ number: number; text: string }>(
      "SELECT current_setting('server_version_num')::int AS number, 'PostgreSQL ' || current_setting('server_version') AS text",
    )
    version = rows[0]!
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`)
  } finally {
    await admin.end()
  }
  await migrate(withDatabase(postgresUrl, TEMPLATE_DATABASE))
  // The query service's login role is cluster-wide: made once here, used by every test database.
  await ensureReaderLogin(withDatabase(postgresUrl, TEMPLATE_DATABASE))
  return version
}

function hasJava(): boolean {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
