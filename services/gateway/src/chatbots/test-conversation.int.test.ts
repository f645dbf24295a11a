import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { createChatbot } from '../../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { buildTestGateway } from '../../../../test/support/gateway.ts'
import { TEST_CONVERSATION } from './test-conversation.ts'

let db: TestDatabase
let app: FastifyInstance
let cookie: string
let otherCookie: string

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  cookie = (await signUp(app)).cookie
  otherCookie = (await signUp(app)).cookie
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

const send = (id: string, as = cookie) =>
  app.inject({ method: 'POST', url: `/api/v1/chatbots/${id}/test-conversation`, headers: { cookie: as } })

describe('POST /api/v1/chatbots/:id/test-conversation', () => {
  // Regression: the dashboard sent it with the key in the page's memory, so after a reload it could not.
  it('captures the example conversation with the chatbot key the session never sees, once', async () => {
    const id = (await createChatbot(app, cookie)).chatbot.id
    const first = await send(id)
    expect(first.statusCode).toBe(200)
    expect(first.json()).toMatchObject({ ok: true, messagesStored: 2, warnings: [] })
    const { rows } = await db.pool.query('SELECT id FROM capture_conversations WHERE chatbot_id = $1', [id])
    expect(rows).toEqual([{ id: first.json().conversationId }])
    // No body to send: an empty one with a JSON content type (as many clients send) is accepted too.
    const again = await app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${id}/test-conversation`,
      headers: { cookie, 'content-type': 'application/json' },
      payload: '',
    })
    expect(again.json()).toMatchObject({ messagesStored: 0, conversationId: first.json().conversationId })
    expect(TEST_CONVERSATION.messages).toHaveLength(2)
  })

  it("is 404 for another organization's chatbot and for ids that are no chatbot's", async () => {
    const id = (await createChatbot(app, cookie)).chatbot.id
    expect((await send(id, otherCookie)).statusCode).toBe(404)
    expect((await send('not-a-uuid')).statusCode).toBe(404)
    expect((await send('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404)
    expect(
      (await app.inject({ method: 'POST', url: `/api/v1/chatbots/${id}/test-conversation` })).statusCode,
    ).toBe(401)
  })
})
