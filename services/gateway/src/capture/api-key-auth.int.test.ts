import type { FastifyRequest } from 'fastify'
import { describe, expect, it } from 'vitest'
import { createChatbot } from '../../../../test/support/chatbots.ts'
import { useSignedInGateway } from '../../../../test/support/gateway.ts'
import { ApiKeyIdentifier } from './api-key-auth.ts'

const gateway = useSignedInGateway()

const requestWith = (apiKey: string) => ({ headers: { authorization: `Bearer ${apiKey}` } }) as FastifyRequest

describe('API key identification before the capture transaction', () => {
  it('remembers a key it found for the TTL only, and never remembers a key it did not find', async () => {
    let clock = 1_000_000
    const keys = new ApiKeyIdentifier(gateway.db.pool, { ttlMs: 5_000, now: () => clock })
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    expect(await keys.identify(requestWith(apiKey))).toMatchObject({ chatbotId: chatbot.id })

    const rotated = await gateway.app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbot.id}/rotate-key`,
      headers: { cookie: gateway.cookie },
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
    const keys = new ApiKeyIdentifier(gateway.db.pool, { maxEntries: 2 })
    const bots = [
      await createChatbot(gateway.app, gateway.cookie),
      await createChatbot(gateway.app, gateway.cookie),
      await createChatbot(gateway.app, gateway.cookie),
    ]
    for (const bot of bots) await keys.identify(requestWith(bot.apiKey))
    // The first key fell out of the cache: deleting its chatbot now shows on the next check.
    for (const bot of bots.slice(0, 2)) {
      const res = await gateway.app.inject({
        method: 'DELETE',
        url: `/api/v1/chatbots/${bot.chatbot.id}`,
        headers: { cookie: gateway.cookie },
      })
      expect(res.statusCode).toBeLessThan(300)
    }
    expect(await keys.identify(requestWith(bots[0]!.apiKey))).toBeNull()
    expect(await keys.identify(requestWith(bots[1]!.apiKey))).toMatchObject({
      chatbotId: bots[1]!.chatbot.id,
    })
  })
})
