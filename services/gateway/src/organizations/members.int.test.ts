import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import {
  me,
  randomClientAddress,
  sessionCookie,
  signUp,
  TEST_PASSWORD,
} from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { accept, invite, join, tokenOf } from '../../../../test/support/members.ts'

const { db, gateway } = useTestGateways({ env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' } })

const get = (app: FastifyInstance, url: string, cookie: string) =>
  app.inject({ method: 'GET', url, headers: { cookie } })
const setRole = (app: FastifyInstance, cookie: string, userId: string, role: string) =>
  app.inject({ method: 'PATCH', url: `/api/v1/members/${userId}`, headers: { cookie }, payload: { role } })
const remove = (app: FastifyInstance, cookie: string, userId: string) =>
  app.inject({ method: 'DELETE', url: `/api/v1/members/${userId}`, headers: { cookie } })
const leave = (app: FastifyInstance, cookie: string) =>
  app.inject({ method: 'POST', url: '/api/v1/organization/leave', headers: { cookie } })
const switchTo = (app: FastifyInstance, cookie: string, organizationId: string) =>
  app.inject({
    method: 'PUT',
    url: '/api/v1/auth/organization',
    headers: { cookie },
    payload: { organizationId },
  })
const createChatbot = (app: FastifyInstance, cookie: string, name = 'Bot') =>
  app.inject({ method: 'POST', url: '/api/v1/chatbots', headers: { cookie }, payload: { name } })

async function signIn(app: FastifyInstance, email: string): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    remoteAddress: randomClientAddress(),
    payload: { email, password: TEST_PASSWORD },
  })
  expect(response.statusCode).toBe(200)
  return sessionCookie(response)
}

