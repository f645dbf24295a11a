import type { FastifyInstance, FastifyRequest } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { createChatbot } from '../../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { buildTestGateway } from '../../../../test/support/gateway.ts'
import { ApiKeyIdentifier } from './api-key-auth.ts'

let db: TestDatabase
let app: FastifyInstance
let cookie: string

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  cookie = (await signUp(app)).cookie
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

const requestWith = (apiKey: string) => ({ headers: { authorization: `Bearer ${apiKey}` } }) as FastifyRequest

describe('API key identification before the capture transaction', () => {
  it('remembers a key it found for the TTL only, and never remembers a key it did not find', async () => {
    let clock = 1_000_000
    const keys = new ApiKeyIdentifier(db.pool, { ttlMs: 5_000, now: () => clock })
    const { chatbot, apiKey } = await createChatbot(app, cookie)
    expect(await keys.identify(requestWith(apiKey))).toMatchObject({ chatbotId: chatbot.id })

    const rotated = await app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbot.id}/rotate-key`,
      headers: { cookie },
    })
    expect(rotated.statusCode).toBe(200)
    const newKey: string = rotated.json().apiKey
    // Within the TTL the old key still passes this early check (the transaction refuses it).
    expect(await keys.identify(requestWith(apiKey))).toMatchObject({ chatbotId: chatbot.id })
    clock += 5_001
    expect(await keys.identify(requestWith(apiKey))).toBeNull()
    // Not found, not remembered: the new key is known at once.
    expect(await keys.identify(requestWith(newKey))).toMatchObject({ chatbotId: chatbot.id })
  })

  it('keeps at most maxEntries keys, dropping the oldest', async () => {
    const keys = new ApiKeyIdentifier(db.pool, { maxEntries: 2 })
    const bots = [
      await createChatbot(app, cookie),
      await createChatbot(app, cookie),
      await createChatbot(app, cookie),
    ]
    for (const bot of bots) await keys.identify(requestWith(bot.apiKey))
    // The first key fell out of the cache: deleting its chatbot now shows on the next check.
    for (const bot of bots.slice(0, 2)) {
      const res = await app.inject({
        method: 'DELETE',
        url: `/api/v1/chatbots/${bot.chatbot.id}`,
        headers: { cookie },
      })
      expect(res.statusCode).toBeLessThan(300)
    }
    expect(await keys.identify(requestWith(bots[0]!.apiKey))).toBeNull()
    expect(await keys.identify(requestWith(bots[1]!.apiKey))).toMatchObject({
      chatbotId: bots[1]!.chatbot.id,
    })
  })
})
