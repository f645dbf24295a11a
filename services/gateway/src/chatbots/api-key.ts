import { createHash, randomBytes } from 'node:crypto'

export const API_KEY_PATTERN = /^svc_live_[0-9a-f]{32}$/

export interface IssuedKey {
  /** The full key: returned once, in the create or rotate response, and never stored. */
  readonly key: string
  /** SHA-256 of the key: what the key index stores and capture looks up. */
  readonly hash: Buffer
  /** API.md: the first 13 characters and `…`, for recognising a key in listings. */
  readonly prefix: string
}

/** A new key: `svc_live_` and 32 lowercase hex digits from the CSPRNG (128 bits). */
export function issueApiKey(): IssuedKey {
  const key = `svc_live_${randomBytes(16).toString('hex')}`
  return { key, hash: hashApiKey(key), prefix: apiKeyPrefix(key) }
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}

export function apiKeyPrefix(key: string): string {
  return `${key.slice(0, 13)}…`
}
