import { randomBytes } from 'node:crypto'
import type pg from 'pg'

const SECRET_NAME = 'session_secret'

/**
 * The key that signs session cookies: SESSION_SECRET when configured, else one generated on first start
 * and kept in app_secrets, so that cookies stay valid across restarts and every instance signs alike.
 * Concurrent first starts race on the insert; the loser's value is discarded and all read the winner's.
 */
export async function loadSessionSecret(pool: pg.Pool, configured: string | undefined): Promise<string> {
  if (configured) return configured
  await pool.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    SECRET_NAME,
    randomBytes(48).toString('base64url'),
  ])
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', [
    SECRET_NAME,
  ])
  const secret = rows[0]?.value
  if (!secret) throw new Error('app_secrets lost the session secret it was just given')
  return secret
}
