import { backgroundLoop } from '@cas/db'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'

/**
 * Deletes sessions past their expiry and throttle windows that have run out. Expired rows are already
 * refused when read; this only keeps the tables from growing with sessions nobody comes back to.
 */
export async function sweepExpired(
  pool: pg.Pool,
  now: Date,
  throttleWindowMs: number,
): Promise<{ sessions: number; loginFailures: number }> {
  const sessions = await pool.query('DELETE FROM sessions WHERE expires_at <= $1', [now])
  const failures = await pool.query('DELETE FROM login_failures WHERE window_started_at <= $1', [
    new Date(now.getTime() - throttleWindowMs),
  ])
  return { sessions: sessions.rowCount ?? 0, loginFailures: failures.rowCount ?? 0 }
}

/** Runs sweepExpired every `intervalMs` until the app closes. Every instance may run it; deletes commute. */
export function startExpirySweeper(
  app: FastifyInstance,
  opts: { pool: pg.Pool; now: () => Date; throttleWindowMs: number; intervalMs: number },
): void {
  const loop = backgroundLoop({
    intervalMs: opts.intervalMs,
    firstRunAfterInterval: true,
    // Housekeeping must never keep a process alive on its own.
    unref: true,
    run: async () => void (await sweepExpired(opts.pool, opts.now(), opts.throttleWindowMs)),
    onError: (err) => app.log.warn({ err }, 'sweeping expired sessions failed; will try again'),
  })
  loop.start()
  app.addHook('onClose', () => loop.stop())
}
