import type { FastifyRequest } from 'fastify'
import type pg from 'pg'
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

  it('looks a key up once for all the requests that arrive while it is being looked up', async () => {
    let clock = 1_000_000
    let queries = 0
    const counting = {
      query: (...args: Parameters<pg.Pool['query']>) => {
        queries++
        return gateway.db.pool.query(...args)
      },
    } as unknown as pg.Pool
    const keys = new ApiKeyIdentifier(counting, { ttlMs: 5_000, now: () => clock })
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const all = (key: string, n: number) =>
      Promise.all(Array.from({ length: n }, () => keys.identify(requestWith(key))))

    const first = await all(apiKey, 200)
    expect(queries).toBe(1)
    expect(new Set(first.map((identity) => identity?.chatbotId))).toEqual(new Set([chatbot.id]))
    await all(apiKey, 200)
    expect(queries).toBe(1)
    // The entry expires: the next burst is one query again, not one per request.
    clock += 5_001
    expect((await all(apiKey, 200)).every((identity) => identity?.chatbotId === chatbot.id)).toBe(true)
    expect(queries).toBe(2)

    // A key that is not found: one query for the burst, and not remembered after it.
    const unknown = `svc_live_${'0'.repeat(32)}`
    expect((await all(unknown, 100)).every((identity) => identity === null)).toBe(true)
    expect(queries).toBe(3)
    expect(await keys.identify(requestWith(unknown))).toBeNull()
    expect(queries).toBe(4)
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
