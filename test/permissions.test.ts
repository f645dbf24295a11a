import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Role, randomClientAddress, sessionCookie, signUp, TEST_PASSWORD } from './support/auth.ts'
import { buildTestGateway, useTestGateways } from './support/gateway.ts'
import { invite, join, ROLES, tokenOf } from './support/members.ts'

/**
 * The permission matrix: every session route against every role. The routes are those of the OpenAPI
 * document (a new route without a row here fails the first test), and docs/api.md's matrix must say the
 * same as this file.
 */
const { db } = useTestGateways()

const ALL = ROLES
const MANAGERS: Role[] = ['owner', 'admin']
const READERS: Role[] = ['owner', 'admin', 'member']

/** One organization, and in it a person with the role under test, besides its owner. */
interface Fixture {
  readonly app: FastifyInstance
  readonly role: Role
  /** The person with the role (for the owner: the owner). */
  readonly cookie: string
  readonly orgId: string
  readonly ownerCookie: string
  /** A chatbot of the organization, made by its owner for this request. */
  chatbot(): Promise<string>
  /** A viewer of the organization, joined for this request. */
  viewer(): Promise<string>
  /** A pending viewer invitation of the organization, made by its owner for this request. */
  invitation(): Promise<string>
  /** Another session of the person with the role. */
  newSession(): Promise<string>
}

interface RouteCase {
  readonly allowed: readonly Role[]
  /** The request, as the person with the role (`cookie` is added). */
  readonly request: (f: Fixture) => Promise<Omit<InjectOptions, 'headers'>> | Omit<InjectOptions, 'headers'>
  /** The status an allowed role gets (200 unless said). */
  readonly ok?: number
  /** A session of its own, for a route that ends or moves the one it is called with. */
  readonly ownSession?: boolean
  /** A fixture of its own (a fresh organization), for a route that takes the person out of theirs. */
  readonly ownOrganization?: boolean
}

