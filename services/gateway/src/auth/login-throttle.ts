import type pg from 'pg'

export interface ThrottlePolicy {
  /** Sign-in attempts allowed per email within a window before further ones are refused. */
  readonly maxFailures: number
  readonly windowMs: number
}

export const LOGIN_THROTTLE: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * 60_000 }

export type AttemptDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number }

/**
 * Counts a sign-in attempt for `email` before its password is checked, and says whether it may go ahead.
 * Counting first, in one atomic upsert, means concurrent guesses cannot all slip past the check while
 * each one's verification is still running. A successful sign-in clears the count (clearLoginFailures),
 * so the count is of failed or unfinished attempts. A window that has run out starts over.
 */
export async function recordLoginAttempt(
  pool: pg.Pool,
  email: string,
  now: Date,
  policy: ThrottlePolicy = LOGIN_THROTTLE,
): Promise<AttemptDecision> {
  const windowStartedBefore = new Date(now.getTime() - policy.windowMs)
  const { rows } = await pool.query<{ failures: number; window_started_at: Date }>(
    `INSERT INTO login_failures AS f (email, failures, window_started_at) VALUES ($1, 1, $2)
     ON CONFLICT (email) DO UPDATE SET
       failures = CASE WHEN f.window_started_at <= $3 THEN 1 ELSE f.failures + 1 END,
       window_started_at = CASE WHEN f.window_started_at <= $3 THEN $2 ELSE f.window_started_at END
     RETURNING failures, window_started_at`,
    [email, now, windowStartedBefore],
  )
  const row = rows[0]
  if (!row) throw new Error('login_failures upsert returned no row')
  if (row.failures <= policy.maxFailures) return { allowed: true }
  const windowEndsAt = row.window_started_at.getTime() + policy.windowMs
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEndsAt - now.getTime()) / 1000)) }
}

export async function clearLoginFailures(pool: pg.Pool, email: string): Promise<void> {
  await pool.query('DELETE FROM login_failures WHERE email = $1', [email])
}
