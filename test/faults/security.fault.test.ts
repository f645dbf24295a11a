/**
 * Fault 8: security checks against a running all-in-one process and its database.
 * - The query service's role (cas_query) cannot get around row-level security: not by switching roles,
 *   turning row security off, changing or shadowing the policy's function, dropping policies, writing,
 *   reading the write side, or carrying an organization over from one transaction to the next.
 * - Stored password hashes are argon2id with the parameters docs/api.md states (m=19456 KiB, t=2, p=1).
 * - The session cookie is HttpOnly, SameSite=Lax, Path=/, host-only, and Secure over HTTPS (behind a
 *   trusted proxy, TRUST_PROXY=true).
 * - A session cookie replayed after logout is 401; a cross-origin POST (PATCH, DELETE) is 403.
 */
import { verify } from '@node-rs/argon2'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROTECTED_TABLES, READ_MODEL_TABLES } from '../../services/projector/src/projections/registry.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { waitFor } from '../support/wait.ts'
import {
  call,
  createChatbotOverHttp,
  type HttpAccount,
  type HttpChatbot,
  PASSWORD,
  SESSION_COOKIE,
  sessionCookieOf,
  signUpOverHttp,
} from './support/http.ts'
import { killAllServices, type ServiceProcess, startService } from './support/processes.ts'

/** The read models under row-level security (the projector's registry), and the gateway's tables the query role reads. */
const READ_MODELS = [...PROTECTED_TABLES, 'chatbots', 'event_streams']
const WRITE_SIDE = [
  'chatbot_data_keys',
  'users',
  'sessions',
  'organizations',
  'chatbot_api_keys',
  'app_secrets',
  'event_journal',
  'capture_conversations',
  'capture_message_ids',
  'consumer_checkpoints',
  // The projector's own read-model tables (rm_deleted_chatbots): not under row-level security, not granted.
  ...READ_MODEL_TABLES.filter((t) => !PROTECTED_TABLES.includes(t)),
]

let db: TestDatabase
let aio: ServiceProcess
const orgs: { account: HttpAccount; chatbot: HttpChatbot }[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  aio = await startService('all-in-one', {
    env: { DATABASE_URL: db.url, TRUST_PROXY: 'true', UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' },
  })
  for (const name of ['A', 'B']) {
    const account = await signUpOverHttp(aio.url, `Org ${name}`)
    const chatbot = await createChatbotOverHttp(aio.url, account.cookie, `bot ${name}`)
    const captured = await call(aio.url, 'POST', '/api/v1/capture', {
      headers: { authorization: `Bearer ${chatbot.apiKey}` },
      body: {
        conversationId: `c-${name}`,
        user: { id: `u-${name}` },
        messages: [{ id: '1', role: 'user', content: `secret of ${name}`, sentAt: '2026-11-20T10:00:00Z' }],
      },
    })
    expect(captured.status).toBe(200)
    orgs.push({ account, chatbot })
  }
  await waitFor(
    async () => (await db.pool.query('SELECT count(*)::int AS n FROM rm_messages')).rows[0].n === 2,
    { what: 'both organizations projected' },
  )
})
afterAll(async () => {
  await killAllServices()
  await db?.drop()
})

/** Runs `fn` on one connection of the query role, in a transaction that is rolled back afterwards. */
async function asQueryRole<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.readerPool.connect()
  try {
    await client.query('BEGIN')
    return await fn(client)
  } finally {
    await client.query('ROLLBACK').catch(() => {})
    client.release(true)
  }
}

/** The SQLSTATE a statement of the query role fails with (in a savepoint, so the transaction goes on). */
async function refusal(client: pg.PoolClient, sql: string, params: unknown[] = []): Promise<string> {
  await client.query('SAVEPOINT attempt')
  try {
    await client.query(sql, params)
    return 'succeeded'
  } catch (err) {
    return (err as { code?: string }).code ?? 'unknown'
  } finally {
    await client.query('ROLLBACK TO SAVEPOINT attempt')
  }
}

async function visibleRows(client: pg.PoolClient): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of READ_MODELS) {
    counts[table] = (await client.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n
  }
  return counts
}

