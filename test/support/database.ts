import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { createPool, migrate, migrationsDir, readerLoginUrl, withDatabase } from '@cas/db'
import pg from 'pg'
import { inject } from 'vitest'

const TEMPLATE_DATABASE = 'cas_test_template'
const TEST_DATABASE = /^cas_test_[0-9a-f]{12}$/

export interface TestDatabase {
  readonly url: string
  readonly name: string
  readonly pool: pg.Pool
  /** The database as the query service's row-level-security role sees it. */
  readonly readerPool: pg.Pool
  drop(): Promise<void>
}

/**
 * A fresh, migrated database for one test file, cloned from the template the global setup prepared
 * (milliseconds, where running the migrations again would take much longer).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('postgresUrl')
  const name = `cas_test_${randomBytes(6).toString('hex')}`
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`)
  const url = withDatabase(adminUrl, name)
  const pool = createPool(url, { max: 20, applicationName: 'test' })
  const readerPool = createPool(readerLoginUrl(url), { max: 5, applicationName: 'test-reader' })
  return testDatabaseOf(adminUrl, name, pool, readerPool)
}

/**
 * A fresh database migrated up to, not including, the migration whose file name starts with `migration`
 * ("0015"): the database an earlier version left, for a test of that migration on its data. The test then
 * runs the rest: `migrate(db.url)`.
 */
export async function createTestDatabaseBefore(migration: string): Promise<TestDatabase> {
  const adminUrl = inject('postgresUrl')
  const name = `cas_test_${randomBytes(6).toString('hex')}`
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`)
  const url = withDatabase(adminUrl, name)
  const count = readdirSync(migrationsDir()).filter((f) => /^\d{4}_.*\.sql$/.test(f) && f < migration).length
  await migrate(url, { count })
  return openTestDatabase(name)
}

/** Opens pools on the test database `name` again (after they were ended, for a copy of it). */
export function openTestDatabase(name: string): TestDatabase {
  const adminUrl = inject('postgresUrl')
  const url = withDatabase(adminUrl, name)
  const pool = createPool(url, { max: 20, applicationName: 'test' })
  const readerPool = createPool(readerLoginUrl(url), { max: 5, applicationName: 'test-reader' })
  return testDatabaseOf(adminUrl, name, pool, readerPool)
}

/**
 * A copy of the test database `name` as it is now, opened: what restoring a backup of it gives
 * (`CREATE DATABASE … TEMPLATE`, so nobody may be connected to it meanwhile: end its pools first).
 */
export async function copyTestDatabase(name: string): Promise<TestDatabase> {
  if (!TEST_DATABASE.test(name)) throw new Error(`refusing to copy ${name}: not a test database`)
  const copy = `cas_test_${randomBytes(6).toString('hex')}`
  await adminQuery(inject('postgresUrl'), `CREATE DATABASE ${copy} TEMPLATE ${name}`)
  return openTestDatabase(copy)
}

/** The test database `name` with its pools open: `drop()` ends them and drops it. */
export function testDatabaseOf(
  adminUrl: string,
  name: string,
  pool: pg.Pool,
  readerPool: pg.Pool,
): TestDatabase {
  return {
    url: withDatabase(adminUrl, name),
    name,
    pool,
    readerPool,
    async drop() {
      await readerPool.end()
      await pool.end()
      await dropTestDatabase(adminUrl, name)
    },
  }
}

/** Drops a test database; refuses any name that isn't one this helper made. */
export async function dropTestDatabase(adminUrl: string, name: string) {
  if (!TEST_DATABASE.test(name)) throw new Error(`refusing to drop ${name}: not a test database`)
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

async function adminQuery(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}
