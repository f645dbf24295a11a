import { describe, expect, it } from 'vitest'
import { ARGON2_PARAMS, createDummyHash, hashPassword, verifyPassword } from './passwords.ts'

describe('passwords', () => {
  it('meets the OWASP minimum for argon2id (m ≥ 19456 KiB, t ≥ 2, p ≥ 1)', () => {
    expect(ARGON2_PARAMS.memoryCost).toBeGreaterThanOrEqual(19_456)
    expect(ARGON2_PARAMS.timeCost).toBeGreaterThanOrEqual(2)
    expect(ARGON2_PARAMS.parallelism).toBeGreaterThanOrEqual(1)
  })

  it('verifies the password a hash was made from, and no other', async () => {
    // Given a hash of a password
    const hash = await hashPassword('correct horse battery staple')

    // Then it verifies that password only
    expect(hash.startsWith('$argon2id$')).toBe(true)
    expect(await verifyPassword(hash, 'correct horse battery staple')).toBe(true)
    expect(await verifyPassword(hash, 'correct horse battery stapl')).toBe(false)
  })

  it('answers false, not an exception, for a stored hash it cannot read', async () => {
    expect(await verifyPassword('not a hash', 'anything')).toBe(false)
  })

  it('makes a dummy hash no password is known to match', async () => {
    const dummy = await createDummyHash()
    expect(dummy.startsWith('$argon2id$')).toBe(true)
    expect(await verifyPassword(dummy, '')).toBe(false)
  })
})
