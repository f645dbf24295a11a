/**
 * Regression (issue 18): the rebuild's shadow tables were created without the activity table's
 * (conversation_id, hour) index, which the projection reads through for every conversation of a batch;
 * each batch then scanned the whole activity table and the rebuild slowed down as the table grew. The
 * shadow tables keep their unique indexes and that one while they fill, and defer the rest.
 */
import { JOURNAL_TOPIC } from '@cas/eventlog'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { runReplayCli } from '../../../test/support/replay-cli.ts'
import { waitUntilBlockedBy } from '../../../test/support/wait.ts'
import { type AbandonedRun, READ_MODEL_TABLES, RebuildStoppedError, rebuildReadModels } from './rebuild.ts'

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
    const run = await interruptedRun(db)
    // Then its activity table can be searched by conversation and hour
    const { rows } = await db.pool.query<{ table: string; index: string }>(
      `SELECT tablename AS "table", indexname AS "index" FROM pg_indexes
        WHERE schemaname = $1 AND tablename IN ('rm_hourly_activity', 'rm_messages') ORDER BY 1, 2`,
      [run.schema],
    )
    expect(rows).toEqual([
      { table: 'rm_hourly_activity', index: 'rm_hourly_activity_conversation' },
      { table: 'rm_hourly_activity', index: 'rm_hourly_activity_pkey' },
      { table: 'rm_messages', index: 'rm_messages_pkey' },
    ])
  })
})

describe('the swap', () => {
  it('keeps every index and constraint of the live tables under its name', async () => {
    const database = await createTestDatabase()
    try {
      // Given the live tables' indexes and constraints, as the migrations named them
      const named = async () =>
        (
          await database.pool.query<{ table: string; name: string; definition: string }>(
            `SELECT t.relname AS "table", i.relname AS name, pg_get_indexdef(i.oid) AS definition
               FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
              WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1::text[])
             UNION ALL
             SELECT t.relname, c.conname, pg_get_constraintdef(c.oid)
               FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
              WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1::text[])
              ORDER BY 1, 2, 3`,
            [READ_MODEL_TABLES],
          )
        ).rows
      const before = await named()
      expect(before.length).toBeGreaterThan(2 * READ_MODEL_TABLES.length)
      // When a rebuild swaps its tables in
      const { result } = await rebuildOn(database)
      expect(result.swapped).toBe(true)
      // Then the live tables have the same ones under the same names
      expect(await named()).toEqual(before)
    } finally {
      await database.drop()
    }
  })
})

/** A rebuild of the journal on `database` (`stopAfter`: stopped there); its result and the runs it abandoned. */
async function rebuildOn(database: TestDatabase, opts: { stopAfter?: number } = {}) {
  const abandoned: AbandonedRun[] = []
  const result = await rebuildReadModels({
    pool: database.pool,
    keyring: testKeyring,
    eventLog: { kind: 'journal' },
    liveGroupId: 'projector-of-this-test',
    progressIntervalMs: 10,
    onAbandoned: (run) => abandoned.push(run),
    ...opts,
  })
  return { result, abandoned }
}

/** A rebuild on `database` stopped before its indexing phase and its swap; its run's id and schema. */
async function interruptedRun(database: TestDatabase) {
  const { result: run } = await rebuildOn(database, { stopAfter: 0 })
  expect(run.swapped).toBe(false)
  const { rows } = await database.pool.query<{ schema_name: string }>(
    'SELECT schema_name FROM replay_runs WHERE id = $1',
    [run.runId],
  )
  return { runId: run.runId, schema: rows[0]!.schema_name }
}

/**
 * A run left stopped whose shadow `table` has a constraint under its old name (`from`), the live table's
 * renamed `to` by a migration since (done here the other way round: the shadow's renamed back), and the
 * rebuild run again.
 */
async function rebuildAfterRenameSince(
  database: TestDatabase,
  table: string,
  { from, to }: { from: string; to: string },
) {
  const left = await interruptedRun(database)
  await database.pool.query(`ALTER TABLE ${left.schema}.${table} RENAME CONSTRAINT ${to} TO ${from}`)
  return { left, ...(await rebuildOn(database)) }
}

async function runStatuses(database: TestDatabase) {
  const { rows } = await database.pool.query<{ id: string; status: string }>(
    'SELECT id, status FROM replay_runs ORDER BY started_at, id',
  )
  return rows
}