describe('members', () => {
  it('lists the members with their roles, for everyone but viewers', async () => {
    const app = await gateway()
    const owner = await signUp(app, { name: 'Ann' })
    const admin = await join(app, owner.cookie, 'admin')
    const member = await join(app, owner.cookie, 'member')
    const viewer = await join(app, owner.cookie, 'viewer')

    const listed = await get(app, '/api/v1/members', member.cookie)
    expect(listed.statusCode).toBe(200)
    expect(listed.json().members.map((m: { userId: string; role: string }) => [m.userId, m.role])).toEqual([
      [owner.user.id, 'owner'],
      [admin.user.id, 'admin'],
      [member.user.id, 'member'],
      [viewer.user.id, 'viewer'],
    ])
    expect((await get(app, '/api/v1/members', viewer.cookie)).statusCode).toBe(403)
  })

  it('applies a lowered role at the very next request of every open session', async () => {
    // Given an admin signed in twice (two browsers), who can create chatbots
    const app = await gateway()
    const owner = await signUp(app)
    const admin = await join(app, owner.cookie, 'admin')
    const second = await signIn(app, admin.user.email)
    expect((await createChatbot(app, admin.cookie)).statusCode).toBe(200)

    // When the owner makes them a viewer
    const changed = await setRole(app, owner.cookie, admin.user.id, 'viewer')
    expect(changed.statusCode).toBe(200)
    expect(changed.json().member).toMatchObject({ userId: admin.user.id, role: 'viewer' })

    // Then both sessions are viewers from their next request: no chatbots, but conversations still
    for (const cookie of [admin.cookie, second]) {
      expect((await createChatbot(app, cookie)).statusCode).toBe(403)
      expect((await get(app, '/api/v1/chatbots', cookie)).statusCode).toBe(403)
      expect((await get(app, '/api/v1/conversations', cookie)).statusCode).toBe(200)
      expect((await me(app, cookie)).json().organization.role).toBe('viewer')
    }
  })

  it('shuts a removed member out at their very next request, in every open session', async () => {
    // Given a member with two sessions, whose only organization this is
    const app = await gateway()
    const owner = await signUp(app)
    const member = await join(app, owner.cookie, 'member')
    const second = await signIn(app, member.user.email)
    expect((await get(app, '/api/v1/chatbots', second)).statusCode).toBe(200)

    // When an admin removes them
    const admin = await join(app, owner.cookie, 'admin')
    expect((await remove(app, admin.cookie, member.user.id)).statusCode).toBe(200)

    // Then neither session reaches anything of the organization any more
    for (const cookie of [member.cookie, second]) {
      for (const url of [
        '/api/v1/chatbots',
        '/api/v1/conversations',
        '/api/v1/analytics/overview',
        '/api/v1/members',
      ]) {
        const response = await get(app, url, cookie)
        expect(response.statusCode, url).toBe(403)
      }
      // And they are still signed in, belonging to no organization
      const who = await me(app, cookie)
      expect(who.statusCode).toBe(200)
      expect(who.json()).toMatchObject({ organization: null, organizations: [] })
    }
    const members = await get(app, '/api/v1/members', owner.cookie)
    expect(members.json().members.map((m: { userId: string }) => m.userId)).not.toContain(member.user.id)
  })

  it('lets a person removed from their only organization sign in to none, and create one', async () => {
    // Given a viewer removed from the only organization they had
    const app = await gateway()
    const owner = await signUp(app)
    const viewer = await join(app, owner.cookie, 'viewer')
    await remove(app, owner.cookie, viewer.user.id)

    // When they sign in again
    const login = await app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: randomClientAddress(),
      payload: { email: viewer.user.email, password: TEST_PASSWORD },
    })

    // Then they are signed in, and told they belong to none
    expect(login.statusCode).toBe(200)
    expect(login.json()).toMatchObject({
      user: { id: viewer.user.id },
      organization: null,
      organizations: [],
    })
    const cookie = sessionCookie(login)

    // And they can create one, of which they are the owner, working in it at once
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: { cookie },
      payload: { name: 'Fresh start' },
    })
    expect(created.statusCode).toBe(200)
    expect(created.json()).toMatchObject({
      organization: { name: 'Fresh start', role: 'owner' },
      organizations: [{ name: 'Fresh start', role: 'owner' }],
    })
    expect((await createChatbot(app, cookie)).statusCode).toBe(200)
  })

  it('never leaves an organization without an owner, and lets only owners act on owners', async () => {
    const app = await gateway()
    const owner = await signUp(app)
    const admin = await join(app, owner.cookie, 'admin')

    // The last owner can neither leave nor be demoted
    const left = await leave(app, owner.cookie)
    expect(left.statusCode).toBe(409)
    expect(left.json().error.code).toBe('conflict')
    expect((await setRole(app, owner.cookie, owner.user.id, 'admin')).statusCode).toBe(409)

    // An admin may not demote or remove an owner, nor make anyone an owner
    expect((await setRole(app, admin.cookie, owner.user.id, 'member')).statusCode).toBe(403)
    expect((await remove(app, admin.cookie, owner.user.id)).statusCode).toBe(403)
    expect((await setRole(app, admin.cookie, admin.user.id, 'owner')).statusCode).toBe(403)

    // With a second owner, the first may leave; then the second is the last
    expect((await setRole(app, owner.cookie, admin.user.id, 'owner')).statusCode).toBe(200)
    const afterLeaving = await leave(app, owner.cookie)
    expect(afterLeaving.statusCode).toBe(200)
    expect(afterLeaving.json()).toMatchObject({ organization: null, organizations: [] })
    expect((await setRole(app, admin.cookie, admin.user.id, 'member')).statusCode).toBe(409)

    // Unknown, malformed and other organizations' people are 404
    const stranger = await signUp(app)
    for (const id of [stranger.user.id, 'nope', '00000000-0000-4000-8000-000000000000']) {
      expect((await setRole(app, admin.cookie, id, 'viewer')).statusCode).toBe(404)
      expect((await remove(app, admin.cookie, id)).statusCode).toBe(404)
    }
  })

  it('keeps an owner when two owners demote each other at the same time', async () => {
    // Regression guard for the organization's row lock: without it both demotions could pass.
    const app = await gateway()
    const ann = await signUp(app)
    const bob = await join(app, ann.cookie, 'owner')
    const [a, b] = await Promise.all([
      setRole(app, ann.cookie, bob.user.id, 'admin'),
      setRole(app, bob.cookie, ann.user.id, 'admin'),
    ])
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 403])
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND role = 'owner'",
      [ann.organization.id],
    )
    expect(rows).toEqual([{ n: 1 }])
  })
})

