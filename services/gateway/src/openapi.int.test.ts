import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'

interface Operation {
  summary?: string
  description?: string
  responses: Record<string, unknown>
}

let db: TestDatabase
let app: FastifyInstance
beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

describe('GET /api/v1/openapi.json', () => {
  it('documents every gateway route from the route schemas', async () => {
    const res = await app.inject('/api/v1/openapi.json')
    expect(res.statusCode).toBe(200)
    const doc = res.json()
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths).sort()).toEqual(
      expect.arrayContaining([
        '/api/v1/capture',
        '/api/v1/chatbots',
        '/api/v1/chatbots/{id}',
        '/api/v1/chatbots/{id}/rotate-key',
        '/api/v1/auth/signup',
        '/api/v1/auth/login',
        '/api/v1/auth/logout',
        '/api/v1/auth/me',
        '/api/v1/auth/organization',
        '/api/v1/organizations',
        '/api/v1/organization',
        '/api/v1/organization/leave',
        '/api/v1/members',
        '/api/v1/members/{userId}',
        '/api/v1/invitations',
        '/api/v1/invitations/{id}',
        '/api/v1/invitations/lookup',
        '/api/v1/invitations/accept',
        '/api/v1/audit',
      ]),
    )
    const capture = doc.paths['/api/v1/capture'].post
    expect(Object.keys(capture.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '413',
      '415',
      '429',
      '500',
      '503',
    ])
    const body = capture.requestBody.content['application/json'].schema
    expect(body.required).toEqual(expect.arrayContaining(['conversationId', 'messages']))
    expect(body.properties.messages.maxItems).toBe(100)
    expect(Object.keys(doc.paths['/api/v1/chatbots/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    )
    // The new routes say what a role that may not act gets, and what they take
    const invite = doc.paths['/api/v1/invitations'].post
    expect(Object.keys(invite.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ])
    expect(invite.requestBody.content['application/json'].schema.properties.role.enum).toEqual([
      'owner',
      'admin',
      'member',
      'viewer',
    ])
    expect(Object.keys(doc.paths['/api/v1/audit'].get.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '500',
      '503',
    ])
    // Accepting an invitation needs no session (one is used when present)
    expect(doc.paths['/api/v1/invitations/accept'].post.security).toEqual([])
    // Errors are the shared responses, each with an example of the API.md body and its headers
    expect(capture.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' })
    const rateLimited = doc.components.responses.RateLimited
    expect(Object.keys(rateLimited.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
    )
    expect(rateLimited.content['application/json'].example.error.code).toBe('rate_limited')
    // Capture's answer says what it means, gives an example and lists Deprecation and the rate-limit headers
    const ok = capture.responses['200']
    expect(ok.description).not.toBe('Default Response')
    expect(ok.content['application/json'].example.ok).toBe(true)
    expect(Object.keys(ok.headers)).toEqual(
      expect.arrayContaining(['X-Request-Id', 'Deprecation', 'RateLimit-Limit']),
    )
    expect(capture.requestBody.content['application/json'].example.conversationId).toBe('chat-0001')
    expect(body.properties.userId.deprecated).toBe(true)
    // No operation is left undocumented
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(item)) {
        expect({ path, method, summary: op.summary, description: op.description }).toEqual({
          path,
          method,
          summary: expect.any(String),
          description: expect.any(String),
        })
        expect(JSON.stringify(op.responses)).not.toContain('Default Response')
      }
    }
  })
})
