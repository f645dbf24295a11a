import { randomBytes } from 'node:crypto'
import { type Algorithm, hash, verify } from '@node-rs/argon2'

/**
 * argon2id at OWASP's minimum recommended cost (m = 19 MiB, t = 2, p = 1): enough to make offline
 * guessing expensive while a sign-in stays around tens of milliseconds on one core. The binding is
 * @node-rs/argon2 (prebuilt per platform, no install script); the `argon2` package's prebuilt Linux
 * binary crashed on our CI machines.
 */
export const ARGON2_PARAMS = {
  // Algorithm.Argon2id, a const enum that verbatimModuleSyntax cannot import.
  algorithm: 2 as Algorithm,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const

/** Bounds the hashing cost an anonymous caller can make us pay (argon2 reads the whole input). */
export const PASSWORD_MAX_LENGTH = 1024
export const PASSWORD_MIN_LENGTH = 10

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS)
}

/** False for a wrong password and for a stored hash argon2 cannot read (never an exception to leak). */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password)
  } catch {
    return false
  }
}

/**
 * A hash of a random password, verified against when the email is unknown so that an unknown email costs
 * the same argon2 work as a wrong password and response timing doesn't reveal which accounts exist.
 */
export function createDummyHash(): Promise<string> {
  return hashPassword(randomBytes(32).toString('base64url'))
}
