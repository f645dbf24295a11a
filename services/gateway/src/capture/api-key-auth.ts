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
 * Resolves a capture request's API key to its chatbot, once per request, before anything else is done
 * with the request (rate limit per key, 401 before the body is read). The lookup is by the key's SHA-256:
 * equality on a uniformly random hash, so how long it takes says nothing about how close a guess was.
 *
 * Keys found are remembered for `ttlMs` (5 s), so that a busy chatbot's captures do not each spend a
 * query on it. This check is only the early answer: the capture transaction checks the key again under
 * lock, so a key rotated or deleted within the last seconds still gets its 401 there. Keys not found are
 * never remembered: a new key works at once.
 *
 * Requests that arrive while a key is being looked up wait for that lookup rather than each starting
 * their own: when a busy key's entry expires, the hundreds of captures in flight for it would otherwise
 * all queue for the pool at once, long enough for load shedding to answer some of them 503.
 */
export class ApiKeyIdentifier {
  private readonly known = new Map<string, { chatbotId: string; until: number }>()
  private readonly inFlight = new Map<string, Promise<string | null>>()

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {}

  async identify(request: FastifyRequest): Promise<ApiKeyIdentity | null> {
    if (request.apiKeyIdentity !== undefined) return request.apiKeyIdentity
    const key = bearerApiKey(request.headers.authorization)
    let identity: ApiKeyIdentity | null = null
    if (key) {
      const keyHash = hashApiKey(key)
      const chatbotId = await this.lookUp(keyHash)
      if (chatbotId) identity = { chatbotId, keyHash }
    }
    request.apiKeyIdentity = identity
    return identity
  }

  private lookUp(keyHash: Buffer): Promise<string | null> {
    const now = this.opts.now?.() ?? Date.now()
    const cacheKey = keyHash.toString('base64')
    const known = this.known.get(cacheKey)
    if (known && known.until > now) return Promise.resolve(known.chatbotId)
    this.known.delete(cacheKey)
    let lookup = this.inFlight.get(cacheKey)
    if (!lookup) {
      lookup = this.query(keyHash, cacheKey, now).finally(() => this.inFlight.delete(cacheKey))
      this.inFlight.set(cacheKey, lookup)
    }
    return lookup
  }

  private async query(keyHash: Buffer, cacheKey: string, now: number): Promise<string | null> {
    const { rows } = await this.pool.query<{ chatbot_id: string }>(
      'SELECT chatbot_id FROM chatbot_api_keys WHERE key_hash = $1',
      [keyHash],
    )
    const chatbotId = rows[0]?.chatbot_id ?? null
    if (chatbotId) {
      // Oldest first out: a Map iterates in insertion order.
      if (this.known.size >= (this.opts.maxEntries ?? 10_000)) {
        this.known.delete(this.known.keys().next().value!)
      }
      this.known.set(cacheKey, { chatbotId, until: now + (this.opts.ttlMs ?? 5_000) })
    }
    return chatbotId
  }
}
