import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { useTestGateways } from '../../../test/support/gateway.ts'
import { join } from '../../../test/support/members.ts'

const { gateway, db } = useTestGateways({ env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' } })

interface Entry {
  id: string
  occurredAt: string
  action: string
  actor: { id: string; email: string | null; name: string | null } | null
  target: { type: string; id: string; name: string | null }
  details: Record<string, unknown>
}

const audit = (app: FastifyInstance, cookie: string, query = '') =>
  app.inject({ method: 'GET', url: `/api/v1/audit${query}`, headers: { cookie } })

async function allEntries(app: FastifyInstance, cookie: string): Promise<Entry[]> {
  const entries: Entry[] = []
  let cursor: string | null = null
  do {
    const response = await audit(app, cookie, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
    expect(response.statusCode).toBe(200)
    const page = response.json() as { entries: Entry[]; nextCursor: string | null }
    expect(page.entries.length).toBeLessThanOrEqual(3)
    entries.push(...page.entries)
    cursor = page.nextCursor
  } while (cursor)
  return entries
}

describe('GET /api/v1/audit', () => {
  it('tells who did what, newest first, paged, from the events each action committed', async () => {
    // Given Ann's organization, where she and her admin Bob do one of each audited thing
    const app = await gateway()
    const ann = await signUp(app, { name: 'Ann', organizationName: 'Acme' })
    const bob = await join(app, ann.cookie, 'member')
    await app.inject({
      method: 'PATCH',
      url: `/api/v1/members/${bob.user.id}`,
      headers: { cookie: ann.cookie },
      payload: { role: 'admin' },
    })
    const created = (
      await app.inject({
        method: 'POST',
        url: '/api/v1/chatbots',
        headers: { cookie: bob.cookie },
        payload: { name: 'Support bot' },
      })
    ).json()
    const bot = created.chatbot.id
    const as = (cookie: string, method: 'PATCH' | 'POST' | 'DELETE', url: string, payload?: object) =>
      app.inject({ method, url, headers: { cookie }, ...(payload ? { payload } : {}) })
    await as(bob.cookie, 'PATCH', `/api/v1/chatbots/${bot}`, { name: 'Sales bot' })
    await as(bob.cookie, 'PATCH', `/api/v1/chatbots/${bot}`, { settings: { retentionDays: 30 } })
    const rotated = (await as(ann.cookie, 'POST', `/api/v1/chatbots/${bot}/rotate-key`)).json()
    for (const conversationId of ['c-1', 'c-2']) {
      const captured = await app.inject({
        method: 'POST',
        url: '/api/v1/capture',
        headers: { authorization: `Bearer ${rotated.apiKey}` },
        payload: {
          conversationId,
          messages: [{ id: 'm', role: 'user', content: 'hi' }],
          user: { id: 'end-user-77' },
        },
      })
      expect(captured.statusCode).toBe(200)
    }
    expect((await as(ann.cookie, 'DELETE', `/api/v1/chatbots/${bot}/users/end-user-77`)).json()).toEqual({
      ok: true,
      conversationsErased: 2,
    })
    const topic = {
      label: 'Gribblenox claims',
      examples: ['where is my gribblenox claim?', 'status of the gribblenox claim'],
    }
    const createdTopic = await as(bob.cookie, 'POST', `/api/v1/chatbots/${bot}/topics`, topic)
    expect(createdTopic.statusCode, createdTopic.body).toBe(200)
    const topicId = createdTopic.json().topic.id as string
    const invited = (
      await as(bob.cookie, 'POST', '/api/v1/invitations', { email: 'cy@example.com', role: 'viewer' })
    ).json()
    await as(bob.cookie, 'DELETE', `/api/v1/invitations/${invited.invitation.id}`)
    const beforeDeletion = await allEntries(app, ann.cookie)
    expect(beforeDeletion.find((e) => e.action === 'chatbot.settings-changed')?.details).toEqual({
      patch: { retentionDays: 30 },
    })
    expect(beforeDeletion.find((e) => e.action === 'chatbot.topic-creation-requested')?.details).toEqual({
      topicId,
      ...topic,
    })
    await as(ann.cookie, 'DELETE', `/api/v1/chatbots/${bot}`)
    const viewer = await join(app, ann.cookie, 'viewer')
    await as(bob.cookie, 'DELETE', `/api/v1/members/${viewer.user.id}`)

    // When Ann reads the log, three entries a page
    const entries = await allEntries(app, ann.cookie)

    // Then it tells, newest first, who did what to what
    const annActor = { id: ann.user.id, email: ann.user.email, name: 'Ann' }
    const bobActor = { id: bob.user.id, email: bob.user.email, name: bob.user.name }
    const member = (id: string, email: string) => ({ type: 'member', id, name: email })
    const chatbot = (name: string) => ({ type: 'chatbot', id: bot, name })
    expect(entries.map(({ action, actor, target, details }) => ({ action, actor, target, details }))).toEqual(
      [
        {
          action: 'organization.created',
          actor: annActor,
          target: { type: 'organization', id: ann.organization.id, name: 'Acme' },
          details: {},
        },
        {
          action: 'organization.member-joined',
          actor: annActor,
          target: member(ann.user.id, ann.user.email),
          details: { role: 'owner', invitationId: null },
        },
        {
          action: 'organization.member-invited',
          actor: annActor,
          target: { type: 'invitation', id: expect.any(String), name: bob.user.email },
          details: { role: 'member', expiresAt: expect.any(String) },
        },
        {
          action: 'organization.member-joined',
          actor: bobActor,
          target: member(bob.user.id, bob.user.email),
          details: { role: 'member', invitationId: expect.any(String) },
        },
        {
          action: 'organization.member-role-changed',
          actor: annActor,
          target: member(bob.user.id, bob.user.email),
          details: { role: 'admin', previousRole: 'member' },
        },
        { action: 'chatbot.created', actor: bobActor, target: chatbot('Support bot'), details: {} },
        {
          action: 'chatbot.renamed',
          actor: bobActor,
          target: chatbot('Sales bot'),
          details: { previousName: 'Support bot' },
        },
        {
          // The settings went with the chatbot when it was deleted; who changed them, and when, stays.
          action: 'chatbot.settings-changed',
          actor: bobActor,
          target: chatbot('Sales bot'),
          details: {},
        },
        {
          action: 'chatbot.key-rotated',
          actor: annActor,
          target: chatbot('Sales bot'),
          details: { apiKeyPrefix: rotated.chatbot.api_key_prefix },
        },
        {
          action: 'conversation.erased',
          actor: annActor,
          target: chatbot('Sales bot'),
          details: { reason: 'end-user-erasure', conversationsErased: 2 },
        },
        {
          // The topic's label and examples went with the chatbot (its end users' words, often); its id stays.
          action: 'chatbot.topic-creation-requested',
          actor: bobActor,
          target: chatbot('Sales bot'),
          details: { topicId },
        },
        {
          action: 'organization.member-invited',
          actor: bobActor,
          target: { type: 'invitation', id: invited.invitation.id, name: 'cy@example.com' },
          details: { role: 'viewer', expiresAt: invited.invitation.expiresAt },
        },
        {
          action: 'organization.invitation-revoked',
          actor: bobActor,
          target: { type: 'invitation', id: invited.invitation.id, name: 'cy@example.com' },
          details: {},
        },
        { action: 'chatbot.deleted', actor: annActor, target: chatbot('Sales bot'), details: {} },
        {
          action: 'organization.member-invited',
          actor: annActor,
          target: { type: 'invitation', id: expect.any(String), name: viewer.user.email },
          details: { role: 'viewer', expiresAt: expect.any(String) },
        },
        {
          action: 'organization.member-joined',
          actor: { id: viewer.user.id, email: viewer.user.email, name: viewer.user.name },
          target: member(viewer.user.id, viewer.user.email),
          details: { role: 'viewer', invitationId: expect.any(String) },
        },
        {
          action: 'organization.member-removed',
          actor: bobActor,
          target: member(viewer.user.id, viewer.user.email),
          details: { role: 'viewer', reason: 'removed' },
        },
      ].reverse(),
    )
    const times = entries.map((e) => Date.parse(e.occurredAt))
    expect([...times].sort((a, b) => b - a)).toEqual(times)

    // And the erased end user's id is not kept in it, nor the deleted chatbot's topic words
    expect(JSON.stringify(entries)).not.toContain('end-user-77')
    expect(JSON.stringify(entries).toLowerCase()).not.toContain('gribblenox')
  })

  it('is for owners and admins, and shows only the current organization', async () => {
    const app = await gateway()
    const ann = await signUp(app)
    const admin = await join(app, ann.cookie, 'admin')
    const member = await join(app, ann.cookie, 'member')
    const viewer = await join(app, ann.cookie, 'viewer')
    const other = await signUp(app)
    await app.inject({
      method: 'POST',
      url: '/api/v1/chatbots',
      headers: { cookie: other.cookie },
      payload: { name: 'Theirs' },
    })

    expect((await audit(app, admin.cookie)).statusCode).toBe(200)
    expect((await audit(app, member.cookie)).statusCode).toBe(403)
    expect((await audit(app, viewer.cookie)).statusCode).toBe(403)
    const ours = (await audit(app, ann.cookie)).json().entries as Entry[]
    expect(ours.length).toBeGreaterThan(0)
    expect(JSON.stringify(ours)).not.toContain('Theirs')
    expect(JSON.stringify(ours)).not.toContain(other.organization.id)
  })

  it('orders entries by their journal position as a number, across its digit counts, on every page', async () => {
    // Regression (trial8): the position was selected as text under its own name, so `ORDER BY position`
    // sorted the text ('84738048' above '104202240') and the cursor, compared as a number, skipped entries.
    // Positions grow a digit as the database's transaction ids do (a fresh install within its first hour).
    const app = await gateway()
    const ann = await signUp(app)
    await db.pool.query('DELETE FROM audit_log WHERE org_id = $1', [ann.organization.id])
    const positions = [9, 10, 99, 100, 1_000, 84_738_048, 104_202_240]
    for (const position of positions) {
      await db.pool.query(
        `INSERT INTO audit_log (event_id, org_id, position, occurred_at, action, target_type, target_id)
         VALUES (gen_random_uuid(), $1::uuid, $2, now(), $3, 'organization', $1::text)`,
        [ann.organization.id, position, `test.at-${position}`],
      )
    }
    const newestFirst = [...positions].reverse().map((p) => `test.at-${p}`)
    expect((await audit(app, ann.cookie)).json().entries.map((e: Entry) => e.action)).toEqual(newestFirst)
    expect((await allEntries(app, ann.cookie)).map((e) => e.action)).toEqual(newestFirst)
  })

  it('refuses a cursor it did not give, and a page over 100', async () => {
    const app = await gateway()
    const ann = await signUp(app)
    for (const query of ['?cursor=nonsense', '?cursor=LTE', '?limit=101', '?limit=0']) {
      const response = await audit(app, ann.cookie, query)
      expect(response.statusCode, query).toBe(400)
      expect(response.json().error.code).toBe('invalid_request')
    }
  })
})
