/**
 * Migrations' downs on a real Postgres. Until now no test had run a `-- Down Migration` (0052's among them):
 * here every one is undone, newest first, each checked to leave the schema (columns, constraints, indexes,
 * functions, triggers, views) as it was before its up, then all applied again; and 0052's (sign-in
 * failures per client address) with rows in its table.
 */
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { UNDETERMINED_LANGUAGE } from '@cas/events'
import pg from 'pg'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { dropTestDatabase } from '../../../test/support/database.ts'
import { withDatabase } from './index.ts'
import { migrate, migrationsDir } from './migrate.ts'

const MIGRATIONS = readdirSync(migrationsDir())
  .filter((f) => /^\d{4}_.*\.sql$/.test(f))
  .sort()

let adminUrl: string
const names: string[] = []
const clients: pg.Client[] = []

beforeAll(() => {
  adminUrl = inject('postgresUrl')
})
afterAll(async () => {
  for (const c of clients) await c.end()
  for (const name of names) await dropTestDatabase(adminUrl, name)
})

/** A new empty database, its URL and a client connected to it. */
async function emptyDatabase() {
  const name = `cas_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  names.push(name)
  const url = withDatabase(adminUrl, name)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  clients.push(client)
  return { url, client }
}

/** The schema as the catalog has it (node-pg-migrate's own table left out): one line per object. */
async function schemaOf(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ line: string }>(
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
            coalesce(column_default, '') AS line
       FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'pgmigrations'
     UNION ALL
     SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
       FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'pgmigrations'
     UNION ALL
     SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'pgmigrations'
     UNION ALL
     SELECT 'function ' || p.oid::regprocedure || ' ' || md5(pg_get_functiondef(p.oid))
       FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
     UNION ALL
     SELECT 'trigger ' || tgrelid::regclass || ' ' || pg_get_triggerdef(oid)
       FROM pg_trigger WHERE NOT tgisinternal
     UNION ALL
     SELECT 'view ' || viewname || ' ' || md5(definition) FROM pg_views WHERE schemaname = 'public'
     ORDER BY 1`,
  )
  return rows.map((r) => r.line)
}

it('undoes every migration with its down, newest first, each leaving the schema as before its up; then applies them all again', async () => {
  const { url, client } = await emptyDatabase()
  // The schema before each migration, applied one at a time.
  const before: string[][] = []
  for (const _ of MIGRATIONS) {
    before.push(await schemaOf(client))
    expect(await migrate(url, { count: 1 })).toHaveLength(1)
  }
  const top = await schemaOf(client)
  expect(before[0]).toEqual([])
  for (let i = MIGRATIONS.length - 1; i >= 0; i--) {
    expect(await migrate(url, { direction: 'down', count: 1 }), MIGRATIONS[i]).toEqual([
      MIGRATIONS[i]!.replace(/\.sql$/, ''),
    ])
    expect(await schemaOf(client), `after the down of ${MIGRATIONS[i]}`).toEqual(before[i])
  }
  expect(await migrate(url)).toHaveLength(MIGRATIONS.length)
  expect(await schemaOf(client)).toEqual(top)
})

it("0052's down keeps the sign-in failures counted per email and drops those per address; up again counts them per email", async () => {
  const { url, client } = await emptyDatabase()
  const through0052 = MIGRATIONS.findIndex((f) => f.startsWith('0052_')) + 1
  expect(through0052).toBeGreaterThan(0)
  await migrate(url, { count: through0052 })
  const at = new Date('2030-01-01T00:00:00Z')
  await client.query(
    `INSERT INTO login_failures (email, client, failures, window_started_at)
     VALUES ('ann@example.com', '', 7, $1), ('ann@example.com', '203.0.113.9', 5, $1),
            ('bob@example.com', '198.51.100.1', 2, $1)`,
    [at],
  )
  const rows = async () =>
    (await client.query('SELECT * FROM login_failures ORDER BY email')).rows as Record<string, unknown>[]

  await migrate(url, { direction: 'down', count: 1 })
  expect(await rows()).toEqual([{ email: 'ann@example.com', failures: 7, window_started_at: at }])
  // One row per email again (0002's key).
  await expect(
    client.query("INSERT INTO login_failures VALUES ('ann@example.com', 1, now())"),
  ).rejects.toThrow(/duplicate key/)

  await migrate(url, { count: 1 })
  expect(await rows()).toEqual([{ email: 'ann@example.com', client: '', failures: 7, window_started_at: at }])
  await client.query(
    "INSERT INTO login_failures (email, client, failures, window_started_at) VALUES ('ann@example.com', '203.0.113.9', 1, $1)",
    [at],
  )
})

it('0061 counts the stored end-user messages per chatbot, hour and detected language, as the projector keeps them', async () => {
  const { url, client } = await emptyDatabase()
  const before0061 = MIGRATIONS.findIndex((f) => f.startsWith('0061_'))
  expect(before0061).toBeGreaterThan(0)
  await migrate(url, { count: before0061 })
  const [org, bot, other] = ['a', 'b', 'c'].map((c) => `00000000-0000-4000-8000-${c.repeat(12)}`)
  // Two hours of one chatbot and one of another: English, Spanish either side of 11:00, 'und', a message
  // without a language, an assistant's, a result whose capture has not come (no role, no time).
  await client.query(
    `INSERT INTO rm_messages (conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival, language)
     VALUES ($1, 'm1', $2, $3, 'user', 'x', '2026-11-20T10:00:00Z', 1, 'en'),
            ($1, 'm2', $2, $3, 'user', 'x', '2026-11-20T10:59:59.999Z', 2, 'es'),
            ($1, 'm3', $2, $3, 'user', 'x', '2026-11-20T11:00:00Z', 3, 'es'),
            ($1, 'm4', $2, $3, 'user', 'x', '2026-11-20T11:10:00Z', 4, '${UNDETERMINED_LANGUAGE}'),
            ($1, 'm5', $2, $3, 'user', 'x', '2026-11-20T11:20:00Z', 5, NULL),
            ($1, 'm6', $2, $3, 'assistant', 'x', '2026-11-20T11:30:00Z', 6, 'es'),
            ($1, 'm7', $2, $3, NULL, NULL, NULL, NULL, 'es'),
            ($4, 'm1', $2, $5, 'user', 'x', '2026-11-20T10:30:00Z', 7, 'es'),
            ($4, 'm2', $2, $5, 'user', 'x', '2026-11-20T10:40:00Z', 8, 'es')`,
    ['00000000-0000-4000-8000-000000000001', org, bot, '00000000-0000-4000-8000-000000000002', other],
  )
  await migrate(url, { count: 1 })
  const { rows } = await client.query<{ line: string }>(
    `SELECT chatbot_id || ' ' || to_char(hour AT TIME ZONE 'UTC', 'HH24') || ' ' || language || ' ' || messages AS line
       FROM rm_hourly_languages ORDER BY 1`,
  )
  expect(rows.map((r) => r.line)).toEqual([
    `${bot} 10 en 1`,
    `${bot} 10 es 1`,
    `${bot} 11 es 1`,
    `${other} 10 es 2`,
  ])
})
