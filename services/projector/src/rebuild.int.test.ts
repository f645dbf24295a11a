/**
 * Regression (issue 18): the rebuild's shadow tables were created without the activity table's
 * (conversation_id, hour) index, which the projection reads through for every conversation of a batch;
 * each batch then scanned the whole activity table and the rebuild slowed down as the table grew. The
 * shadow tables keep their unique indexes and that one while they fill, and defer the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { rebuildReadModels } from './rebuild.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

describe('the rebuild’s shadow tables while they fill', () => {
  it('have the unique indexes and the ones the projection reads through, and no other', async () => {
    // When a rebuild stops before its indexing phase
    const run = await rebuildReadModels({
      pool: db.pool,
      keyring: testKeyring,
      eventLog: { kind: 'journal' },
      liveGroupId: 'projector-of-this-test',
      stopAfter: 0,
      progressIntervalMs: 10,
    })
    expect(run.swapped).toBe(false)
    // Then its activity table can be searched by conversation and hour
    const { rows } = await db.pool.query<{ table: string; index: string }>(
      `SELECT tablename AS "table", indexname AS "index" FROM pg_indexes
        WHERE schemaname = (SELECT schema_name FROM replay_runs WHERE id = $1)
          AND tablename IN ('rm_hourly_activity', 'rm_messages') ORDER BY 1, 2`,
      [run.runId],
    )
    expect(rows).toEqual([
      { table: 'rm_hourly_activity', index: 'rm_hourly_activity_conversation' },
      { table: 'rm_hourly_activity', index: 'rm_hourly_activity_pkey' },
      { table: 'rm_messages', index: 'rm_messages_pkey' },
    ])
  })
})