describe('a rebuild left running by an older version', () => {
  it('is abandoned, saying why in `npm run replay`’s output, when a migration since added a column', async () => {
    const database = await createTestDatabase()
    try {
      // Given a run begun before migration 0059 added rm_messages.language
      const left = await interruptedRun(database)
      await database.pool.query(`ALTER TABLE ${left.schema}.rm_messages DROP COLUMN language`)
      // When the operator runs the rebuild again
      const cli = runReplayCli(['read-models'], database.url)
      // Then it says which run it abandons and why, and finishes a new one
      expect(cli.status, cli.stderr).toBe(0)
      expect(cli.stdout).toContain(`abandoned rebuild ${left.runId}, starting afresh: `)
      expect(cli.stdout).toContain('rm_messages.language missing')
      expect(cli.stdout).toMatch(/^finished rebuild \S+: 0 events applied, read models swapped in$/m)
      const runs = await runStatuses(database)
      expect(runs.map((r) => [r.id === left.runId, r.status])).toEqual([
        [true, 'abandoned'],
        [false, 'done'],
      ])
      const { rows } = await database.pool.query('SELECT nspname FROM pg_namespace WHERE nspname = $1', [
        left.schema,
      ])
      expect(rows).toEqual([])
    } finally {
      await database.drop()
    }
  })

  // Regression (review8): only columns and unique indexes were compared, so a run begun before a migration
  // that changed only a check constraint (as 0036 widened rm_reanalysis's statuses, beside a new column) was
  // resumed, and its swap put the old constraint back on the live table.
  it('is abandoned when a migration since changed a check constraint', async () => {
    const database = await createTestDatabase()
    try {
      // Given a run begun before migration 0036 let rm_reanalysis hold a failed re-analysis
      const left = await interruptedRun(database)
      await database.pool.query(
        `ALTER TABLE ${left.schema}.rm_reanalysis DROP CONSTRAINT rm_reanalysis_status_check;
         ALTER TABLE ${left.schema}.rm_reanalysis ADD CONSTRAINT rm_reanalysis_status_check
           CHECK (status IN ('running', 'finished'))`,
      )
      // When the rebuild is run again
      const { result, abandoned } = await rebuildOn(database)
      // Then it abandons that run, saying which constraint differs, and swaps in a new one's tables
      expect(abandoned).toEqual([
        { runId: left.runId, reason: expect.stringContaining('rm_reanalysis: check constraint') },
      ])
      expect(result).toMatchObject({ resumed: false, swapped: true })
      const { rows } = await database.pool.query(
        `SELECT pg_get_constraintdef(oid) LIKE '%failed%' AS failed FROM pg_constraint
          WHERE conrelid = 'public.rm_reanalysis'::regclass AND conname = 'rm_reanalysis_status_check'`,
      )
      expect(rows).toEqual([{ failed: true }])
    } finally {
      await database.drop()
    }
  })

  // Regression (rebuild3): check constraints were compared by their definition alone, so a run begun before a
  // migration renamed one was resumed, and its swap brought the constraint back under its old name.
  it('is abandoned when a migration since renamed a check constraint', async () => {
    const database = await createTestDatabase()
    try {
      // Given a run begun before a migration renamed rm_reanalysis's status check, when the rebuild is run again
      const { left, result, abandoned } = await rebuildAfterRenameSince(database, 'rm_reanalysis', {
        from: 'rm_reanalysis_status',
        to: 'rm_reanalysis_status_check',
      })
      // Then it abandons that run, naming the constraint, and the live table keeps the constraint's name
      expect(abandoned).toEqual([
        {
          runId: left.runId,
          reason: expect.stringContaining(
            'rm_reanalysis: check constraint rm_reanalysis_status_check missing',
          ),
        },
      ])
      expect(result).toMatchObject({ resumed: false, swapped: true })
      const { rows } = await database.pool.query(
        "SELECT conname FROM pg_constraint WHERE conrelid = 'public.rm_reanalysis'::regclass AND contype = 'c' ORDER BY conname",
      )
      expect(rows.map((r) => r.conname)).toContain('rm_reanalysis_status_check')
      expect(rows.map((r) => r.conname)).not.toContain('rm_reanalysis_status')
    } finally {
      await database.drop()
    }
  })

  // Regression (review8): the indexing phase kept any valid index of the right name, so a run resumed after
  // a migration that redefined an index under its name (as 0013 did rm_hourly_activity_conversation) swapped
  // the older definition in, and one a migration had dropped came back with the swap.
  // A check constraint a migration adds NOT VALID (not to scan a large live table) is copied valid onto the
  // shadow table: the same constraint, not a reason to start again.
  // Regression (rebuild2): the resume check compared unique indexes regardless of their names and the indexing
  // phase by name, so a run begun before a migration renamed a primary key was resumed, and its indexing
  // phase then failed for ever adding the live table's key beside the one it had ('multiple primary keys').
  it('is abandoned when a migration since renamed a primary key', async () => {
    const database = await createTestDatabase()
    try {
      // Given a run begun before a migration renamed rm_hourly_activity's primary key, when the rebuild is run again
      const { left, result, abandoned } = await rebuildAfterRenameSince(database, 'rm_hourly_activity', {
        from: 'rm_activity_pkey',
        to: 'rm_hourly_activity_pkey',
      })
      // Then it abandons that run, naming the key, and swaps in a new one's tables
      expect(abandoned).toEqual([
        { runId: left.runId, reason: expect.stringContaining('rm_hourly_activity: unique index') },
      ])
      expect(result).toMatchObject({ resumed: false, swapped: true })
      const { rows } = await database.pool.query(
        "SELECT conname FROM pg_constraint WHERE conrelid = 'public.rm_hourly_activity'::regclass AND contype = 'p'",
      )
      expect(rows).toEqual([{ conname: 'rm_hourly_activity_pkey' }])
    } finally {
      await database.drop()
    }
  })

  it('is resumed when a live check constraint is NOT VALID and its shadow copy is valid', async () => {
    const database = await createTestDatabase()
    try {
      await database.pool.query(
        `ALTER TABLE public.rm_reanalysis ADD CONSTRAINT rm_reanalysis_reason_length
           CHECK (reason IS NULL OR length(reason) < 100000) NOT VALID`,
      )
      const left = await interruptedRun(database)
      const { result, abandoned } = await rebuildOn(database)
      expect(abandoned).toEqual([])
      expect(result).toMatchObject({ runId: left.runId, resumed: true, swapped: true })
    } finally {
      await database.drop()
    }
  })

  it('is resumed, building again an index a migration since redefined and dropping one it dropped', async () => {
    const database = await createTestDatabase()
    try {
      const indexDefinition = async (schema: string) => {
        const { rows } = await database.pool.query<{ definition: string }>(
          `SELECT replace(indexdef, $1 || '.', '') AS definition FROM pg_indexes
            WHERE schemaname = $1 AND indexname = 'rm_hourly_activity_conversation'`,
          [schema],
        )
        return rows.map((r) => r.definition)
      }
      const current = await indexDefinition('public')
      // Given a run begun before migration 0013 made the index (conversation_id, hour)
      const left = await interruptedRun(database)
      await database.pool.query(
        `DROP INDEX ${left.schema}.rm_hourly_activity_conversation;
         CREATE INDEX rm_hourly_activity_conversation ON ${left.schema}.rm_hourly_activity (conversation_id);
         CREATE INDEX rm_hourly_activity_retired ON ${left.schema}.rm_hourly_activity (hour)`,
      )
      // When the rebuild is run again
      const { result, abandoned } = await rebuildOn(database)
      // Then it resumes that run, and the live table has this version's index
      expect(abandoned).toEqual([])
      expect(result).toMatchObject({ runId: left.runId, resumed: true, swapped: true })
      expect(current).toEqual([expect.stringContaining('(conversation_id, hour)')])
      expect(await indexDefinition('public')).toEqual(current)
      // And none a migration since dropped
      const { rows } = await database.pool.query(
        "SELECT to_regclass('public.rm_hourly_activity_retired') AS retired",
      )
      expect(rows).toEqual([{ retired: null }])
    } finally {
      await database.drop()
    }
  })

  it('is resumed when its schema holds a table this version no longer has, which goes with the schema', async () => {
    const database = await createTestDatabase()
    try {
      const left = await interruptedRun(database)
      await database.pool.query(`CREATE TABLE ${left.schema}.rm_retired (id int)`)
      const { result, abandoned } = await rebuildOn(database)
      expect(abandoned).toEqual([])
      expect(result).toMatchObject({ runId: left.runId, resumed: true, swapped: true })
      const { rows } = await database.pool.query(
        "SELECT to_regclass('public.rm_retired') AS live, to_regnamespace($1) AS schema",
        [left.schema],
      )
      expect(rows).toEqual([{ live: null, schema: null }])
    } finally {
      await database.drop()
    }
  })
})

