import type pg from 'pg'

interface PlanNode {
  'Relation Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  Plans?: PlanNode[]
}

/**
 * Runs `sql` under EXPLAIN ANALYZE and counts the rows its scans of `table` produced or filtered out,
 * over all their loops: how much of the table a statement reads, whichever plan the planner chose.
 * Approximate for a scan run in many loops (EXPLAIN gives its rows per loop, rounded to two decimals):
 * compare it with bounds far apart, such as one row per key against the table's size.
 */
export async function rowsRead(
  pool: pg.Pool,
  table: string,
  sql: string,
  params: readonly unknown[],
): Promise<number> {
  const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
    [...params],
  )
  const count = (node: PlanNode): number =>
    (node['Relation Name'] === table
      ? Math.round((node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'])
      : 0) + (node.Plans ?? []).reduce((sum, p) => sum + count(p), 0)
  return count(rows[0]!['QUERY PLAN'][0].Plan)
}
