import { createHash } from 'node:crypto'
import type { OrganizationRole } from '@cas/events'
import type { SessionStore } from '@fastify/session'
import type { Session } from 'fastify'
import type pg from 'pg'

declare module 'fastify' {
  interface Session {
    userId?: string
    /** The organization the person is working in; null when they belong to none. */
    orgId?: string | null
    /** Their role there, read from memberships with every load and never stored in the session. */
    role?: OrganizationRole | null
  }
}

export interface SessionPolicy {
  /** A session unused this long expires. */
  readonly idleMs: number
  /** A session expires this long after sign-in, however active. */
  readonly absoluteMs: number
  /** last_seen_at is rewritten at most this often, so a busy dashboard doesn't write on every request. */
  readonly refreshMs: number
}

/** Rows are keyed by a hash of the session id, so the table alone never yields a usable cookie. */
export function sessionKey(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex')
}

interface SessionRow {
  user_id: string
  org_id: string | null
  role: OrganizationRole | null
  data: Record<string, unknown>
  created_at: Date
  last_seen_at: Date
}

/**
 * @fastify/session's store on the `sessions` table. Expiry is decided here from the injected clock, not
 * from the cookie: a client can keep a cookie as long as it likes, the row decides. Only signed-in
 * sessions are stored; an anonymous one carries nothing worth a row.
 */
export class PgSessionStore implements SessionStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => Date,
    private readonly policy: SessionPolicy,
  ) {}

  get(sessionId: string, callback: (err: unknown, session?: Session | null) => void): void {
    this.load(sessionId).then(
      (session) => callback(null, session),
      (err) => callback(err),
    )
  }

  set(sessionId: string, session: Session, callback: (err?: unknown) => void): void {
    this.save(sessionId, session).then(() => callback(), callback)
  }

  destroy(sessionId: string, callback: (err?: unknown) => void): void {
    this.pool
      .query('DELETE FROM sessions WHERE sid = $1', [sessionKey(sessionId)])
      .then(() => callback(), callback)
  }

  private async load(sessionId: string): Promise<Session | null> {
    const sid = sessionKey(sessionId)
    // The role comes from the membership, read with the session at every request: a person removed from
    // the organization, or given a lower role, is so from their very next request in every session.
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT s.user_id, s.org_id, m.role, s.data, s.created_at, s.last_seen_at
         FROM sessions s LEFT JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id
        WHERE s.sid = $1`,
      [sid],
    )
    const row = rows[0]
    if (!row) return null
    const now = this.now()
    const expiresAt = this.expiresAt(row.created_at, row.last_seen_at)
    if (expiresAt <= now) {
      await this.pool.query('DELETE FROM sessions WHERE sid = $1', [sid])
      return null
    }
    if (now.getTime() - row.last_seen_at.getTime() >= this.policy.refreshMs) {
      await this.pool.query('UPDATE sessions SET last_seen_at = $2, expires_at = $3 WHERE sid = $1', [
        sid,
        now,
        this.expiresAt(row.created_at, now),
      ])
    }
    // @fastify/session copies these keys onto the request's session (the cookie options come from config).
    const member = row.org_id !== null && row.role !== null
    return {
      ...row.data,
      userId: row.user_id,
      orgId: member ? row.org_id : null,
      role: member ? row.role : null,
    } as Session
  }

  private async save(sessionId: string, session: Session): Promise<void> {
    const { cookie: _cookie, userId, orgId, role: _role, ...data } = session
    if (!userId) return
    const now = this.now()
    // Upsert keeps the original sign-in time, from which the absolute expiry counts.
    await this.pool.query(
      `INSERT INTO sessions (sid, user_id, org_id, data, created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $5, $6)
       ON CONFLICT (sid) DO UPDATE SET
         user_id = EXCLUDED.user_id,
         org_id = EXCLUDED.org_id,
         data = EXCLUDED.data,
         last_seen_at = EXCLUDED.last_seen_at,
         expires_at = LEAST(EXCLUDED.expires_at, sessions.created_at + make_interval(secs => $7))`,
      [
        sessionKey(sessionId),
        userId,
        orgId ?? null,
        JSON.stringify(data),
        now,
        this.expiresAt(now, now),
        this.policy.absoluteMs / 1000,
      ],
    )
  }

  private expiresAt(signedInAt: Date, lastSeenAt: Date): Date {
    return new Date(
      Math.min(lastSeenAt.getTime() + this.policy.idleMs, signedInAt.getTime() + this.policy.absoluteMs),
    )
  }
}

/** Signs a user out everywhere (password change, removal, suspected compromise). Returns how many ended. */
export async function revokeUserSessions(pool: pg.Pool, userId: string): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM sessions WHERE user_id = $1', [userId])
  return rowCount ?? 0
}
