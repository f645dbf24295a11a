/**
 * PostgreSQL 14's schema public lets PUBLIC create objects (15 no longer does), so the read-only cas_query
 * login could create tables and functions where the services read. Each database here is set up as 14 has
 * it (GRANT CREATE ON SCHEMA public TO PUBLIC) before the migrations run. Where the migrating role cannot
 * close it, every process says so at start: checked once through a service's own start and log.
 */
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { dropTestDatabase } from '../../../test/support/database.ts'
import { spawnWorker } from '../../../test/support/worker-process.ts'
import { freePort, withDatabase } from './index.ts'
import { migrate } from './migrate.ts'
import { publicSchemaOpenToAll } from './public-schema.ts'

const PROJECTOR = fileURLToPath(new URL('../../../services/projector/src/main.ts', import.meta.url))

let adminUrl: string
let admin: pg.Client
let adminName: string
const suffix = randomBytes(6).toString('hex')
const role = `cas_test_app_${suffix}`
const databases: string[] = []

beforeAll(async () => {
  adminUrl = inject('postgresUrl')
  admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  adminName = (await admin.query<{ name: string }>('SELECT current_user AS name')).rows[0]!.name
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-secret' NOSUPERUSER NOCREATEROLE NOCREATEDB`)
})
afterAll(async () => {
  for (const name of databases) await dropTestDatabase(adminUrl, name)
  await admin.query(`DROP ROLE IF EXISTS ${role}`)
  await admin.end()
})

/**
 * A new database, owned by `owner`, whose schema public is as PostgreSQL 14 makes it: the superuser's
 * (unless `schemaOwner` says), PUBLIC may create.
 */
async function databaseAs14Has(owner: string, schemaOwner = adminName): Promise<string> {
  const name = `cas_test_${randomBytes(6).toString('hex')}`
  await admin.query(`CREATE DATABASE ${name} OWNER ${owner} TEMPLATE template0`)
  databases.push(name)
  const client = new pg.Client({ connectionString: withDatabase(adminUrl, name) })
  await client.connect()
  try {
    await client.query(`ALTER SCHEMA public OWNER TO ${schemaOwner}`)
    await client.query('GRANT CREATE ON SCHEMA public TO PUBLIC')
  } finally {
    await client.end()
  }
  return name
}

async function publicMayCreate(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: withDatabase(adminUrl, name) })
  await client.connect()
  try {
    const { rows } = await client.query<{ open: boolean }>(
      "SELECT has_schema_privilege('public', 'public', 'CREATE') AS open",
    )
    return rows[0]!.open
  } finally {
    await client.end()
  }
}

describe("schema public open to every role (PostgreSQL 14's default)", () => {
  it('is closed by the migrations when the migrating role owns the schema (here a superuser)', async () => {
    const name = await databaseAs14Has(adminName)
    expect(await publicMayCreate(name)).toBe(true)

    await migrate(withDatabase(adminUrl, name))

    expect(await publicMayCreate(name)).toBe(false)
    expect(await publicSchemaOpenToAll(withDatabase(adminUrl, name))).toBeUndefined()
  })

  it('is closed by the migrations when the migrating role, no superuser, owns the schema', async () => {
    const name = await databaseAs14Has(role, role)
    const url = new URL(withDatabase(adminUrl, name))
    url.username = role
    url.password = 'app-secret'

    await migrate(url.toString())

    expect(await publicMayCreate(name)).toBe(false)
    expect(await publicSchemaOpenToAll(url.toString())).toBeUndefined()
  })

  it("is left open, without failing, by a role that does not own the schema, and named with the statement for the schema's owner", async () => {
    // Given: a managed 14's application role, owning its database but not its schema public
    const name = await databaseAs14Has(role)
    const url = new URL(withDatabase(adminUrl, name))
    url.username = role
    url.password = 'app-secret'

    // When: it applies the migrations; then they all apply, and PUBLIC may still create there
    expect((await migrate(url.toString())).length).toBeGreaterThan(30)
    expect(await publicMayCreate(name)).toBe(true)

    // And: the check the service warns from at start names the owner and the exact statement
    expect(await publicSchemaOpenToAll(url.toString())).toEqual({
      owner: adminName,
      statement: 'REVOKE CREATE ON SCHEMA public FROM PUBLIC;',
    })
  })

  it("is named at a service's start, in a warning that gives the schema's owner and the statement", async () => {
    // Given: a managed 14's application role, owning its database but not its schema public
    const name = await databaseAs14Has(role)
    const url = new URL(withDatabase(adminUrl, name))
    url.username = role
    url.password = 'app-secret'

    // When: a service (the projector) starts on it
    const service = spawnWorker(
      {
        DATABASE_URL: url.toString(),
        KAFKA_BROKERS: '',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      PROJECTOR,
    )
    try {
      // Then: its start's log warns, naming the owner and the exact statement
      const line = await service.waitForLine((l) => l.includes('schema public'), 120_000)
      expect(JSON.parse(line)).toMatchObject({
        level: 40,
        owner: adminName,
        statement: 'REVOKE CREATE ON SCHEMA public FROM PUBLIC;',
        msg: `every role may create objects in schema public (PostgreSQL 14's default), the read-only query login too: its owner, ${adminName}, should run REVOKE CREATE ON SCHEMA public FROM PUBLIC;`,
      })
    } finally {
      await service.kill('SIGTERM')
    }
  }, 180_000)
})
