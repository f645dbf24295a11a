/**
 * Regression (issue 18): @fastify/session made a new session, an id and its signature, for every request
 * without the cookie, captures included: a seventh of the gateway's CPU under a capture load. The cookie
 * session is now registered in the scope of the routes that read it; capture, with its API key, makes none.
 */
import { loadConfig } from '@cas/config'
import { createHttpApp } from '@cas/http'
import { describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { useTestGateways } from '../../../test/support/gateway.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { registerGateway } from './app.ts'

const { db, closeAfterTest } = useTestGateways()

describe('the gateway’s dashboard session', () => {
  it('is read and made for the dashboard’s routes, and never for a capture', async () => {
    // Given the gateway's routes, with a hook seeing each request's session as it ends
    const app = closeAfterTest(await createHttpApp({ logger: false, readiness: [] }))
    await registerGateway(app, {
      pool: db.pool,
      keyring: testKeyring,
      config: loadConfig({ DATABASE_URL: db.url }),
      logger: false,
      readiness: [],
    })
    const sessions = new Map<string, unknown>()
    app.addHook('onResponse', async (request) => {
      sessions.set(`${request.method} ${request.routeOptions.url}`, request.session)
    })
    await app.ready()

    // When a user signs up and creates a chatbot, and the chatbot captures a conversation
    const { cookie } = await signUp(app)
    const { apiKey } = await createChatbot(app, cookie)
    const captured = await postCapture(app, apiKey, {
      conversationId: 'no-session',
      messages: [{ id: 'm', role: 'user', content: 'hello' }],
    })

    // Then the dashboard's requests had their session, and the capture none, nor any cookie back
    expect(captured.statusCode).toBe(200)
    expect(captured.headers['set-cookie']).toBeUndefined()
    expect(sessions.get('POST /api/v1/auth/signup')).toMatchObject({ userId: expect.any(String) })
    expect(sessions.get('POST /api/v1/chatbots')).toMatchObject({ userId: expect.any(String) })
    expect(sessions.get('POST /api/v1/capture')).toBeFalsy()
  })
})