describe('several organizations', () => {
  it('re-scopes every read, row-level security included, when the session switches organization', async () => {
    // Given Bea, owner of her own organization and admin of Acme, each with a chatbot
    const app = await gateway()
    const acme = await signUp(app, { organizationName: 'Acme' })
    const acmeBot = (await createChatbot(app, acme.cookie, 'Acme bot')).json().chatbot
    const bea = await signUp(app, { organizationName: 'Bea & Co' })
    const beaBot = (await createChatbot(app, bea.cookie, 'Bea bot')).json().chatbot
    const token = tokenOf(await invite(app, acme.cookie, bea.user.email, 'admin'))
    const accepted = await accept(app, token, { cookie: bea.cookie })
    expect(accepted.json().organization.id).toBe(acme.organization.id)

    // When her session works in Acme, she reads Acme's chatbots only (read through row-level security)
    const names = async () =>
      (await get(app, '/api/v1/chatbots', bea.cookie)).json().map((c: { name: string }) => c.name)
    expect(await names()).toEqual(['Acme bot'])
    expect((await get(app, `/api/v1/chatbots/${beaBot.id}`, bea.cookie)).statusCode).toBe(404)

    // And when she switches back, her own
    const switched = await switchTo(app, bea.cookie, bea.organization.id)
    expect(switched.statusCode).toBe(200)
    expect(switched.json().organization).toMatchObject({ id: bea.organization.id, role: 'owner' })
    expect(await names()).toEqual(['Bea bot'])
    expect((await get(app, `/api/v1/chatbots/${acmeBot.id}`, bea.cookie)).statusCode).toBe(404)
    expect(
      (await get(app, '/api/v1/audit', bea.cookie))
        .json()
        .entries.every((e: { target: { name: string } }) => e.target.name !== 'Acme bot'),
    ).toBe(true)

    // And an organization she does not belong to cannot be switched to
    for (const organizationId of [crypto.randomUUID(), 'nope']) {
      const refused = await switchTo(app, bea.cookie, organizationId)
      expect(refused.statusCode).toBe(404)
    }
  })

  it('tells a person removed from the organization their session used that they can switch to another of theirs', async () => {
    // Given Bea, owner of her own organization, working in Acme as a member
    const app = await gateway()
    const acme = await signUp(app, { organizationName: 'Acme' })
    const bea = await signUp(app, { organizationName: 'Bea & Co' })
    await accept(app, tokenOf(await invite(app, acme.cookie, bea.user.email, 'member')), {
      cookie: bea.cookie,
    })
    expect((await me(app, bea.cookie)).json().organization.id).toBe(acme.organization.id)

    // When Acme's owner removes her
    expect((await remove(app, acme.cookie, bea.user.id)).statusCode).toBe(200)

    // Then her next request is refused with what happened and what to do (not "a member of none")
    const refused = await get(app, '/api/v1/conversations', bea.cookie)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error.message).toMatch(/^You are not working in an organization: you were removed/)
    expect(refused.json().error.message).toContain('Switch to another of yours')
    // And her session lists her own organization, to which she switches and reads again
    expect((await me(app, bea.cookie)).json()).toMatchObject({
      organization: null,
      organizations: [{ id: bea.organization.id, role: 'owner' }],
    })
    const switched = await switchTo(app, bea.cookie, bea.organization.id)
    expect(switched.statusCode).toBe(200)
    expect((await get(app, '/api/v1/conversations', bea.cookie)).statusCode).toBe(200)
  })

  it('deletes an organization for good: its chatbots and keys, members, invitations and log', async () => {
    // Given Acme with a chatbot, an admin who also has an organization of their own, and a pending invitation
    const app = await gateway()
    const owner = await signUp(app, { organizationName: 'Acme' })
    const bot = (await createChatbot(app, owner.cookie)).json()
    const admin = await join(app, owner.cookie, 'admin')
    await app.inject({
      method: 'POST',
      url: '/api/v1/organizations',
      headers: { cookie: admin.cookie },
      payload: { name: 'Side project' },
    })
    await switchTo(app, admin.cookie, owner.organization.id)
    await app.inject({
      method: 'POST',
      url: '/api/v1/invitations',
      headers: { cookie: owner.cookie },
      payload: { email: 'later@example.com', role: 'viewer' },
    })

    // When the admin tries to delete it, then the owner does
    const byAdmin = await app.inject({
      method: 'DELETE',
      url: '/api/v1/organization',
      headers: { cookie: admin.cookie },
    })
    const byOwner = await app.inject({
      method: 'DELETE',
      url: '/api/v1/organization',
      headers: { cookie: owner.cookie },
    })

    // Then only the owner may, who then belongs to none
    expect(byAdmin.statusCode).toBe(403)
    expect(byOwner.statusCode).toBe(200)
    expect(byOwner.json()).toMatchObject({ organization: null, organizations: [] })

    // And its chatbot is deleted as DELETE /chatbots/:id deletes (the key stops working) and nothing of it is left
    const capture = await app.inject({
      method: 'POST',
      url: '/api/v1/capture',
      headers: { authorization: `Bearer ${bot.apiKey}` },
      payload: { conversationId: 'c', messages: [{ id: 'm', role: 'user', content: 'hi' }] },
    })
    expect(capture.statusCode).toBe(401)
    const orgId = owner.organization.id
    for (const table of ['organizations', 'memberships', 'invitations', 'audit_log', 'chatbots']) {
      const column = table === 'organizations' ? 'id' : 'org_id'
      const { rows } = await db.pool.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [orgId])
      expect(rows, table).toEqual([])
    }
    const { rows: journal } = await db.pool.query(
      "SELECT type FROM event_journal WHERE stream_type = 'organization' AND stream_id = $1",
      [orgId],
    )
    expect(journal).toEqual([{ type: 'organization.deleted' }])
    const { rows: chatbotEvents } = await db.pool.query(
      'SELECT type FROM event_journal WHERE chatbot_id = $1',
      [bot.chatbot.id],
    )
    expect(chatbotEvents).toEqual([{ type: 'chatbot.deleted' }])

    // And the admin's session works on, moved to nothing: they pick their other organization
    const adminMe = (await me(app, admin.cookie)).json()
    expect(adminMe.organization).toBeNull()
    expect(adminMe.organizations).toEqual([expect.objectContaining({ name: 'Side project', role: 'owner' })])
  })
})
