import { Keyring, parseMasterKey } from '@cas/keyring'

/**
 * The master key of every test service, in-process or child process alike, so that what one seals the
 * others open. Test-only: a fixed key, never one to deploy.
 */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString('base64')

export const testKeyring = new Keyring(parseMasterKey(TEST_MASTER_KEY))
