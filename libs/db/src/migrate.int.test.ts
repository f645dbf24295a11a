import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { dropTestDatabase } from '../../../test/support/database.ts'
import { withDatabase } from './index.ts'
import { DatabaseFromNewerVersionError, migrate } from './migrate.ts'

let adminUrl: string
let name: string
let admin: pg.Client
beforeAll(async () => {
  adminUrl = inject('postgresUrl')
  name = `cas_test_${randomBytes(6).toString('hex')}`
  admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
})
afterAll(async () => {
  await dropTestDatabase(adminUrl, name)
  await admin.end()
})

// node-pg-migrate ends a connection it opened itself without waiting for it: a database dropped WITH
// (FORCE) just after then terminated it, and its FATAL was an unhandled 'error' in the caller's process.
it('has closed its connection when it returns, so that the database can be dropped at once', async () => {
  const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length
  const before = sockets()
  const applied = await migrate(withDatabase(adminUrl, name), { count: 3 })
  // Checked before anything else can run: no socket of the migration's is left open.
  expect(sockets()).toBe(before)
  expect(applied).toHaveLength(3)
  const { rows } = await admin.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
    [name],
  )
  expect(rows[0]!.n).toBe(0)
  // And again: the pending ones, none applied twice.
  expect((await migrate(withDatabase(adminUrl, name))).length).toBeGreaterThan(30)
  expect((await migrate(withDatabase(adminUrl, name))).length).toBe(0)
})

// trial8: an older version started on a newer version's database found nothing to do (node-pg-migrate
// compares the applied migrations with its files only as far as its files go) and ran on tables it did not
// know; its rebuild set every newer event aside. Such a start is refused, with one line, and changes nothing.
it('refuses a database a newer version migrated, naming its migrations, and applies nothing', async () => {
  const url = withDatabase(adminUrl, name)
  await migrate(url)
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    const applied = async () => (await db.query('SELECT id, name, run_on FROM pgmigrations ORDER BY id')).rows
    await db.query(
      "INSERT INTO pgmigrations (name, run_on) VALUES ('9998_from-a-newer-version', now()), ('9999_and-another', now())",
    )
    const before = await applied()

    const refused = await migrate(url).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(DatabaseFromNewerVersionError)
    expect((refused as Error).message).toBe(
      'this database was migrated by a newer version of the service: it holds 2 migrations this version does not have ' +
        '(9998_from-a-newer-version … 9999_and-another). Downgrading is not supported: start the newer version ' +
        'again, or restore the backup taken before the upgrade (docs/operations.md, "Upgrading")',
    )
    expect(await applied()).toEqual(before)

    // A service started on it exits 1 with that line alone on stderr, before serving anything.
    const projector = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../../../services/projector/src/main.ts', import.meta.url))],
      {
        env: { PATH: process.env.PATH, DATABASE_URL: url, KAFKA_BROKERS: '', PORT: '0', LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 120_000,
      },
    )
    expect(projector.status).toBe(1)
    expect(projector.stderr.trim().split('\n')).toEqual([(refused as Error).message])
    expect(projector.stdout).not.toMatch(/"level":60/)
    expect(await applied()).toEqual(before)

    // The newer version's own migrations gone again (it was restored from a backup, say), it starts as before.
    await db.query("DELETE FROM pgmigrations WHERE name LIKE '999%'")
    expect(await migrate(url)).toEqual([])
  } finally {
    await db.end()
  }
}, 150_000)
