import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { buildTestGateway } from '../../../../test/support/gateway.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db.drop()
})

describe('auth routes in the OpenAPI document', () => {
  it('documents each route with its body and per-status responses', async () => {
    // Given a gateway
    const { app } = await buildTestGateway(db)

    // When the OpenAPI document is fetched
    const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
    await app.close()

    // Then sign-up, login, logout and me are in it, with their request bodies and responses
    expect(response.statusCode).toBe(200)
    const paths = response.json().paths
    const signup = paths['/api/v1/auth/signup'].post
    expect(Object.keys(signup.requestBody.content['application/json'].schema.properties).sort()).toEqual([
      'email',
      'name',
      'organizationName',
      'password',
    ])
    expect(Object.keys(signup.responses).sort()).toEqual([
      '200',
      '400',
      '403',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ])
    expect(Object.keys(paths['/api/v1/auth/login'].post.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '429',
      '500',
      '503',
    ])
    expect(paths['/api/v1/auth/logout'].post.security).toEqual([{ session: [] }])
    expect(Object.keys(paths['/api/v1/auth/me'].get.responses).sort()).toEqual(['200', '401', '500', '503'])
  })
})
