import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { dropTestDatabase } from '../../../test/support/database.ts'
import { withDatabase } from './index.ts'
import { migrate } from './migrate.ts'

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
