import type pg from 'pg'

export interface ThrottlePolicy {
  /** Sign-in attempts allowed per email from one client address within a window. */
  readonly maxFailuresPerClient: number
  /** Sign-in attempts allowed per email from all addresses together within a window. */
  readonly maxFailuresPerEmail: number
  readonly windowMs: number
}

/**
 * Five attempts per (email, address) keep one guesser slow; counting per email alone with that limit let
 * anyone who knew an email lock its owner out (bench/FINDINGS.md, trial3). The email-wide limit is ten
 * times higher: a guesser rotating addresses gets at most 50 guesses per 15 minutes at one account, and
 * keeping its owner out takes ten addresses' failures every 15 minutes (each also under the per-address
 * rate limit). OWASP's Authentication Cheat Sheet weighs the same two: lockout against brute force, and
 * the denial of service a lockout hands to whoever can name the account.
 */
export const LOGIN_THROTTLE: ThrottlePolicy = {
  maxFailuresPerClient: 5,
  maxFailuresPerEmail: 50,
  windowMs: 15 * 60_000,
}

/** The row that counts an email's attempts from every address (a client address is never empty). */
const EVERY_CLIENT = ''

export type AttemptDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false
      readonly retryAfterSeconds: number
      /** Which limit refused it: this address's, or the email's over all addresses. */
      readonly limit: 'client' | 'email'
      readonly maxFailures: number
    }

/**
 * Counts a sign-in attempt for `email` from `client` (throttleClient of the request's address) before its password is
 * checked, and says whether it may go ahead. Counting first, in one atomic upsert per row, means
 * concurrent guesses cannot all slip past the check while each one's verification is still running. A
 * successful sign-in takes its address's count back (clearLoginFailures), so the counts are of failed or
 * unfinished attempts. A window that has run out starts over.
 *
 * An attempt this address may not make is not counted for the email: otherwise one address, refused,
 * could go on raising the email-wide count until the owner is locked out everywhere.
 */
export async function recordLoginAttempt(
  pool: pg.Pool,
  email: string,
  client: string,
  now: Date,
  policy: ThrottlePolicy = LOGIN_THROTTLE,
): Promise<AttemptDecision> {
  const fromClient = await countAttempt(pool, email, client, now, policy)
  if (fromClient.failures > policy.maxFailuresPerClient) {
    return refused(fromClient, now, policy, 'client', policy.maxFailuresPerClient)
  }
  const fromAll = await countAttempt(pool, email, EVERY_CLIENT, now, policy)
  if (fromAll.failures > policy.maxFailuresPerEmail) {
    return refused(fromAll, now, policy, 'email', policy.maxFailuresPerEmail)
  }
  return { allowed: true }
}

interface Count {
  readonly failures: number
  readonly window_started_at: Date
}

async function countAttempt(
  pool: pg.Pool,
  email: string,
  client: string,
  now: Date,
  policy: ThrottlePolicy,
): Promise<Count> {
  const windowStartedBefore = new Date(now.getTime() - policy.windowMs)
  const { rows } = await pool.query<Count>(
    `INSERT INTO login_failures AS f (email, client, failures, window_started_at) VALUES ($1, $2, 1, $3)
     ON CONFLICT (email, client) DO UPDATE SET
       failures = CASE WHEN f.window_started_at <= $4 THEN 1 ELSE f.failures + 1 END,
       window_started_at = CASE WHEN f.window_started_at <= $4 THEN $3 ELSE f.window_started_at END
     RETURNING failures, window_started_at`,
    [email, client, now, windowStartedBefore],
  )
  const row = rows[0]
  if (!row) throw new Error('login_failures upsert returned no row')
  return row
}

function refused(
  count: Count,
  now: Date,
  policy: ThrottlePolicy,
  limit: 'client' | 'email',
  maxFailures: number,
): AttemptDecision {
  const windowEndsAt = count.window_started_at.getTime() + policy.windowMs
  const retryAfterSeconds = Math.max(1, Math.ceil((windowEndsAt - now.getTime()) / 1000))
  return { allowed: false, retryAfterSeconds, limit, maxFailures }
}

/**
 * After a successful sign-in from `client`: forgets that address's count and takes the same number off
 * the email-wide one (every attempt this address was allowed was counted there too), so the owner's own
 * typos and sign-ins do not use up the email's limit, while other addresses' failures stay counted.
 */
export async function clearLoginFailures(pool: pg.Pool, email: string, client: string): Promise<void> {
  await pool.query(
    `WITH mine AS (DELETE FROM login_failures WHERE email = $1 AND client = $2 RETURNING failures),
     lowered AS (
       UPDATE login_failures f SET failures = f.failures - mine.failures FROM mine
       WHERE f.email = $1 AND f.client = $3 AND f.failures > mine.failures
     )
     DELETE FROM login_failures f USING mine
     WHERE f.email = $1 AND f.client = $3 AND f.failures <= mine.failures`,
    [email, client, EVERY_CLIENT],
  )
}
