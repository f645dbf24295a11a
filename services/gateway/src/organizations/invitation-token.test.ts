import { describe, expect, it } from 'vitest'
import { invitationLink, issueInvitation, parseInvitationToken, secretMatches } from './invitation-token.ts'

describe('invitation tokens', () => {
  it('are an id and a 256-bit secret, of which only a hash is kept', () => {
    // Given a new invitation
    const issued = issueInvitation()

    // Then its token names its id and a secret, and the hash is the secret's SHA-256, not the token
    const parsed = parseInvitationToken(issued.token)
    expect(parsed?.id).toBe(issued.id)
    expect(parsed?.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(issued.secretHash).toHaveLength(32)
    expect(issued.secretHash.toString('hex')).not.toContain(parsed?.secret)
    expect(secretMatches(parsed!.secret, issued.secretHash)).toBe(true)
  })

  it('are each different', () => {
    const tokens = new Set(Array.from({ length: 100 }, () => issueInvitation().token))
    expect(tokens.size).toBe(100)
  })

  it('refuse any other secret, including one differing in its last character', () => {
    const issued = issueInvitation()
    const { secret } = parseInvitationToken(issued.token)!
    const last = secret.at(-1) === 'A' ? 'B' : 'A'
    expect(secretMatches(`${secret.slice(0, -1)}${last}`, issued.secretHash)).toBe(false)
    expect(secretMatches(parseInvitationToken(issueInvitation().token)!.secret, issued.secretHash)).toBe(
      false,
    )
    expect(secretMatches(secret, Buffer.alloc(31))).toBe(false)
  })

  it.each([
    ['empty', ''],
    ['no dot', '0194a1c0-5e6f-7a8b-9c0d-1e2f3a4b5c6d'],
    ['not a uuid', `abc.${'a'.repeat(43)}`],
    ['a short secret', '0194a1c0-5e6f-7a8b-9c0d-1e2f3a4b5c6d.abc'],
    ['a secret with padding', `0194a1c0-5e6f-7a8b-9c0d-1e2f3a4b5c6d.${'a'.repeat(42)}=`],
  ])('do not parse from %s', (_, token) => {
    expect(parseInvitationToken(token)).toBeNull()
  })

  it('travel in the fragment of the join page', () => {
    expect(invitationLink('https://cas.example.com', 'id.secret')).toBe(
      'https://cas.example.com/join#id.secret',
    )
  })
})
