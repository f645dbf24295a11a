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
  })
})
