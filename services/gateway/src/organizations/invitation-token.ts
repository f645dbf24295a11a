import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { isUuid } from '@cas/views'

export interface IssuedInvitation {
  readonly id: string
  /** `<id>.<secret>`: what the link carries, shown once to the inviter (and emailed); never stored. */
  readonly token: string
  /** SHA-256 of the secret: all that is stored. */
  readonly secretHash: Buffer
}

const SECRET = /^[A-Za-z0-9_-]{43}$/

/** A new invitation id and its token: 256 random bits from the CSPRNG behind the id. */
export function issueInvitation(): IssuedInvitation {
  const id = randomUUID()
  const secret = randomBytes(32).toString('base64url')
  return { id, token: `${id}.${secret}`, secretHash: hashSecret(secret) }
}

/** The invitation id and secret a token names, or null when it is not shaped like one of ours. */
export function parseInvitationToken(token: string): { id: string; secret: string } | null {
  const dot = token.indexOf('.')
  if (dot < 0) return null
  const id = token.slice(0, dot)
  const secret = token.slice(dot + 1)
  if (!isUuid(id) || !SECRET.test(secret)) return null
  return { id: id.toLowerCase(), secret }
}

/**
 * Whether a presented secret is the one whose hash is stored. The row was found by the id, which is not
 * secret; the secret itself is compared in constant time (as hashes of equal length), so the time taken
 * tells nothing about how much of it was right.
 */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const presented = hashSecret(secret)
  return storedHash.length === presented.length && timingSafeEqual(presented, storedHash)
}

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest()
}

/** The dashboard page that accepts an invitation; the token rides in the fragment, which browsers never send. */
export function invitationLink(origin: string, token: string): string {
  return `${origin}/join#${token}`
}
