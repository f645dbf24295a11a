import { createHash } from 'node:crypto'
import { beforeEach, describe, expect, it } from 'vitest'
import {
  me,
  randomClientAddress,
  sessionCookie,
  signUp,
  TEST_PASSWORD,
} from '../../../../test/support/auth.ts'
import { useTestGateways } from '../../../../test/support/gateway.ts'
import { accept, invite, join, tokenOf } from '../../../../test/support/members.ts'

const { db, gateway, setNow, advance } = useTestGateways({
  env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000' },
})

beforeEach(() => {
  setNow(new Date('2030-01-01T00:00:00Z'))
})

const DAY = 86_400_000

function lookup(app: Awaited<ReturnType<typeof gateway>>, token: string) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/invitations/lookup',
    remoteAddress: randomClientAddress(),
    payload: { token },
  })
}

describe('invitations', () => {
  it('shows the link once and stores only a hash of its secret', async () => {
    // Given an owner
    const app = await gateway()
    const owner = await signUp(app, { organizationName: 'Acme', name: 'Ann' })

    // When they invite someone as a member
    const response = await invite(app, owner.cookie, ' Dan@Example.com ', 'member')

    // Then the answer has the invitation, pending for 7 days, and a link to this server's join page
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body).toEqual({
      ok: true,
      invitation: {
        id: expect.any(String),
        email: 'dan@example.com',
        role: 'member',
        invitedBy: { id: owner.user.id, email: owner.user.email, name: 'Ann' },
        createdAt: '2030-01-01T00:00:00.000Z',
        expiresAt: '2030-01-08T00:00:00.000Z',
      },
      link: expect.stringMatching(/^http:\/\/localhost(:\d+)?\/join#[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/),
      emailed: false,
    })
    const token = tokenOf(response)
    const secret = token.slice(token.indexOf('.') + 1)

    // And what is stored is the SHA-256 of the secret, never the secret: not in the table, not in the events
    const { rows } = await db.pool.query('SELECT secret_hash FROM invitations WHERE id = $1', [
      body.invitation.id,
    ])
    expect(rows).toEqual([{ secret_hash: createHash('sha256').update(secret).digest() }])
    const { rows: dump } = await db.pool.query(
      `SELECT (SELECT json_agg(i)::text FROM invitations i) AS invitations,
              (SELECT json_agg(j)::text FROM event_journal j) AS journal,
              (SELECT json_agg(a)::text FROM audit_log a) AS audit`,
    )
    expect(JSON.stringify(dump)).not.toContain(secret)

    // And the pending list (which never shows a link again) has it
    const list = await app.inject({
      method: 'GET',
      url: '/api/v1/invitations',
      headers: { cookie: owner.cookie },
    })
    expect(list.json()).toEqual({ ok: true, invitations: [body.invitation] })
    expect(list.body).not.toContain(secret)
  })

  it('signs up a new person with the invited email, into the organization with the role, once', async () => {
    // Given an invitation to Acme as a viewer
    const app = await gateway()
    const owner = await signUp(app, { organizationName: 'Acme' })
    const token = tokenOf(await invite(app, owner.cookie, 'dan@example.com', 'viewer'))

    // When it is looked up, then accepted without a session, with a password
    const looked = await lookup(app, token)
    const accepted = await accept(app, token, { password: TEST_PASSWORD, name: 'Dan' })

    // Then the lookup says what it invites to, and Dan is signed up, signed in, a viewer of Acme only
    expect(looked.json()).toEqual({
      ok: true,
      invitation: {
        organization: { name: 'Acme' },
        email: 'dan@example.com',
        role: 'viewer',
        invitedBy: owner.user.name,
        expiresAt: '2030-01-08T00:00:00.000Z',
      },
    })
    expect(accepted.statusCode).toBe(200)
    expect(accepted.json()).toMatchObject({
      user: { email: 'dan@example.com', name: 'Dan' },
      organization: {
        id: owner.organization.id,
        role: 'viewer',
        permissions: ['conversations:read', 'analytics:read', 'organization:leave'],
      },
      organizations: [{ id: owner.organization.id, name: 'Acme', role: 'viewer' }],
    })
    const cookie = sessionCookie(accepted)
    expect((await me(app, cookie)).json().organization.role).toBe('viewer')

    // And the link works once: used, it is refused, and it is no longer pending
    const again = await accept(app, token, { password: TEST_PASSWORD })
    expect(again.statusCode).toBe(404)
    expect(again.json().error.message).toBe('This invitation has already been used.')
    expect((await lookup(app, token)).statusCode).toBe(404)
    const list = await app.inject({
      method: 'GET',
      url: '/api/v1/invitations',
      headers: { cookie: owner.cookie },
    })
    expect(list.json().invitations).toEqual([])
  })

  it('still signs invited people up when self-service sign-up is disabled', async () => {
    // Given a server with SIGNUP_ENABLED=false, and an owner from before it was closed
    const open = await gateway()
    const owner = await signUp(open)
    const closed = await gateway({ SIGNUP_ENABLED: 'false' })
    const token = tokenOf(await invite(closed, owner.cookie, 'invited@closed.example.com', 'member'))

    // When the invited person accepts, and someone uninvited tries to sign up
    const accepted = await accept(closed, token, { password: TEST_PASSWORD })
    const uninvited = await closed.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'uninvited@closed.example.com', password: TEST_PASSWORD, organizationName: 'Nope' },
    })

    // Then the invitation signs them up, and only it
    expect(accepted.statusCode).toBe(200)
    expect(accepted.json().organization).toMatchObject({ id: owner.organization.id, role: 'member' })
    expect(uninvited.statusCode).toBe(403)
  })

  it('adds an existing person who is signed in as the invited email, and switches them to it', async () => {
    // Given Bea, with an organization of her own, invited to Acme as an admin
    const app = await gateway()
    const owner = await signUp(app, { organizationName: 'Acme' })
    const bea = await signUp(app, { organizationName: 'Bea & Co' })
    const token = tokenOf(await invite(app, owner.cookie, bea.user.email, 'admin'))

    // When she accepts while signed in, a minute later
    advance(60_000)
    const accepted = await accept(app, token, { cookie: bea.cookie })

    // Then she belongs to both, working in Acme now as its admin
    expect(accepted.statusCode).toBe(200)
    expect(accepted.json()).toMatchObject({
      user: { id: bea.user.id },
      organization: { id: owner.organization.id, role: 'admin' },
      organizations: [
        { id: bea.organization.id, role: 'owner' },
        { id: owner.organization.id, role: 'admin' },
      ],
    })
    expect((await me(app, bea.cookie)).json().organization.id).toBe(owner.organization.id)
  })

  it('is refused to someone signed in as another email, and to a new sign-up for an email that has an account', async () => {
    // Given an invitation for bea@example.com, who has an account, and Cy, who is signed in
    const app = await gateway()
    const owner = await signUp(app)
    const bea = await signUp(app)
    const cy = await signUp(app)
    const token = tokenOf(await invite(app, owner.cookie, bea.user.email, 'member'))

    // When Cy accepts it, and someone without a session tries to sign up with it
    const asCy = await accept(app, token, { cookie: cy.cookie })
    const signUpInstead = await accept(app, token, { password: TEST_PASSWORD })
    const noPassword = await accept(app, token)

    // Then Cy is forbidden, the sign-up conflicts with Bea's account, and a missing password is named
    expect(asCy.statusCode).toBe(403)
    expect(signUpInstead.statusCode).toBe(409)
    expect(noPassword.statusCode).toBe(400)
    expect(noPassword.json().error.details).toContainEqual(expect.objectContaining({ path: '/password' }))

    // And the invitation is still pending, Cy not a member
    const { rows } = await db.pool.query('SELECT accepted_at FROM invitations WHERE org_id = $1', [
      owner.organization.id,
    ])
    expect(rows).toEqual([{ accepted_at: null }])
    const members = await app.inject({
      method: 'GET',
      url: '/api/v1/members',
      headers: { cookie: owner.cookie },
    })
    expect(members.json().members.map((m: { email: string }) => m.email)).toEqual([owner.user.email])
  })

  it('expires after 7 days by default, and after INVITATION_TTL_DAYS when set', async () => {
    // Given invitations made at the same time by gateways with the default and with 1 day
    // (sessions that outlive the week)
    const app = await gateway({ SESSION_IDLE_MINUTES: '20000' })
    const short = await gateway({ SESSION_IDLE_MINUTES: '20000', INVITATION_TTL_DAYS: '1' })
    const owner = await signUp(app)
    const week = tokenOf(await invite(app, owner.cookie, 'week@example.com', 'member'))
    const day = tokenOf(await invite(short, owner.cookie, 'day@example.com', 'member'))

    // When a day has passed, the one-day one is expired and the other not
    advance(DAY)
    const dayLate = await accept(app, day, { password: TEST_PASSWORD })
    expect(dayLate.statusCode).toBe(404)
    expect(dayLate.json().error.message).toBe('This invitation has expired; ask for a new one.')
    expect((await lookup(app, week)).statusCode).toBe(200)

    // And a minute before 7 days it still works, at 7 days it does not
    advance(6 * DAY - 60_000)
    expect((await lookup(app, week)).statusCode).toBe(200)
    advance(60_000)
    expect((await accept(app, week, { password: TEST_PASSWORD })).statusCode).toBe(404)
    const pending = await app.inject({
      method: 'GET',
      url: '/api/v1/invitations',
      headers: { cookie: owner.cookie },
    })
    expect(pending.json().invitations).toEqual([])

    // And an expired invitation no longer blocks inviting that email again
    expect((await invite(app, owner.cookie, 'week@example.com', 'member')).statusCode).toBe(200)
  })

  it('can be revoked while pending, after which its link is refused', async () => {
    // Given a pending invitation
    const app = await gateway()
    const owner = await signUp(app)
    const response = await invite(app, owner.cookie, 'dan@example.com', 'member')
    const token = tokenOf(response)

    // When the owner revokes it
    const revoked = await app.inject({
      method: 'DELETE',
      url: `/api/v1/invitations/${response.json().invitation.id}`,
      headers: { cookie: owner.cookie },
    })

    // Then it is no longer listed, and the link is refused
    expect(revoked.statusCode).toBe(200)
    const list = await app.inject({
      method: 'GET',
      url: '/api/v1/invitations',
      headers: { cookie: owner.cookie },
    })
    expect(list.json().invitations).toEqual([])
    const accepted = await accept(app, token, { password: TEST_PASSWORD })
    expect(accepted.statusCode).toBe(404)
    expect(accepted.json().error.message).toBe('This invitation was revoked.')

    // And revoking again, or an unknown id, or another organization's, is 404
    for (const id of [response.json().invitation.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const again = await app.inject({
        method: 'DELETE',
        url: `/api/v1/invitations/${id}`,
        headers: { cookie: owner.cookie },
      })
      expect(again.statusCode).toBe(404)
    }
    const other = await signUp(app)
    const theirs = await invite(app, other.cookie, 'eve@example.com', 'member')
    const cross = await app.inject({
      method: 'DELETE',
      url: `/api/v1/invitations/${theirs.json().invitation.id}`,
      headers: { cookie: owner.cookie },
    })
    expect(cross.statusCode).toBe(404)
  })

  it.each([
    ['demoted to member', { method: 'PATCH', payload: { role: 'member' } }],
    ['removed', { method: 'DELETE' }],
  ] as const)(
    'is revoked when the admin who sent it is %s, and cannot bring anyone in then',
    async (_, change) => {
      // Given an admin's pending invitation of an admin, and the owner's of a viewer
      const app = await gateway()
      const owner = await signUp(app)
      const admin = await join(app, owner.cookie, 'admin')
      const theirs = tokenOf(await invite(app, admin.cookie, `alt-${Date.now()}@example.com`, 'admin'))
      const owners = await invite(app, owner.cookie, `viewer-${Date.now()}@example.com`, 'viewer')

      // When the owner takes the admin's rights away
      const changed = await app.inject({
        method: change.method,
        url: `/api/v1/members/${admin.user.id}`,
        headers: { cookie: owner.cookie },
        ...('payload' in change ? { payload: change.payload } : {}),
      })
      expect(changed.statusCode).toBe(200)

      // Then the admin's invitation is no longer listed and its link is refused; the owner's stands
      const list = await app.inject({
        method: 'GET',
        url: '/api/v1/invitations',
        headers: { cookie: owner.cookie },
      })
      expect(list.json().invitations.map((i: { id: string }) => i.id)).toEqual([owners.json().invitation.id])
      const accepted = await accept(app, theirs, { password: TEST_PASSWORD })
      expect(accepted.statusCode).toBe(404)
      expect(accepted.json().error.message).toBe('This invitation was revoked.')
      expect((await accept(app, tokenOf(owners), { password: TEST_PASSWORD })).statusCode).toBe(200)
    },
  )

  it.each([
    [
      'a made-up token',
      () => '00000000-0000-4000-8000-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ],
    ['garbage', () => 'not a token'],
  ])('answers %s with the same 404 as a wrong secret', async (_, made) => {
    const app = await gateway()
    const owner = await signUp(app)
    const token = tokenOf(await invite(app, owner.cookie, 'dan@example.com', 'member'))
    const wrongSecret = `${token.slice(0, token.indexOf('.'))}.${'B'.repeat(43)}`
    const answers = await Promise.all([made(), wrongSecret].map((t) => lookup(app, t)))
    for (const a of answers) expect(a.statusCode).toBe(404)
    expect(answers[0]!.body).toBe(answers[1]!.body)
  })

  it('refuses inviting a member, or an email with a pending invitation', async () => {
    const app = await gateway()
    const owner = await signUp(app, { email: 'ann@example.com' })
    expect((await invite(app, owner.cookie, 'ann@example.com', 'admin')).statusCode).toBe(409)
    expect((await invite(app, owner.cookie, 'dan@example.com', 'admin')).statusCode).toBe(200)
    const twice = await invite(app, owner.cookie, 'dan@example.com', 'viewer')
    expect(twice.statusCode).toBe(409)
    expect(twice.json().error.code).toBe('conflict')
  })

  it('limits invitations per organization per hour, counting only those allowed to invite', async () => {
    // Given an organization allowed 2 invitations an hour, and a viewer in it
    const app = await gateway({ INVITATION_RATE_LIMIT_PER_HOUR: '2' })
    const owner = await signUp(app)
    const viewerToken = tokenOf(await invite(app, owner.cookie, 'viewer@example.com', 'viewer'))
    const viewer = sessionCookie(await accept(app, viewerToken, { password: TEST_PASSWORD }))

    // When the viewer tries (and is forbidden), then the owner invites twice more
    for (let i = 0; i < 3; i++) {
      expect((await invite(app, viewer, `nope-${i}@example.com`, 'member')).statusCode).toBe(403)
    }
    const second = await invite(app, owner.cookie, 'second@example.com', 'member')
    const third = await invite(app, owner.cookie, 'third@example.com', 'member')

    // Then the viewer's attempts used up nothing: the second is made, the third refused with 429
    expect(second.statusCode).toBe(200)
    expect(third.statusCode).toBe(429)
    expect(third.json().error.code).toBe('rate_limited')
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0)
    expect(third.headers['ratelimit-remaining']).toBe('0')

    // And another organization has its own allowance
    const other = await signUp(app)
    expect((await invite(app, other.cookie, 'dan@example.com', 'member')).statusCode).toBe(200)
  })
})