describe('two rebuilds starting at the same moment', () => {
  // One running run per projection (migration 0007's replay_runs_one_running) is what keeps two new runs
  // from replaying at once; the one that loses the race stops, saying so, instead of failing on the index.
  it('start one run: the other stops, saying so, leaving no schema of its own', async () => {
    const database = await createTestDatabase()
    const holder = await database.pool.connect()
    try {
      // Given two rebuilds that both found no run left running, their inserts held back until both have
      // created their schemas
      await holder.query('BEGIN')
      await holder.query('LOCK TABLE replay_runs IN SHARE MODE')
      const outcomes = [rebuildOn(database), rebuildOn(database)].map((rebuild) =>
        rebuild.then(
          ({ result }) => ({ result, error: undefined }),
          (error: Error) => ({ result: undefined, error }),
        ),
      )
      await waitUntilBlockedBy(database.pool, holder, {
        count: 2,
        statement: 'INSERT INTO replay_runs',
        what: 'both rebuilds to wait at their insert',
      })
      // When they go on
      await holder.query('COMMIT')
      const [first, second] = await Promise.all(outcomes)
      // Then one swaps its run in, and the other stops with one line
      const finished = [first, second].filter((o) => o!.result !== undefined)
      const stopped = [first, second].filter((o) => o!.error !== undefined)
      expect(finished.map((o) => o!.result?.swapped)).toEqual([true])
      expect(stopped.map((o) => o!.error?.message)).toEqual([
        'rebuild not started: another rebuild started a run at the same moment',
      ])
      expect(stopped[0]!.error).toBeInstanceOf(RebuildStoppedError)
      expect(await runStatuses(database)).toEqual([{ id: finished[0]!.result!.runId, status: 'done' }])
      const { rows } = await database.pool.query(
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%' OR nspname LIKE 'replaced\\_%'",
      )
      expect(rows).toEqual([])
    } finally {
      await holder.query('ROLLBACK').catch(() => {})
      holder.release()
      await database.drop()
    }
  })
})

