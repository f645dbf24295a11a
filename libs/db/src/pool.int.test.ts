import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { createPool } from './pool.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db.drop()
})

/**
 * A named statement's plan over a table that grows: it is made (generic, after five executions) while the
 * table is one page, then the table grows to 30,000 rows, as on a fresh install's first burst.
 */
async function planAfterGrowth(planMaxAgeMs: number): Promise<string> {
  const table = `grows_${planMaxAgeMs}`
  await db.pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, v int)`)
  await db.pool.query(`INSERT INTO ${table} SELECT i, i FROM generate_series(1, 10) i`)
  // Not analyzed meanwhile by autovacuum, which would invalidate the plan itself.
  await db.pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`)
  await db.pool.query(`ANALYZE ${table}`)
  const pool = createPool(db.url, { max: 1, planMaxAgeMs })
  try {
    const lookup = (id: number) =>
      pool.query({ name: `lookup-${table}`, text: `SELECT v FROM ${table} WHERE id = $1`, values: [id] })
    for (let i = 1; i <= 10; i++) expect((await lookup(i)).rows).toEqual([{ v: i }])
    await db.pool.query(`INSERT INTO ${table} SELECT i, i FROM generate_series(11, 30000) i`)
    // The plans grow older than planMaxAgeMs: the clock moves on rather than the test waiting for it.
    vi.setSystemTime(Date.now() + planMaxAgeMs + 100)
    try {
      expect((await lookup(20_000)).rows).toEqual([{ v: 20_000 }])
    } finally {
      vi.useRealTimers()
    }
    // The plan the connection now uses for the statement (the one cached, if generic).
    const { rows } = await pool.query(`EXPLAIN (COSTS OFF) EXECUTE "lookup-${table}"(29999)`)
    return rows.map((r) => r['QUERY PLAN']).join('\n')
  } finally {
    await pool.end()
  }
}

describe('the pool', () => {
  it("plans a connection's statements again once its plans are older than planMaxAgeMs", async () => {
    expect(await planAfterGrowth(200)).toMatch(/Index (Only )?Scan/)
  })

  it('keeps a generic plan made over a near-empty table without it (what it guards against)', async () => {
    expect(await planAfterGrowth(0)).toMatch(/Seq Scan/)
  })
})
