import type pg from 'pg'
import type { StatementStat } from './results.ts'

/** The statements of this database with the most total time (pg_stat_statements), whitespace collapsed. */
export async function topStatements(pool: pg.Pool, limit = 15): Promise<StatementStat[]> {
  const { rows } = await pool.query<{
    query: string
    calls: string
    total: number
    mean: number
    rows: string
  }>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::text, total_exec_time AS total,
            mean_exec_time AS mean, rows::text
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT $1`,
    [limit],
  )
  return rows.map((r) => ({
    query: r.query,
    calls: Number(r.calls),
    totalMs: r.total,
    meanMs: r.mean,
    rows: Number(r.rows),
  }))
}