describe('the swap under a running live projector', () => {
  it('locks the live projector’s checkpoints in (topic, partition) order, the order its batches lock them in', async () => {
    // Regression (review9): the swap locked the live group's checkpoint rows in the order the table gave them, a
    // batch of several partitions in (topic, partition) order; the two could each wait for the other.
    const database = await createTestDatabase()
    const holder = await database.pool.connect()
    const live = 'projector-of-this-test'
    /** Whether no one holds the lock of `partition`'s live checkpoint (taken and let go at once). */
    const free = async (partition: number) =>
      (
        await database.pool.query(
          'SELECT 1 FROM consumer_checkpoints WHERE group_id = $1 AND partition = $2 FOR UPDATE SKIP LOCKED',
          [live, partition],
        )
      ).rowCount === 1
    try {
      // Given the live projector's checkpoints of three journal partitions, partition 0's written last
      await database.pool.query(
        `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset)
         SELECT $1, $2, p, -1 FROM generate_series(0, 2) AS p`,
        [live, JOURNAL_TOPIC],
      )
      await database.pool.query(
        'UPDATE consumer_checkpoints SET updated_at = now() WHERE group_id = $1 AND partition = 0',
        [live],
      )
      // (with the statistics of a table of a few rows, read by a scan of the table, not of its key)
      await database.pool.query('ANALYZE consumer_checkpoints')
      // And a batch of the live projector holding partition 1's
      await holder.query('BEGIN')
      await holder.query(
        'SELECT 1 FROM consumer_checkpoints WHERE group_id = $1 AND partition = 1 FOR UPDATE',
        [live],
      )
      // When a rebuild comes to its swap
      const rebuilt = rebuildOn(database)
      await waitUntilBlockedBy(database.pool, holder, {
        statement: 'SELECT topic, partition, last_offset::text FROM consumer_checkpoints',
        what: 'the swap to wait at partition 1',
      })
      // Then it holds partition 0's already, and not 2's yet
      expect(await free(0)).toBe(false)
      expect(await free(2)).toBe(true)
      await holder.query('COMMIT')
      expect((await rebuilt).result.swapped).toBe(true)
    } finally {
      await holder.query('ROLLBACK').catch(() => {})
      holder.release()
      await database.drop()
    }
  })
})
