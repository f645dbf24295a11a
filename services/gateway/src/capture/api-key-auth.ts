import type { FastifyRequest } from 'fastify'
import type pg from 'pg'
import { API_KEY_PATTERN, hashApiKey } from '../chatbots/api-key.ts'

export interface ApiKeyIdentity {
  readonly chatbotId: string
  readonly keyHash: Buffer
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the capture request's API key is checked: the chatbot it belongs to, or null. */
    apiKeyIdentity?: ApiKeyIdentity | null
  }
}

/** The key in `Authorization: Bearer svc_live_…`, or null when the header is missing or malformed. */
export function bearerApiKey(header: string | undefined): string | null {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i)
  const key = match?.[1]
  return key && API_KEY_PATTERN.test(key) ? key : null
}

/**
 * Resolves the request's API key to its chatbot, once per request. The lookup is by the key's SHA-256:
 * equality on a uniformly random hash, so how long it takes says nothing about how close a guess was.
 */
export async function identifyApiKey(pool: pg.Pool, request: FastifyRequest): Promise<ApiKeyIdentity | null> {
  if (request.apiKeyIdentity !== undefined) return request.apiKeyIdentity
  const key = bearerApiKey(request.headers.authorization)
  let identity: ApiKeyIdentity | null = null
  if (key) {
    const keyHash = hashApiKey(key)
    const { rows } = await pool.query<{ chatbot_id: string }>(
      'SELECT chatbot_id FROM chatbot_api_keys WHERE key_hash = $1',
      [keyHash],
    )
    if (rows[0]) identity = { chatbotId: rows[0].chatbot_id, keyHash }
  }
  request.apiKeyIdentity = identity
  return identity
}
