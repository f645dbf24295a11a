import { createHash } from 'node:crypto'
import pg from 'pg'
import { explainPermissionDenied } from './privileges.ts'

/** The login role the query service connects as: a member of cas_reader (see migrations/0005). */
export const READER_LOGIN = 'cas_query'

/**
 * Makes sure the query service's login role exists and returns a connection string for it on the same
 * database. The role can read the read models only through row-level security: it is neither their
 * owner, nor a superuser, nor BYPASSRLS. Its password is derived from the administrative connection's
 * credentials, so every process given DATABASE_URL agrees on it without storing another secret.
 * Needs CREATEROLE on first use; give QUERY_DATABASE_URL instead where the service account lacks it.
 */
export async function ensureReaderLogin(adminUrl: string): Promise<string> {
  const password = readerPassword(adminUrl)
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const literal = client.escapeLiteral(password)
    const { rows } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [READER_LOGIN])
    try {
      await client.query(
        rows.length
          ? `ALTER ROLE ${READER_LOGIN} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD ${literal}`
          : `CREATE ROLE ${READER_LOGIN} LOGIN NOSUPERUSER NOBYPASSRLS INHERIT PASSWORD ${literal} IN ROLE cas_reader`,
      )
    } catch (err) {
      // Another process created it at the same moment, with the same password.
      if ((err as { code?: string }).code !== '42710' && (err as { code?: string }).code !== '23505')
        throw err
    }
    await client.query(`GRANT cas_reader TO ${READER_LOGIN}`)
  } catch (err) {
    throw explainPermissionDenied(err, 'reader login')
  } finally {
    await client.end()
  }
  return readerLoginUrl(adminUrl)
}

/** The reader role's connection string on the same server and database as `adminUrl`. */
export function readerLoginUrl(adminUrl: string): string {
  const reader = new URL(adminUrl)
  reader.username = READER_LOGIN
  reader.password = readerPassword(adminUrl)
  return reader.toString()
}

function readerPassword(adminUrl: string): string {
  const url = new URL(adminUrl)
  return createHash('sha256')
    .update(`${READER_LOGIN}\0${decodeURIComponent(url.username)}\0${decodeURIComponent(url.password)}`)
    .digest('base64url')
}
