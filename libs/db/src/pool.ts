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
}

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
  return pool
}

/** Replaces the database name in a connection string. */
export function withDatabase(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl)
  url.pathname = `/${database}`
  return url.toString()
}
