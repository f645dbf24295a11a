import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { dropTestDatabase } from '../../../test/support/database.ts'
import { withDatabase } from './index.ts'
import { migrate } from './migrate.ts'
import { ensureReaderLogin } from './reader-role.ts'

// A managed Postgres's application role: it owns its database, and is neither superuser nor CREATEROLE
// nor CREATEDB. The test cluster's cas_reader exists already (the template's migrations made it), as it
// does once an administrator has run CREATE ROLE cas_reader NOLOGIN.
let adminUrl: string
let admin: pg.Client
const suffix = randomBytes(6).toString('hex')
const database = `cas_test_${suffix}`
const role = `cas_test_app_${suffix}`
let appUrl: string

beforeAll(async () => {
  adminUrl = inject('postgresUrl')
  admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-secret' NOSUPERUSER NOCREATEROLE NOCREATEDB`)
  await admin.query(`CREATE DATABASE ${database} OWNER ${role}`)
  const url = new URL(withDatabase(adminUrl, database))
  url.username = role
  url.password = 'app-secret'
  appUrl = url.toString()
})
afterAll(async () => {
  await dropTestDatabase(adminUrl, database)
  await admin.query(`DROP ROLE IF EXISTS ${role}`)
  await admin.end()
})

describe('a DATABASE_URL role that owns its database and nothing more', () => {
  it('applies every migration once cas_reader exists', async () => {
    expect((await migrate(appUrl)).length).toBeGreaterThan(30)
    expect(await migrate(appUrl)).toEqual([])
  })

  it('is told what to grant when a migration needs a right it lacks', async () => {
    // Regression (trial4): the bare "permission denied to create role" of migration 0005 named no remedy.
    const dir = mkdtempSync(path.join(tmpdir(), 'cas-migrations-'))
    try {
      writeFileSync(
        path.join(dir, '0001_needs-createrole.sql'),
        `-- Up Migration\nCREATE ROLE cas_test_never_${suffix} NOLOGIN;\n-- Down Migration\n`,
      )
      const other = `cas_test_${randomBytes(6).toString('hex')}`
      await admin.query(`CREATE DATABASE ${other} OWNER ${role}`)
      const url = new URL(appUrl)
      url.pathname = `/${other}`
      try {
        await expect(migrate(url.toString(), { dir })).rejects.toThrow(
          /permission denied to create role.*CREATEROLE.*CREATE ROLE cas_reader NOLOGIN.*operations\.md/,
        )
      } finally {
        await dropTestDatabase(adminUrl, other)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is told to set QUERY_DATABASE_URL when it may not create the reader login', async () => {
    // Regression (trial4): the query service stopped with "permission denied to create role" alone.
    await expect(ensureReaderLogin(appUrl)).rejects.toThrow(/CREATEROLE.*QUERY_DATABASE_URL.*cas_reader/)
  })
})
