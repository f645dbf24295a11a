import { randomBytes } from 'node:crypto'
import { Keyring, parseMasterKey } from '@cas/keyring'

/** One master key per bench run, shared by the in-process pieces and the service processes it starts. */
export const BENCH_MASTER_KEY = randomBytes(32).toString('base64')

export const benchKeyring = new Keyring(parseMasterKey(BENCH_MASTER_KEY))
