import pg from 'pg'

export interface PoolOptions {
  max?: number
  applicationName?: string
}

export function createPool(databaseUrl: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'conversation-analytics',
  })
  // An idle client losing its connection (server restart) must not crash the process; the pool drops it.
  pool.on('error', () => {})
  return pool
}

/** Replaces the database name in a connection string. */
export function withDatabase(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl)
  url.pathname = `/${database}`
  return url.toString()
}
