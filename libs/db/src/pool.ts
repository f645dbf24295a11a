import pg from 'pg'

export interface PoolOptions {
  max?: number
  applicationName?: string
  /**
   * How long a query waits for a connection (a free pooled one, or a new one being opened) before it
   * fails with a "timeout exceeded when trying to connect" error (isDatabaseUnavailable). 0 (the
   * default) waits forever; the services set it from DATABASE_CONNECT_TIMEOUT_MS.
   */
  connectionTimeoutMs?: number
  /**
   * How old a connection's cached query plans may get, in ms, before it plans its statements again
   * (default 5,000; 0 never). See `replanAgedConnections`.
   */
  planMaxAgeMs?: number
}

/** The default of `PoolOptions.planMaxAgeMs`. */
const PLAN_MAX_AGE_MS = 5_000

export function createPool(databaseUrl: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'conversation-analytics',
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? 0,
  })
  // An idle client losing its connection (server restart) must not crash the process; the pool drops it.
  pool.on('error', () => {})
  // Nor a client checked out but between two queries when the server goes away (the pool stops listening
  // to its errors while it is lent out): its next query fails instead, and whoever holds it releases it
  // as broken. Without this, stopping Postgres crashed the process with an unhandled 'error' event.
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  replanAgedConnections(pool, opts.planMaxAgeMs ?? PLAN_MAX_AGE_MS)
  return pool
}

/**
 * Has a connection plan its prepared statements again (`DISCARD PLANS`, sent ahead of the borrower's
 * first query) when it is borrowed and last did so more than `maxAgeMs` ago.
 *
 * Why: the hot statements are named (prepared once per connection), and after five executions Postgres
 * keeps one generic plan for a statement, made with the table sizes of that moment, until something
 * invalidates it (DDL, or an ANALYZE of a table it reads, which autovacuum runs on its own schedule:
 * about a minute at best). A plan made while a table was nearly empty (a fresh install, a rebuild, the
 * first seconds of a burst) scans it sequentially where it should use an index, and each execution then
 * costs more as the table grows, until the projector falls ever further behind (the measurements:
 * bench/FINDINGS.md, "From source comments"). Planning again costs one round trip and one planning per statement per connection
 * and period; forcing a custom plan at every execution instead cost 0.5 to 1 ms per execution.
 */
function replanAgedConnections(pool: pg.Pool, maxAgeMs: number): void {
  if (maxAgeMs <= 0) return
  const plannedAt = new WeakMap<pg.PoolClient, number>()
  pool.on('acquire', (client) => {
    const now = Date.now()
    const at = plannedAt.get(client)
    if (at !== undefined && now - at < maxAgeMs) return
    plannedAt.set(client, now)
    // A new connection has no plans yet. Otherwise the client queues this before the borrower's queries;
    // a failure here (the connection lost) fails the borrower's next query too, which handles it.
    if (at !== undefined) client.query('DISCARD PLANS').catch(() => {})
  })
}

/** Replaces the database name in a connection string. */
export function withDatabase(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl)
  url.pathname = `/${database}`
  return url.toString()
}
