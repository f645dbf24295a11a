import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'

export interface CreatedChatbot {
  readonly chatbot: { id: string; name: string; api_key_prefix: string; settings: Record<string, unknown> }
  readonly apiKey: string
}

/** Creates a chatbot through the API as the signed-in user of `cookie`. */
export async function createChatbot(
  app: FastifyInstance,
  cookie: string,
  body: Record<string, unknown> = { name: 'Support bot' },
): Promise<CreatedChatbot> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/chatbots',
    headers: { cookie },
    payload: body,
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

export function postCapture(
  app: FastifyInstance,
  apiKey: string | undefined,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/api/v1/capture',
    headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers },
    payload: payload as Record<string, unknown>,
  })
}

/** A capture body with `n` messages m-1..m-n (or the given ids). */
export function captureBody(conversationId: string, ids: readonly string[] | number = 2, extra = {}) {
  const list = typeof ids === 'number' ? Array.from({ length: ids }, (_, i) => `m-${i + 1}`) : ids
  return {
    conversationId,
    messages: list.map((id, i) => ({
      id,
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${id}`,
      sentAt: '2026-11-20T10:00:00.000Z',
    })),
    ...extra,
  }
}
