import { randomBytes, randomUUID } from 'node:crypto'
import { sessionKey } from '@cas/auth'
import { migrate } from '@cas/db'
import { sign } from '@fastify/cookie'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../services/gateway/src/auth/passwords.ts'
import { me, SESSION_COOKIE, TEST_PASSWORD } from './support/auth.ts'
import { createTestDatabaseBefore, type TestDatabase } from './support/database.ts'
import { buildTestGateway } from './support/gateway.ts'

const NOW = new Date('2030-03-01T12:00:00Z')
const ann = { id: randomUUID(), email: 'ann@example.com', name: 'Ann' }
const bob = { id: randomUUID(), email: 'bob@example.com', name: 'Bob' }
const acme = { id: randomUUID(), name: 'Acme' }
const globex = { id: randomUUID(), name: 'Globex' }
const chatbotId = randomUUID()
const annSessionId = randomBytes(24).toString('base64url')
const SESSION_SECRET = randomBytes(32).toString('hex')

let db: TestDatabase
let app: FastifyInstance

/**
 * Migration 0015 (memberships) on a database as the single-owner version left it: each organization with
 * its one owner, their sessions and chatbots. Regression guard for the carry-over: nobody loses access.
 */
beforeAll(async () => {
  db = await createTestDatabaseBefore('0015')
  const { pool } = db
  const passwordHash = await hashPassword(TEST_PASSWORD)
  for (const [org, owner] of [
    [acme, ann],
    [globex, bob],
  ] as const) {
    await pool.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [
      org.id,
      org.name,
      NOW,
    ])
    await pool.query(
      `INSERT INTO users (id, org_id, email, name, role, password_hash, created_at)
       VALUES ($1, $2, $3, $4, 'owner', $5, $6)`,
      [owner.id, org.id, owner.email, owner.name, passwordHash, NOW],
    )
  }
  await pool.query(
    `INSERT INTO sessions (sid, user_id, org_id, data, created_at, last_seen_at, expires_at)
     VALUES ($1, $2, $3, '{}', $4, $4, $5)`,
    [sessionKey(annSessionId), ann.id, acme.id, new Date(), new Date(Date.now() + 3_600_000)],
  )
  await pool.query(
    `INSERT INTO chatbots (id, org_id, name, settings, api_key_prefix, created_at, updated_at, stream_version)
     VALUES ($1, $2, 'Support bot', '{}', 'svc_live_0000…', $3, $3, 1)`,
    [chatbotId, acme.id, NOW],
  )

  await migrate(db.url)
  ;({ app } = await buildTestGateway(db, { SESSION_SECRET }))
}, 60_000)

afterAll(async () => {
  await app?.close()
  await db?.drop()
})

describe('migration 0015: organizations with members', () => {
  it('makes each single owner the owner member of their organization, and nobody else a member', async () => {
    const { rows } = await db.pool.query(
      'SELECT org_id, user_id, role, joined_at FROM memberships ORDER BY role, user_id',
    )
    expect(rows).toEqual(
      expect.arrayContaining([
        { org_id: acme.id, user_id: ann.id, role: 'owner', joined_at: NOW },
        { org_id: globex.id, user_id: bob.id, role: 'owner', joined_at: NOW },
      ]),
    )
    expect(rows).toHaveLength(2)
    const { rows: columns } = await db.pool.query(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'users' ORDER BY column_name",
    )
    expect(columns.map((c) => c.column_name)).toEqual(['created_at', 'email', 'id', 'name', 'password_hash'])
  })

  it('keeps a session opened before the migration working, as the owner of the same organization', async () => {
    // Given the cookie of the session Ann had before the migration
    const cookie = `${SESSION_COOKIE}=${encodeURIComponent(sign(annSessionId, SESSION_SECRET))}`

    // When she carries on
    const response = await me(app, cookie)

    // Then she is still signed in to Acme as its owner, and still reaches its chatbot (and only its)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      user: ann,
      organization: { id: acme.id, name: 'Acme', role: 'owner' },
      organizations: [{ id: acme.id, name: 'Acme', role: 'owner' }],
    })
    const chatbots = await app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { cookie } })
    expect(chatbots.json().map((c: { id: string }) => c.id)).toEqual([chatbotId])
  })

  it('signs an owner in to their organization, where they can manage members from the first event on', async () => {
    // Given Bob signs in after the migration
    const login = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: bob.email, password: TEST_PASSWORD },
    })
    expect(login.statusCode).toBe(200)
    expect(login.json().organization).toMatchObject({ id: globex.id, role: 'owner' })
    const cookie = `${SESSION_COOKIE}=${encodeURIComponent(login.cookies.find((c) => c.name === SESSION_COOKIE)!.value)}`

    // When he invites someone: Globex has no organization events yet
    const invited = await app.inject({
      method: 'POST',
      url: '/api/v1/invitations',
      headers: { cookie },
      payload: { email: 'carol@example.com', role: 'member' },
    })

    // Then the invitation opens Globex's stream at version 1, and the members list shows Bob as owner
    expect(invited.statusCode).toBe(200)
    const { rows } = await db.pool.query(
      "SELECT type, stream_version FROM event_journal WHERE stream_type = 'organization' AND stream_id = $1",
      [globex.id],
    )
    expect(rows).toEqual([{ type: 'organization.member-invited', stream_version: 1 }])
    const members = await app.inject({ method: 'GET', url: '/api/v1/members', headers: { cookie } })
    expect(members.json().members).toEqual([
      { userId: bob.id, email: bob.email, name: bob.name, role: 'owner', joinedAt: NOW.toISOString() },
    ])
  })
})
