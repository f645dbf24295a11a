import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { KEY_BYTES, Keyring } from './keyring.ts'

export const MASTER_KEY_FILE = 'master.key'

/**
 * The master key: ENCRYPTION_MASTER_KEY (32 bytes, base64 or base64url) when configured; otherwise
 * DATA_DIR/master.key, generated on first start (mode 0600). Every service that reads or writes events
 * must have the same one; losing it makes every sealed event unreadable.
 */
export function loadKeyring(config: { ENCRYPTION_MASTER_KEY?: string | undefined; DATA_DIR: string }): {
  keyring: Keyring
  source: 'config' | 'file' | 'generated'
  file?: string
} {
  if (config.ENCRYPTION_MASTER_KEY) {
    return { keyring: new Keyring(parseMasterKey(config.ENCRYPTION_MASTER_KEY)), source: 'config' }
  }
  const file = path.join(config.DATA_DIR, MASTER_KEY_FILE)
  try {
    return { keyring: new Keyring(parseMasterKey(readFileSync(file, 'utf8').trim())), source: 'file', file }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  mkdirSync(config.DATA_DIR, { recursive: true })
  try {
    // `wx`: two processes starting at once must not each write their own key.
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return {
    keyring: new Keyring(parseMasterKey(readFileSync(file, 'utf8').trim())),
    source: 'generated',
    file,
  }
}

export function parseMasterKey(text: string): Buffer {
  const key = Buffer.from(text.trim().replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (key.length !== KEY_BYTES) {
    throw new Error(`the master key must be ${KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`)`)
  }
  return key
}
