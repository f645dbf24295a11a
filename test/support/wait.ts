import type pg from 'pg'

/** Polls `check` until it returns a truthy value or the deadline passes (never a fixed sleep). */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000)
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value) return value as Exclude<T, false | null | undefined | 0 | ''>
      last = value
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'} (last: ${String(last)})`)
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25))
  }
}

/**
 * Waits until `count` sessions (those running a statement that starts with `statement`, when given) wait for a
 * lock `holder` holds: the point a test holds them at, before it lets them go on.
 */
export async function waitUntilBlockedBy(
  pool: pg.Pool,
  holder: pg.ClientBase,
  opts: { count?: number; statement?: string; what: string; timeoutMs?: number },
): Promise<void> {
  const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  const blocked = async () =>
    (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE $1 = ANY(pg_blocking_pids(pid)) AND ($2::text IS NULL OR starts_with(query, $2))`,
        [rows[0]!.pid, opts.statement ?? null],
      )
    ).rows[0]!.n
  await waitFor(
    async () => (opts.count === undefined ? (await blocked()) > 0 : (await blocked()) === opts.count),
    {
      what: opts.what,
      timeoutMs: opts.timeoutMs,
    },
  )
}
