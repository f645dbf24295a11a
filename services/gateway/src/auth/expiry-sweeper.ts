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
  const timer = setInterval(() => {
    sweepExpired(opts.pool, opts.now(), opts.throttleWindowMs).catch((err: unknown) => {
      app.log.warn({ err }, 'sweeping expired sessions failed; will try again')
    })
  }, opts.intervalMs)
  // Housekeeping must never keep a process alive on its own.
  timer.unref()
  app.addHook('onClose', async () => clearInterval(timer))
}
