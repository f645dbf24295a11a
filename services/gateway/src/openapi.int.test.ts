import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'

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
    expect(Object.keys(capture.responses).sort()).toEqual(['200', '400', '401', '413', '415', '429', '503'])
    const body = capture.requestBody.content['application/json'].schema
    expect(body.required).toEqual(expect.arrayContaining(['conversationId', 'messages']))
    expect(body.properties.messages.maxItems).toBe(100)
    expect(Object.keys(doc.paths['/api/v1/chatbots/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    )
    // The new routes say what a role that may not act gets, and what they take
    const invite = doc.paths['/api/v1/invitations'].post
    expect(Object.keys(invite.responses).sort()).toEqual(['200', '400', '401', '403', '409', '429'])
    expect(invite.requestBody.content['application/json'].schema.properties.role.enum).toEqual([
      'owner',
      'admin',
      'member',
      'viewer',
    ])
    expect(Object.keys(doc.paths['/api/v1/audit'].get.responses).sort()).toEqual(['200', '400', '401', '403'])
    expect(doc.paths['/api/v1/invitations/accept'].post.security).toBeUndefined()
  })
})
