import { withOrgScope } from '@cas/db'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'
import { PROTECTED_TABLES } from '../../projector/src/projections/registry.ts'

let db: TestDatabase
let app: FastifyInstance
const orgs: { orgId: string; cookie: string; chatbotId: string; conversationId: string }[] = []

/** The read models the query role reads under row-level security (the projector's registry), and the gateway's tables it reads. */
const READ_MODELS = [...PROTECTED_TABLES, 'chatbots', 'event_streams', 'audit_log']
/**
 * Tables this file leaves empty: topics, their re-clustering, languages, re-analyses and signals only exist once analysis ran,
 * which it does not need; nothing is erased.
 */
const EMPTY_HERE = [
  'rm_hourly_topics',
  'rm_daily_topics',
  'rm_hourly_languages',
  'rm_conversation_signals',
  'rm_signals_decided',
  'rm_topics',
  'rm_themes',
  'rm_topic_reclustering',
  'rm_topic_commands',
  'rm_reanalysis',
  'rm_erased_conversations',
]

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  for (const name of ['a', 'b']) {
    const { cookie, organization } = await signUp(app)
    const { chatbot, apiKey } = await createChatbot(app, cookie, { name: `bot ${name}` })
    const res = await postCapture(app, apiKey, {
      conversationId: `conversation ${name}`,
      messages: [{ id: '1', role: 'user', content: `hello from ${name}`, sentAt: '2026-11-20T10:00:00Z' }],
      user: { id: `user ${name}` },
    })
    // A topic command: rm_topic_command_log has a row of each organization (pending: no analysis here).
    const created = await app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbot.id}/topics`,
      headers: { cookie },
      payload: { label: `topic ${name}`, examples: ['one example', 'another example'] },
    })
    expect(created.statusCode, created.body).toBe(200)
    orgs.push({
      orgId: organization.id,
      cookie,
      chatbotId: chatbot.id,
      conversationId: res.json().conversationId,
    })
  }
  await projectAll(db.pool)
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

describe('row-level security of the read models', () => {
  it('runs the query service as a role that is neither owner, superuser nor BYPASSRLS', async () => {
    const { rows } = await db.readerPool.query(
      `SELECT r.rolsuper, r.rolbypassrls,
              (SELECT count(*)::int FROM pg_tables WHERE tableowner = current_user) AS owned
         FROM pg_roles r WHERE r.rolname = current_user`,
    )
    expect(rows).toEqual([{ rolsuper: false, rolbypassrls: false, owned: 0 }])
  })

  it('shows nothing without an organization setting, even without a WHERE clause', async () => {
    for (const table of READ_MODELS) {
      const { rows } = await db.readerPool.query(`SELECT count(*)::int AS n FROM ${table}`)
      expect(rows[0].n, table).toBe(0)
      if (EMPTY_HERE.includes(table)) continue
      const owner = await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)
      expect(owner.rows[0].n, `${table} has rows`).toBeGreaterThan(0)
    }
  })

  it('shows nothing for a wrong organization, and exactly its own rows for the right one', async () => {
    await withOrgScope(db.readerPool, '00000000-0000-4000-8000-000000000000', async (client) => {
      for (const table of READ_MODELS) {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${table}`)
        expect(rows[0].n, table).toBe(0)
      }
    })
    const [a, b] = orgs as [(typeof orgs)[0], (typeof orgs)[0]]
    await withOrgScope(db.readerPool, a.orgId, async (client) => {
      const { rows } = await client.query(
        'SELECT DISTINCT org_id FROM rm_conversations UNION SELECT DISTINCT org_id FROM rm_messages',
      )
      expect(rows.map((r) => r.org_id)).toEqual([a.orgId])
      for (const table of READ_MODELS) {
        const { rows: seen } = await client.query(`SELECT DISTINCT org_id FROM ${table}`)
        expect(
          seen.filter((r) => r.org_id !== a.orgId),
          table,
        ).toEqual([])
      }
      const { rows: byId } = await client.query('SELECT id FROM rm_conversations WHERE id = $1', [
        b.conversationId,
      ])
      expect(byId).toEqual([])
    })
  })

  it('refuses writes through the reader role', async () => {
    await expect(
      withOrgScope(db.readerPool, orgs[0]!.orgId, (client) => client.query('DELETE FROM rm_conversations')),
    ).rejects.toThrow()
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM rm_conversations')
    expect(rows[0].n).toBe(2)
  })

  it('leaks nothing across pooled connections alternating organizations', async () => {
    const reads = Array.from({ length: 60 }, (_, i) => orgs[i % 2]!).map((org) =>
      withOrgScope(db.readerPool, org.orgId, async (client) => {
        const { rows } = await client.query('SELECT org_id, id FROM rm_conversations')
        return { org, rows }
      }),
    )
    for (const { org, rows } of await Promise.all(reads)) {
      expect(rows).toEqual([{ org_id: org.orgId, id: org.conversationId }])
    }
    // And after the transactions, the pooled connections carry no organization at all.
    const { rows } = await db.readerPool.query('SELECT count(*)::int AS n FROM rm_conversations')
    expect(rows[0].n).toBe(0)
  })
})

describe("another organization's ids on every read route", () => {
  it('are 404 on reads by id and absent from lists', async () => {
    const [a, b] = orgs as [(typeof orgs)[0], (typeof orgs)[0]]
    const get = (url: string) => app.inject({ method: 'GET', url, headers: { cookie: a.cookie } })
    expect((await get(`/api/v1/chatbots/${b.chatbotId}`)).statusCode).toBe(404)
    expect((await get(`/api/v1/conversations/${b.conversationId}`)).statusCode).toBe(404)
    expect((await get(`/api/v1/chatbots/${b.chatbotId}/topics/commands`)).statusCode).toBe(404)
    const commands = (await get(`/api/v1/chatbots/${a.chatbotId}/topics/commands`)).json().commands
    expect(commands.map((c: { label: string }) => c.label)).toEqual(['topic a'])
    expect((await get('/api/v1/chatbots')).json().map((c: { id: string }) => c.id)).toEqual([a.chatbotId])
    expect((await get(`/api/v1/conversations?chatbotId=${b.chatbotId}`)).statusCode).toBe(404)
    const list = (await get('/api/v1/conversations')).json()
    expect(list.conversations.map((c: { id: string }) => c.id)).toEqual([a.conversationId])
    expect((await get(`/api/v1/conversations/${a.conversationId}`)).statusCode).toBe(200)
  })
})