const NOTHING = Object.fromEntries(READ_MODELS.map((t) => [t, 0]))
const INSUFFICIENT_PRIVILEGE = '42501'

describe('fault 8: security', () => {
  describe('the query role and row-level security', () => {
    it('is a plain login: no superuser, no BYPASSRLS, no role or database creation, owns nothing, only in cas_reader', async () => {
      const { rows } = await db.readerPool.query(`
        SELECT r.rolsuper, r.rolbypassrls, r.rolcreaterole, r.rolcreatedb, r.rolreplication,
               (SELECT count(*)::int FROM pg_class WHERE relowner = r.oid) AS owned,
               ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
                      WHERE m.member = r.oid ORDER BY 1)::text[] AS member_of
          FROM pg_roles r WHERE r.rolname = current_user`)
      expect(rows).toEqual([
        {
          rolsuper: false,
          rolbypassrls: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolreplication: false,
          owned: 0,
          member_of: ['cas_reader'],
        },
      ])
    })

    it('sees no row without an organization, and only its own with one', async () => {
      await asQueryRole(async (client) => {
        expect(await visibleRows(client)).toEqual(NOTHING)
        const [a] = orgs
        await client.query("SELECT set_config('cas.org_id', $1, true)", [a!.account.organization.id])
        const { rows } = await client.query(
          `SELECT DISTINCT org_id FROM rm_messages UNION SELECT DISTINCT org_id FROM chatbots
           UNION SELECT DISTINCT org_id FROM event_streams`,
        )
        expect(rows).toEqual([{ org_id: a!.account.organization.id }])
      })
      // The owner sees both organizations' rows: there is something to hide.
      const { rows } = await db.pool.query('SELECT count(DISTINCT org_id)::int AS n FROM rm_messages')
      expect(rows[0].n).toBe(2)
    })

    it('cannot switch to a role that bypasses it, or turn it off', async () => {
      const { rows } = await db.pool.query<{ owner: string }>(
        "SELECT tableowner AS owner FROM pg_tables WHERE tablename = 'rm_messages'",
      )
      const owner = rows[0]!.owner
      await asQueryRole(async (client) => {
        const role = client.escapeIdentifier(owner)
        expect(await refusal(client, `SET ROLE ${role}`)).toBe(INSUFFICIENT_PRIVILEGE)
        expect(await refusal(client, `SET SESSION AUTHORIZATION ${role}`)).toBe(INSUFFICIENT_PRIVILEGE)
        expect(await refusal(client, 'SET ROLE pg_read_all_data')).toBe(INSUFFICIENT_PRIVILEGE)
        // Row security off does not switch the policies off: the query is refused instead.
        await client.query('SET LOCAL row_security = off')
        expect(await refusal(client, 'SELECT * FROM rm_messages')).toBe(INSUFFICIENT_PRIVILEGE)
        await client.query('SET LOCAL row_security = on')
        // The role it may switch to confines it just the same.
        await client.query('SET LOCAL ROLE cas_reader')
        expect(await visibleRows(client)).toEqual(NOTHING)
      })
    })

    it('cannot change the policies, their function, or shadow the function', async () => {
      const [a] = orgs
      await asQueryRole(async (client) => {
        for (const sql of [
          'ALTER TABLE rm_messages DISABLE ROW LEVEL SECURITY',
          'ALTER TABLE rm_messages NO FORCE ROW LEVEL SECURITY',
          'DROP POLICY org_only ON rm_messages',
          'CREATE POLICY everything ON rm_messages FOR SELECT TO cas_reader USING (true)',
          'CREATE OR REPLACE FUNCTION cas_current_org() RETURNS uuid LANGUAGE sql AS $$ SELECT NULL::uuid $$',
          'GRANT SELECT ON users TO cas_reader',
          'CREATE TABLE public.leak (x int)',
        ]) {
          expect(await refusal(client, sql), sql).toBe(INSUFFICIENT_PRIVILEGE)
        }
        // A same-named function of its own earlier on the search path: the policies keep the real one.
        await client.query(
          `CREATE FUNCTION pg_temp.cas_current_org() RETURNS uuid LANGUAGE sql AS $$ SELECT '${a!.account.organization.id}'::uuid $$`,
        )
        await client.query('SET LOCAL search_path = pg_temp, public')
        expect(await visibleRows(client)).toEqual(NOTHING)
      })
    })

    it('cannot write to the read models or read the write side', async () => {
      const [a] = orgs
      await asQueryRole(async (client) => {
        await client.query("SELECT set_config('cas.org_id', $1, true)", [a!.account.organization.id])
        for (const sql of [
          'DELETE FROM rm_messages',
          "UPDATE rm_conversations SET external_id = 'x'",
          `INSERT INTO rm_deleted_chatbots (chatbot_id, org_id, deleted_at) VALUES (gen_random_uuid(), gen_random_uuid(), now())`,
          'TRUNCATE rm_hourly_stats',
          'UPDATE pipeline_status SET events = 0',
        ]) {
          expect(await refusal(client, sql), sql).toBe(INSUFFICIENT_PRIVILEGE)
        }
        for (const table of WRITE_SIDE) {
          expect(await refusal(client, `SELECT * FROM ${table} LIMIT 1`), table).toBe(INSUFFICIENT_PRIVILEGE)
        }
      })
    })

    it('names one organization per transaction at most: no wildcard, nothing carried over to the next', async () => {
      const [a] = orgs
      const client = await db.readerPool.connect()
      try {
        // Anything but a single organization id is an error, never "every organization".
        for (const value of ['*', '%', `${a!.account.organization.id},${orgs[1]!.account.organization.id}`]) {
          await client.query('BEGIN')
          await client.query("SELECT set_config('cas.org_id', $1, true)", [value])
          await expect(client.query('SELECT count(*) FROM rm_messages'), value).rejects.toThrow()
          await client.query('ROLLBACK')
        }
        // The organization set for one transaction (as withOrgScope does) ends with it.
        await client.query('BEGIN READ ONLY')
        await client.query("SELECT set_config('cas.org_id', $1, true)", [a!.account.organization.id])
        expect((await client.query('SELECT count(*)::int AS n FROM rm_messages')).rows[0].n).toBe(1)
        await client.query('COMMIT')
        expect((await client.query('SELECT count(*)::int AS n FROM rm_messages')).rows[0].n).toBe(0)
      } finally {
        client.release(true)
      }
    })
  })

  describe('passwords and sessions', () => {
    it('stores passwords as argon2id with m=19456 KiB, t=2, p=1, a 16-byte salt and a 32-byte hash', async () => {
      const [a] = orgs
      const { rows } = await db.pool.query<{ password_hash: string }>(
        'SELECT password_hash FROM users WHERE email = $1',
        [a!.account.email],
      )
      const stored = rows[0]!.password_hash
      const match = stored.match(
        /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/,
      )
      expect(match, stored.slice(0, 40)).not.toBeNull()
      const [, m, t, p, salt, hash] = match!
      expect({ m: Number(m), t: Number(t), p: Number(p) }).toEqual({ m: 19_456, t: 2, p: 1 })
      expect(Buffer.from(salt!, 'base64').length).toBeGreaterThanOrEqual(16)
      expect(Buffer.from(hash!, 'base64').length).toBe(32)
      expect(await verify(stored, PASSWORD)).toBe(true)
      expect(await verify(stored, `${PASSWORD}!`)).toBe(false)
      // Two users with the same password get different hashes (per-user salt).
      const { rows: all } = await db.pool.query('SELECT DISTINCT password_hash FROM users')
      expect(all).toHaveLength(orgs.length)
    })

    it('sets the session cookie HttpOnly, SameSite=Lax, Path=/, host-only; Secure over HTTPS', async () => {
      const login = (headers: Record<string, string> = {}) =>
        fetch(`${aio.url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ email: orgs[0]!.account.email, password: PASSWORD }),
        })
      const attributes = (res: Response) => {
        const header = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))
        expect(header, 'a session cookie').toBeDefined()
        return header!
          .split(';')
          .slice(1)
          .map((a) => a.trim().split('=')[0]!.toLowerCase())
      }
      for (const cookie of [orgs[0]!.account.setCookie, orgs[1]!.account.setCookie]) {
        expect(sessionCookieOf(cookie)).not.toBeNull()
      }
      const overHttp = await login()
      expect(overHttp.status).toBe(200)
      const plain = attributes(overHttp)
      expect(plain).toEqual(expect.arrayContaining(['httponly', 'path', 'samesite']))
      expect(plain).not.toContain('secure')
      expect(plain).not.toContain('domain')
      const header = overHttp.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!
      expect(header).toMatch(/; Path=\/(;|$)/)
      expect(header).toMatch(/; SameSite=Lax(;|$)/)

      // Behind a TLS-terminating proxy (TRUST_PROXY=true): Secure.
      const overHttps = await login({ 'x-forwarded-proto': 'https' })
      expect(overHttps.status).toBe(200)
      expect(attributes(overHttps)).toEqual(
        expect.arrayContaining(['httponly', 'path', 'samesite', 'secure']),
      )
      // Sign-up's cookie has the same flags.
      expect(orgs[0]!.account.setCookie.find((c) => c.startsWith(`${SESSION_COOKIE}=`))).toMatch(
        /HttpOnly.*SameSite=Lax|SameSite=Lax.*HttpOnly/,
      )
    })

    it('answers 401 to a session cookie replayed after logout', async () => {
      const account = await signUpOverHttp(aio.url)
      expect((await call(aio.url, 'GET', '/api/v1/auth/me', { cookie: account.cookie })).status).toBe(200)
      const out = await call(aio.url, 'POST', '/api/v1/auth/logout', { cookie: account.cookie })
      expect(out.status).toBe(200)
      // The response clears the cookie, but a client that kept it (or a thief) gets nowhere with it.
      for (const [method, url, body] of [
        ['GET', '/api/v1/auth/me', undefined],
        ['GET', '/api/v1/chatbots', undefined],
        ['POST', '/api/v1/chatbots', { name: 'after logout' }],
        ['GET', '/api/v1/conversations', undefined],
      ] as const) {
        const res = await call(aio.url, method, url, { cookie: account.cookie, body })
        expect(res.status, `${method} ${url}`).toBe(401)
      }
      const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [
        account.user.id,
      ])
      expect(rows[0].n).toBe(0)
    })

    it('answers 403 to cross-origin mutating requests, and lets same-origin ones through', async () => {
      const [a] = orgs
      const bot = `/api/v1/chatbots/${a!.chatbot.id}`
      for (const origin of ['https://evil.example', 'null', 'http://127.0.0.1:1']) {
        const attempts = [
          await call(aio.url, 'POST', '/api/v1/chatbots', {
            cookie: a!.account.cookie,
            body: { name: 'forged' },
            headers: { origin },
          }),
          await call(aio.url, 'PATCH', bot, {
            cookie: a!.account.cookie,
            body: { name: 'forged' },
            headers: { origin },
          }),
          await call(aio.url, 'POST', `${bot}/rotate-key`, {
            cookie: a!.account.cookie,
            headers: { origin },
          }),
          await call(aio.url, 'DELETE', bot, { cookie: a!.account.cookie, headers: { origin } }),
          await call(aio.url, 'POST', '/api/v1/auth/logout', {
            cookie: a!.account.cookie,
            headers: { origin },
          }),
        ]
        expect(
          attempts.map((r) => r.status),
          origin,
        ).toEqual([403, 403, 403, 403, 403])
      }
      // Nothing happened: no chatbot created, renamed or deleted, the session still valid.
      const bots = await call(aio.url, 'GET', '/api/v1/chatbots', { cookie: a!.account.cookie })
      expect(bots.status).toBe(200)
      expect((bots.body as { name: string }[]).map((c) => c.name)).toEqual(['bot A'])
      const sameOrigin = await call(aio.url, 'PATCH', bot, {
        cookie: a!.account.cookie,
        body: { name: 'bot A' },
        headers: { origin: aio.url },
      })
      expect(sameOrigin.status).toBe(200)
    })
  })
})
