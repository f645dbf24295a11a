import type pg from 'pg'

/** A pool, or one connection (for a statement that must run after a SET on that connection). */
type Queryable = pg.Pool | pg.ClientBase

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
  pool: Queryable,
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

interface ScanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Filter?: string
  'Index Cond'?: string
  'Recheck Cond'?: string
  Plans?: ScanNode[]
}

/**
 * The scans of `table` in `sql`'s plan (EXPLAIN, not run): their node type, index, and conditions.
 * A bitmap heap scan's index scan beneath it is listed on its own (it names the index, not the table).
 */
export async function scansOf(
  pool: Queryable,
  table: string,
  sql: string,
  params: readonly unknown[],
): Promise<{ type: string; index?: string; conditions: string }[]> {
  const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: ScanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, [
    ...params,
  ])
  const scans: { type: string; index?: string; conditions: string }[] = []
  const walk = (node: ScanNode, under?: string) => {
    const onTable = node['Relation Name'] === table || (under === table && node['Index Name'] !== undefined)
    if (onTable) {
      scans.push({
        type: node['Node Type'],
        ...(node['Index Name'] ? { index: node['Index Name'] } : {}),
        conditions: [node['Index Cond'], node['Recheck Cond'], node.Filter].filter(Boolean).join(' AND '),
      })
    }
    for (const p of node.Plans ?? []) walk(p, node['Relation Name'] ?? under)
  }
  walk(rows[0]!['QUERY PLAN'][0].Plan)
  return scans
}

interface LoopNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  Plans?: LoopNode[]
}

/**
 * Runs `sql` under EXPLAIN ANALYZE and lists each scan of a table: its table, node type and index, how
 * many times it ran (loops) and the rows it produced or filtered out over all of them. A lookup per row
 * of another set shows as one scan of many loops; a read of a set in one pass, as a scan of one loop.
 */
export async function scanLoops(
  pool: Queryable,
  sql: string,
  params: readonly unknown[],
): Promise<{ table: string; type: string; index?: string; loops: number; rows: number }[]> {
  const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: LoopNode }] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
    [...params],
  )
  const scans: { table: string; type: string; index?: string; loops: number; rows: number }[] = []
  const walk = (node: LoopNode) => {
    const table = node['Relation Name']
    if (table !== undefined) {
      scans.push({
        table,
        type: node['Node Type'],
        ...(node['Index Name'] ? { index: node['Index Name'] } : {}),
        loops: node['Actual Loops'],
        rows: Math.round(
          (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'],
        ),
      })
    }
    for (const p of node.Plans ?? []) walk(p)
  }
  walk(rows[0]!['QUERY PLAN'][0].Plan)
  return scans
}

interface BufferNode {
  'Actual Rows': number
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
}

/**
 * Runs `sql` under EXPLAIN (ANALYZE, BUFFERS): the shared blocks the whole statement read (hit in the
 * buffer cache or read in) and the rows its top node produced.
 */
export async function blocksRead(
  pool: Queryable,
  sql: string,
  params: readonly unknown[],
): Promise<{ read: number; claimed: number }> {
  const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: BufferNode }] }>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
    [...params],
  )
  const plan = rows[0]!['QUERY PLAN'][0].Plan
  return { read: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'], claimed: plan['Actual Rows'] }
}
