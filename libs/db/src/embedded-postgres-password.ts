import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import pg from 'pg'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'

export const USER = 'postgres'
/**
 * The superuser's password of clusters initialised before each cluster had its own: loopback is open to
 * every local user and process, so a password anyone can read in this file was no protection. A cluster
 * still on it is given its own password on its next start (ensureOwnPassword).
 */
export const LEGACY_PASSWORD = 'postgres'
/**
 * The file beside the cluster holding its superuser's password: `<dataDir>.password` (with DATA_DIR,
 * `DATA_DIR/postgres.password`), mode 600, owned by the user running the service, never by the server's.
 */
export function passwordFileOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.password`
}

/** The cluster's password: read from its file, or 32 random bytes written there first (mode 600). */
export async function clusterPassword(dataDir: string): Promise<string> {
  const file = passwordFileOf(dataDir)
  const existing = readPassword(file)
  if (existing) return existing
  const password = randomBytes(32).toString('base64url')
  // Written whole or not at all: a crash here must not leave an empty or partial password behind.
  const partial = `${file}.${process.pid}.tmp`
  await writeFile(partial, `${password}\n`, { mode: 0o600 })
  await rename(partial, file)
  return password
}

export function readPassword(file: string): string | undefined {
  if (!existsSync(file)) return undefined
  return readFileSync(file, 'utf8').trim() || undefined
}

export function connectionUrl(password: string, port: number): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
}

/**
 * Checks that the cluster's superuser has the password of its file, and gives it that password when the
 * cluster still has the one every cluster had before (a cluster from an older version of the service):
 * after this the well-known password opens nothing.
 */
export async function ensureOwnPassword(
  url: string,
  port: number,
  dataDir: string,
  log: (line: string) => void,
): Promise<void> {
  const refused = await tryConnect(url)
  if (!refused) return
  if (refused.code !== '28P01') throw refused
  const legacy = new pg.Client({ connectionString: connectionUrl(LEGACY_PASSWORD, port) })
  try {
    await legacy.connect()
  } catch (err) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres refused the password in its password file (${(err as Error).message}): restore the file from the backup it was taken with, or set DATABASE_URL.`,
    )
  }
  try {
    const password = decodeURIComponent(new URL(url).password)
    await legacy.query(`ALTER ROLE ${USER} PASSWORD ${legacy.escapeLiteral(password)}`)
    log(
      `gave the embedded Postgres superuser its own password, kept in ${passwordFileOf(dataDir)}, in place of the one every cluster had`,
    )
  } finally {
    await legacy.end()
  }
}

async function tryConnect(url: string): Promise<(Error & { code?: string }) | undefined> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    return undefined
  } catch (err) {
    return err as Error & { code?: string }
  } finally {
    await client.end().catch(() => {})
  }
}