const MATRIX: Record<string, RouteCase> = {
  'GET /api/v1/chatbots': { allowed: READERS, request: () => ({ method: 'GET', url: '/api/v1/chatbots' }) },
  'POST /api/v1/chatbots': {
    allowed: MANAGERS,
    request: () => ({ method: 'POST', url: '/api/v1/chatbots', payload: { name: 'New bot' } }),
  },
  'GET /api/v1/chatbots/{id}': {
    allowed: READERS,
    request: async (f) => ({ method: 'GET', url: `/api/v1/chatbots/${await f.chatbot()}` }),
  },
  'PATCH /api/v1/chatbots/{id}': {
    allowed: READERS,
    request: async (f) => ({
      method: 'PATCH',
      url: `/api/v1/chatbots/${await f.chatbot()}`,
      payload: { name: 'Renamed', settings: { customFields: { plan: 'string' } } },
    }),
  },
  'POST /api/v1/chatbots/{id}/test-conversation': {
    allowed: READERS,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/test-conversation`,
    }),
  },
  'DELETE /api/v1/chatbots/{id}': {
    allowed: MANAGERS,
    request: async (f) => ({ method: 'DELETE', url: `/api/v1/chatbots/${await f.chatbot()}` }),
  },
  'POST /api/v1/chatbots/{id}/rotate-key': {
    allowed: MANAGERS,
    request: async (f) => ({ method: 'POST', url: `/api/v1/chatbots/${await f.chatbot()}/rotate-key` }),
  },
  'DELETE /api/v1/chatbots/{id}/users/{userId}': {
    allowed: MANAGERS,
    request: async (f) => ({ method: 'DELETE', url: `/api/v1/chatbots/${await f.chatbot()}/users/u-1` }),
  },
  'POST /api/v1/chatbots/{id}/topics': {
    allowed: MANAGERS,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/topics`,
      payload: { label: 'Roadside', examples: ['I need a tow truck', 'my battery is dead'] },
    }),
  },
  'POST /api/v1/chatbots/{id}/topics/{topicId}/rename': {
    allowed: MANAGERS,
    // No such topic: an allowed role gets past the permission to the 404.
    ok: 404,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/topics/${randomUUID()}/rename`,
      payload: { label: 'Refunds' },
    }),
  },
  'POST /api/v1/chatbots/{id}/topics/{topicId}/hide': {
    allowed: MANAGERS,
    // No such topic: an allowed role gets past the permission to the 404.
    ok: 404,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/topics/${randomUUID()}/hide`,
    }),
  },
  'POST /api/v1/chatbots/{id}/topics/{topicId}/unhide': {
    allowed: MANAGERS,
    // No such topic: an allowed role gets past the permission to the 404.
    ok: 404,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/topics/${randomUUID()}/unhide`,
    }),
  },
  'POST /api/v1/chatbots/{id}/topics/{topicId}/merge': {
    allowed: MANAGERS,
    // No such topic: an allowed role gets past the permission to the 404.
    ok: 404,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/topics/${randomUUID()}/merge`,
      payload: { into: randomUUID() },
    }),
  },
  'POST /api/v1/chatbots/{id}/reanalysis': {
    allowed: MANAGERS,
    ok: 202,
    request: async (f) => ({
      method: 'POST',
      url: `/api/v1/chatbots/${await f.chatbot()}/reanalysis`,
      payload: {},
    }),
  },
  'GET /api/v1/chatbots/{id}/reanalysis': {
    allowed: READERS,
    request: async (f) => ({ method: 'GET', url: `/api/v1/chatbots/${await f.chatbot()}/reanalysis` }),
  },
  'GET /api/v1/chatbots/{id}/analyzers': {
    allowed: READERS,
    request: async (f) => ({ method: 'GET', url: `/api/v1/chatbots/${await f.chatbot()}/analyzers` }),
  },
  'GET /api/v1/chatbots/{id}/topics/commands': {
    allowed: ALL,
    request: async (f) => ({ method: 'GET', url: `/api/v1/chatbots/${await f.chatbot()}/topics/commands` }),
  },
  'GET /api/v1/conversations': {
    allowed: ALL,
    request: () => ({ method: 'GET', url: '/api/v1/conversations' }),
  },
  'GET /api/v1/conversations/{id}': {
    allowed: ALL,
    // No conversation: an allowed role gets past the permission to the 404.
    ok: 404,
    request: () => ({ method: 'GET', url: `/api/v1/conversations/${randomUUID()}` }),
  },
  'GET /api/v1/analytics/overview': {
    allowed: ALL,
    request: () => ({ method: 'GET', url: '/api/v1/analytics/overview' }),
  },
  'GET /api/v1/analytics/sentiment': {
    allowed: ALL,
    request: () => ({ method: 'GET', url: '/api/v1/analytics/sentiment' }),
  },
  'GET /api/v1/analytics/topics': {
    allowed: ALL,
    request: () => ({ method: 'GET', url: '/api/v1/analytics/topics' }),
  },
  'GET /api/v1/analytics/signals': {
    allowed: ALL,
    request: () => ({ method: 'GET', url: '/api/v1/analytics/signals' }),
  },
  'GET /api/v1/status': { allowed: ALL, request: () => ({ method: 'GET', url: '/api/v1/status' }) },
  'GET /api/v1/members': { allowed: READERS, request: () => ({ method: 'GET', url: '/api/v1/members' }) },
  'PATCH /api/v1/members/{userId}': {
    allowed: MANAGERS,
    request: async (f) => ({
      method: 'PATCH',
      url: `/api/v1/members/${await f.viewer()}`,
      payload: { role: 'member' },
    }),
  },
  'DELETE /api/v1/members/{userId}': {
    allowed: MANAGERS,
    request: async (f) => ({ method: 'DELETE', url: `/api/v1/members/${await f.viewer()}` }),
  },
  'GET /api/v1/invitations': {
    allowed: MANAGERS,
    request: () => ({ method: 'GET', url: '/api/v1/invitations' }),
  },
  'POST /api/v1/invitations': {
    allowed: MANAGERS,
    request: () => ({
      method: 'POST',
      url: '/api/v1/invitations',
      payload: { email: `new-${randomUUID()}@example.com`, role: 'viewer' },
    }),
  },
  'DELETE /api/v1/invitations/{id}': {
    allowed: MANAGERS,
    request: async (f) => ({ method: 'DELETE', url: `/api/v1/invitations/${await f.invitation()}` }),
  },
  'GET /api/v1/audit': { allowed: MANAGERS, request: () => ({ method: 'GET', url: '/api/v1/audit' }) },
  'DELETE /api/v1/organization': {
    allowed: ['owner'],
    ownOrganization: true,
    request: () => ({ method: 'DELETE', url: '/api/v1/organization' }),
  },
  'POST /api/v1/organization/leave': {
    allowed: ALL,
    ownOrganization: true,
    request: async (f) => {
      // An owner may leave while another owner stays.
      if (f.role === 'owner') await join(f.app, f.ownerCookie, 'owner')
      return { method: 'POST', url: '/api/v1/organization/leave' }
    },
  },
  // Any signed-in person, whatever their role: their own session and organizations.
  'GET /api/v1/auth/me': { allowed: ALL, request: () => ({ method: 'GET', url: '/api/v1/auth/me' }) },
  'POST /api/v1/auth/logout': {
    allowed: ALL,
    ownSession: true,
    request: () => ({ method: 'POST', url: '/api/v1/auth/logout' }),
  },
  'PUT /api/v1/auth/organization': {
    allowed: ALL,
    request: (f) => ({
      method: 'PUT',
      url: '/api/v1/auth/organization',
      payload: { organizationId: f.orgId },
    }),
  },
  'POST /api/v1/organizations': {
    allowed: ALL,
    ownSession: true,
    request: () => ({ method: 'POST', url: '/api/v1/organizations', payload: { name: 'Another' } }),
  },
}

/** Routes that take no session: anyone may call them, each checking what it is given (capture: its API key). */
const PUBLIC_ROUTES = [
  'POST /api/v1/auth/signup',
  'POST /api/v1/auth/login',
  'POST /api/v1/invitations/lookup',
  'POST /api/v1/invitations/accept',
  'POST /api/v1/capture',
]

async function fixture(app: FastifyInstance, role: Role): Promise<Fixture> {
  const owner = await signUp(app)
  const person = role === 'owner' ? owner : await join(app, owner.cookie, role)
  const ownerCookie = owner.cookie
  return {
    app,
    role,
    cookie: person.cookie,
    orgId: owner.organization.id,
    ownerCookie,
    async chatbot() {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/chatbots',
        headers: { cookie: ownerCookie },
        payload: { name: 'Bot' },
      })
      return response.json().chatbot.id
    },
    async viewer() {
      return (await join(app, ownerCookie, 'viewer')).user.id
    },
    async invitation() {
      const response = await invite(app, ownerCookie, `invited-${randomUUID()}@example.com`, 'viewer')
      tokenOf(response)
      return response.json().invitation.id
    },
    async newSession() {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: randomClientAddress(),
        payload: { email: person.user.email, password: TEST_PASSWORD },
      })
      return sessionCookie(response)
    },
  }
}

let app: FastifyInstance
const fixtures = new Map<Role, Fixture>()

beforeAll(async () => {
  ;({ app } = await buildTestGateway(db, { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '10000' }))
  for (const role of ROLES) fixtures.set(role, await fixture(app, role))
})

afterAll(async () => {
  await app?.close()
})

describe('the permission matrix', () => {
  it('covers every route of the OpenAPI document that takes a session, and no other', async () => {
    const doc = (await app.inject('/api/v1/openapi.json')).json()
    const withSession: string[] = []
    const without: string[] = []
    for (const [path, operations] of Object.entries(
      doc.paths as Record<string, Record<string, { security?: unknown[] }>>,
    )) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!path.startsWith('/api/v1/') || path === '/api/v1/openapi.json') continue
        const key = `${method.toUpperCase()} ${path}`
        const session = operation.security?.some((s) => typeof s === 'object' && s !== null && 'session' in s)
        ;(session ? withSession : without).push(key)
      }
    }
    expect(withSession.sort()).toEqual(Object.keys(MATRIX).sort())
    expect(without.sort()).toEqual([...PUBLIC_ROUTES].sort())
  })

  it("is docs/api.md's", () => {
    const readme = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8')
    const documented = new Map<string, Role[]>()
    for (const line of readme.split('\n')) {
      const cells = line.split('|').map((c) => c.trim())
      // | `GET /api/v1/x`, `POST /api/v1/y` | ✓ | ✓ | ✓ | — |
      if (cells.length !== 7 || !cells[1]?.startsWith('`')) continue
      const marks = cells.slice(2, 6)
      if (!marks.every((m) => m === '✓' || m === '—')) continue
      const roles = ROLES.filter((_, i) => marks[i] === '✓')
      for (const [, route] of cells[1].matchAll(/`([A-Z]+ \/api\/v1\/[^`]+)`/g)) {
        documented.set(route!.replace(/:(\w+)/g, '{$1}'), [...roles])
      }
    }
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(Object.entries(MATRIX).map(([route, c]) => [route, [...c.allowed]])),
    )
  })

  describe.each(Object.entries(MATRIX))('%s', (_route, routeCase) => {
    it.each(ROLES)('as %s', async (role) => {
      const f = routeCase.ownOrganization ? await fixture(app, role) : fixtures.get(role)!
      const cookie = routeCase.ownSession ? await f.newSession() : f.cookie
      const response = await app.inject({
        ...(await routeCase.request(f)),
        headers: { cookie },
      } as InjectOptions)
      if (routeCase.allowed.includes(role)) {
        expect(response.statusCode, response.body).toBe(routeCase.ok ?? 200)
      } else {
        expect(response.statusCode, response.body).toBe(403)
        expect(response.json().error.code).toBe('forbidden')
      }
    })
  })

  it('answers 401 without a session and 403 without an organization, before anything else', async () => {
    // Given someone removed from their only organization
    const owner = fixtures.get('owner')!
    const gone = await join(app, owner.ownerCookie, 'viewer')
    await app.inject({
      method: 'DELETE',
      url: `/api/v1/members/${gone.user.id}`,
      headers: { cookie: owner.ownerCookie },
    })

    for (const [route, routeCase] of Object.entries(MATRIX)) {
      const request = await routeCase.request(owner)
      // Without a session: 401 everywhere
      const anonymous = await app.inject({ ...request } as InjectOptions)
      // (signing out without a session is fine: there is nothing to end)
      expect(anonymous.statusCode, route).toBe(route === 'POST /api/v1/auth/logout' ? 200 : 401)
      // In no organization: 403 for everything of an organization; their own session and organizations still work
      if (route.includes('/auth/') || route === 'POST /api/v1/organizations') continue
      const orphan = await app.inject({ ...request, headers: { cookie: gone.cookie } } as InjectOptions)
      expect(orphan.statusCode, route).toBe(403)
    }
  })
})
