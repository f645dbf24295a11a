import { randomBytes } from 'node:crypto'
import { Waiter, withTransaction } from '@cas/db'
import {
  type ConsumerStats,
  consumerLag,
  createEventConsumer,
  type EventConsumer,
  type EventLogBackend,
  JOURNAL_TOPIC,
  setCheckpoints,
} from '@cas/eventlog'
import type { Keyring } from '@cas/keyring'
import type pg from 'pg'
import { ANALYSIS_AFTER_MESSAGES, PROJECTED_STREAM_TYPES, PROJECTOR_GROUP, projectorBatches } from './app.ts'
import type { ProjectionStats } from './projections/apply.ts'
import { PROTECTED_TABLES, READ_MODEL_TABLES } from './projections/registry.ts'
import { assertRunRunning, holdRunningRun, RebuildStoppedError } from './replay-run.ts'
import { type IndexDefinition, indexesOf, sameIndex, shadowTableDifferences } from './shadow-tables.ts'

/** The projector's tables, rebuilt together: they are one projection of the same events (registry.ts). */
export { READ_MODEL_TABLES } from './projections/registry.ts'
export { RebuildStoppedError } from './replay-run.ts'

/** Tables the query role reads under row-level security (registry.ts). */
const PROTECTED = new Set<string>(PROTECTED_TABLES)
export const READ_MODELS = 'read-models'
/**
 * Non-unique indexes the projection itself reads through, kept on the shadow tables during the replay.
 * Without it, finding a conversation's hour before a new one (reach.ts upsertActivity) scans the whole
 * activity table for every conversation of a batch: the rebuild slowed down as the table grew, and this
 * one statement took 90 % of a 100k-event rebuild's database time.
 */
const READ_BY_THE_PROJECTION = new Set(['rm_hourly_activity_conversation'])
/**
 * Events per replay transaction. Larger batches spread the per-batch statements over more events, but a
 * transaction holds the journal's readable bound back while it runs (journal.ts): the live projector and
 * the relay see nothing committed after it began. 2,000 events take a few hundred milliseconds.
 */
const REBUILD_BATCH = 2_000
/**
 * Journal mode: the rebuild's own virtual partitions (streams hashed onto them, each with a checkpoint),
 * which its members split. Fixed, so that a resumed rebuild finds its checkpoints where it left them.
 */
const REBUILD_JOURNAL_PARTITIONS = 4

export interface RebuildProgress {
  readonly applied: number
  readonly eventsPerSecond: number
  /** Events in the log not yet applied by the rebuild. */
  readonly lag: number
  /** Seconds to catch up at the current rate, when known. */
  readonly etaSeconds: number | null
  /** Replaying the log, building the indexes left out meanwhile, swapping the tables in. */
  readonly phase: 'replaying' | 'indexing' | 'swapping' | 'done'
}

export interface RebuildOptions {
  readonly pool: pg.Pool
  readonly eventLog: EventLogBackend
  /** Opens the sealed personal data of events; a deleted chatbot's events stay unreadable and skipped. */
  readonly keyring: Keyring
  readonly onProgress?: (progress: RebuildProgress) => void
  readonly progressIntervalMs?: number
  /** For tests of a crash: stop replaying (without swapping) once this many events were applied. */
  readonly stopAfter?: number
  /** The consumer group of the live projector, which continues on the rebuilt tables. */
  readonly liveGroupId?: string
  /**
   * Replay transactions running at once (members of the rebuild's consumer group, each applying the
   * events of its own streams): the database work of one overlaps the other's opening and folding of
   * events. Default 2; at most 4 in journal mode.
   */
  readonly parallelism?: number
  /** Told of a run left running that is abandoned rather than resumed, and why (startOrResume). */
  readonly onAbandoned?: (run: AbandonedRun) => void
}

export interface AbandonedRun {
  readonly runId: string
  readonly reason: string
}

export interface RebuildResult {
  readonly runId: string
  readonly resumed: boolean
  readonly swapped: boolean
  readonly applied: number
  /**
   * The events the rebuild could not apply and set aside (dead-letters.ts), handed to the live projector's
   * group at the swap: the new read models lack them until they are re-driven or discarded.
   */
  readonly setAside: number
}

interface Run {
  id: string
  schema_name: string
  group_id: string
}

/**
 * Rebuilds the read models from the beginning of the event log into shadow tables in a schema of their
 * own, then swaps them in, in one transaction, while the old ones keep serving until that moment.
 *
 * A run that stops before swapping (a crash) is resumed by the next one: same shadow tables, same
 * consumer group, so it continues from its checkpoint. The swap locks the live projector's checkpoints,
 * so a running projector waits for it; the rebuild must have reached at least every live checkpoint,
 * and the live projector then continues from the rebuild's checkpoints on the new tables.
 *
 * Throws RebuildStoppedError, having written nothing more, when another process's rebuild ends the run
 * under it (replay-run.ts): a newer version's abandons it, or another resuming the same run swaps it in.
 */
export async function rebuildReadModels(opts: RebuildOptions): Promise<RebuildResult> {
  const { pool } = opts
  const { run, resumed } = await startOrResume(pool, opts.onAbandoned)
  const stats: ProjectionStats = { applied: 0, dropped: {} }
  let setAside = 0
  const started = Date.now()
  const liveGroupId = opts.liveGroupId ?? PROJECTOR_GROUP
  const interval = opts.progressIntervalMs ?? 1_000
  const lag = new RebuildLagEstimate(pool, opts.eventLog)
  const report = (phase: RebuildProgress['phase'], behind: number) => {
    const seconds = Math.max((Date.now() - started) / 1_000, 0.001)
    const eventsPerSecond = Math.round(stats.applied / seconds)
    opts.onProgress?.({
      applied: stats.applied,
      eventsPerSecond,
      lag: behind,
      etaSeconds: eventsPerSecond > 0 ? Math.round(behind / eventsPerSecond) : null,
      phase,
    })
  }
  const members = Math.max(1, Math.min(opts.parallelism ?? 2, REBUILD_JOURNAL_PARTITIONS))
  // Set by the first batch that finds the run ended (its consumer retries it meanwhile, applying nothing).
  let stopped: RebuildStoppedError | undefined
  const waiter = new Waiter()
  const stop = (err: RebuildStoppedError) => {
    stopped ??= err
    waiter.wake()
  }
  for (;;) {
    const consumers = Array.from({ length: members }, () => replayConsumer(opts, run, stats, stop))
    try {
      await Promise.all(consumers.map((c) => c.start()))
      for (;;) {
        const behind = await lag.read(run.group_id, consumers)
        if (stopped) break
        // A run abandoned once every event was applied has no batch left to find it ended, and its lag,
        // its checkpoints deleted, counts the whole topic in Kafka mode: without this it would wait for
        // the next event captured.
        await assertRunRunning(pool, run.id)
        report('replaying', behind)
        if (opts.stopAfter !== undefined && stats.applied >= opts.stopAfter) {
          return { runId: run.id, resumed, swapped: false, applied: stats.applied, setAside: 0 }
        }
        if (behind === 0) break
        await waiter.sleep(interval)
      }
    } finally {
      await Promise.all(consumers.map((c) => c.stop()))
    }
    if (stopped) throw stopped
    // Built once, after the bulk of the replay (later rounds find them there). Every statement names the
    // run's schema, so a run ended meanwhile cannot reach the live tables here: its next statement fails
    // on the dropped schema, and that failure is told as the run's end.
    report('indexing', 0)
    try {
      await buildDeferredIndexes(pool, run)
      await analyzeShadowTables(pool, run)
    } catch (err) {
      await assertRunRunning(pool, run.id)
      throw err
    }
    report('swapping', await lag.exact(run.group_id))
    const swapped = await swapIn(pool, run, liveGroupId, opts.eventLog)
    if (swapped !== false) {
      setAside = swapped.setAside
      break
    }
    // The live projector moved past the rebuild meanwhile: replay a little more and try again.
  }
  // Once swapped in, the rebuild's checkpoints are the live projector's.
  report('done', await lag.exact(liveGroupId))
  return { runId: run.id, resumed, swapped: true, applied: stats.applied, setAside }
}

/**
 * The rebuild's lag, for progress and to tell when it has caught up. Counting the events past a
 * checkpoint costs in proportion to them (a million: tens of milliseconds or more), too much for every
 * progress tick of a fast replay: far from the end it is counted at most every second (and at most a
 * tenth of the time) and estimated in between from the events handled since; near the end, where
 * counting is cheap, at every tick. Only a count ever says 0.
 */
class RebuildLagEstimate {
  private last = { at: 0, costMs: 0, lag: Number.POSITIVE_INFINITY, handled: 0 }

  constructor(
    private readonly pool: pg.Pool,
    private readonly eventLog: EventLogBackend,
  ) {}

  async exact(groupId: string): Promise<number> {
    return consumerLag(this.pool, this.eventLog, groupId, PROJECTED_STREAM_TYPES)
  }

  async read(groupId: string, consumers: readonly EventConsumer[]): Promise<number> {
    const handled = consumers.reduce((n, c) => n + handledBy(c.stats), 0)
    const estimate = this.last.lag - (handled - this.last.handled)
    const since = Date.now() - this.last.at
    if (estimate <= 2 * REBUILD_BATCH || since >= Math.max(1_000, 10 * this.last.costMs)) {
      const started = Date.now()
      const lag = await this.exact(groupId)
      this.last = { at: started, costMs: Date.now() - started, lag, handled }
      return lag
    }
    return Math.max(1, estimate)
  }
}

function handledBy(stats: ConsumerStats): number {
  return stats.applied + stats.duplicates + stats.dropped
}

/**
 * Resumes the run left running, if its shadow tables are still those of this version's read models;
 * else abandons it and starts afresh. A run begun by an older version, before a migration that added a
 * read-model table, has no shadow copy of it: under `search_path = <schema>, public` the projector would
 * write that table's rows into the live one (doubling its counts), and the swap would fail. Creating the
 * missing table would not do either: the events the run had applied already never reached it.
 */
async function startOrResume(
  pool: pg.Pool,
  onAbandoned: RebuildOptions['onAbandoned'],
): Promise<{ run: Run; resumed: boolean }> {
  await dropLeftoverSchemas(pool)
  const { rows } = await pool.query<Run>(
    "SELECT id, schema_name, group_id FROM replay_runs WHERE projection = $1 AND status = 'running'",
    [READ_MODELS],
  )
  const left = rows[0]
  if (left) {
    const differences = await shadowTableDifferences(pool, left.schema_name, READ_MODEL_TABLES)
    if (differences.length === 0) return { run: left, resumed: true }
    await abandon(pool, left)
    onAbandoned?.({
      runId: left.id,
      reason: `its shadow tables are not this version's read models (a migration since it began): ${differences.join('; ')}`,
    })
  }
  const id = `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${randomBytes(3).toString('hex')}`
  const run = { id, schema_name: `rebuild_${id}`, group_id: `rebuild-${id}` }
  await createRun(pool, run).catch((err: { code?: string; constraint?: string }) => {
    // Another rebuild found no run either and inserted its own first (one running run per projection,
    // migration 0007): this transaction, schema and all, is rolled back; the other carries on.
    if (err.code !== '23505' || err.constraint !== 'replay_runs_one_running') throw err
    throw new RebuildStoppedError('rebuild not started: another rebuild started a run at the same moment')
  })
  return { run, resumed: false }
}

/** Creates a run's schema and shadow tables and records it as running, in one transaction. */
async function createRun(pool: pg.Pool, run: Run): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query(`CREATE SCHEMA ${run.schema_name}`)
    for (const table of READ_MODEL_TABLES) {
      // Without the indexes the replay does not need (built before the swap): loading rows into a table
      // and indexing them at the end is faster than maintaining every index row by row. The unique
      // ones stay, for the projection's upserts, and so do those the projection reads through.
      await client.query(
        `CREATE TABLE ${run.schema_name}.${table} (LIKE public.${table} INCLUDING ALL EXCLUDING INDEXES)`,
      )
      for (const index of await indexesOf(client, 'public', table)) {
        if (index.unique || READ_BY_THE_PROJECTION.has(index.name))
          await createIndexLike(client, index, run.schema_name)
      }
    }
    await client.query(
      `INSERT INTO replay_runs (id, projection, schema_name, group_id, status, started_at)
       VALUES ($1, $2, $3, $4, 'running', now())`,
      [run.id, READ_MODELS, run.schema_name, run.group_id],
    )
  })
}

/**
 * Marks a run abandoned and drops what its consumer group kept, then drops its shadow tables. Another
 * process may still be running it (an older version's rebuild not stopped before the upgrade): if that
 * version has the check, its batches hold the run's row (holdRunningRun), so this waits for a batch in
 * flight, and every later batch finds the run abandoned and writes nothing; one from before the check is
 * not stopped so, and writes the live tables once the schema is gone (docs/operations.md: stop a rebuild
 * before upgrading). The group's checkpoint rows are locked first, in the order a batch locks them before
 * it takes the run's row: taken the other way round, a batch between the two would wait for this while
 * this waited for its checkpoints.
 *
 * Two transactions, the schema dropped in the second (dropAbandonedSchema): the drop waits for an index
 * build of the run under way (the older rebuild's indexing phase), and that build waits in turn for every
 * transaction older than its snapshot, so the two can deadlock. PostgreSQL then ends one of them. When it
 * ended the build while the abandonment was one transaction, the older rebuild read its run still running
 * and failed with a raw deadlock error; now the run is abandoned before the drop begins.
 */
async function abandon(pool: pg.Pool, run: Run): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query(
      'SELECT 1 FROM consumer_checkpoints WHERE group_id = $1 ORDER BY topic, partition FOR UPDATE',
      [run.group_id],
    )
    await client.query("UPDATE replay_runs SET status = 'abandoned', finished_at = now() WHERE id = $1", [
      run.id,
    ])
    for (const table of ['consumer_checkpoints', 'consumer_stream_versions', 'dead_letters'])
      await client.query(`DELETE FROM ${table} WHERE group_id = $1`, [run.group_id])
  })
  await dropAbandonedSchema(pool, run.schema_name)
}

/**
 * Drops an abandoned run's schema, in a transaction of its own, run again when PostgreSQL ends it as a
 * deadlock's victim (withTransaction): the drop run again is younger than the index build it waited for,
 * which then no longer waits for it. The run being abandoned already, the build's rebuild stops at its next
 * statement, or at once if the build was the victim (RebuildStoppedError either way).
 */
async function dropAbandonedSchema(pool: pg.Pool, schema: string): Promise<void> {
  await withTransaction(pool, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
}

/**
 * Drops the schemas of abandoned runs still there: the process that abandoned one ended between its two
 * transactions (abandon), or its drop failed.
 */
async function dropLeftoverSchemas(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ schema_name: string }>(
    `SELECT r.schema_name FROM replay_runs r JOIN pg_namespace n ON n.nspname = r.schema_name
      WHERE r.projection = $1 AND r.status = 'abandoned'`,
    [READ_MODELS],
  )
  for (const { schema_name } of rows) await dropAbandonedSchema(pool, schema_name)
}

/**
 * The projector, writing into the shadow tables: unqualified table names resolve to the run's schema,
 * which holds every table of READ_MODEL_TABLES as public has it (startOrResume checked), so none resolves
 * to the live one. Each batch first holds the run's row and goes on only while the run is running
 * (holdRunningRun): once another rebuild has abandoned it and dropped its schema, every name would
 * resolve to `public`. A batch that finds it ended applies nothing and tells `stop`.
 * Its batches are ordered as the live projector's are (`projectorBatches`: the deletion lock, then the
 * partition locks, under a key of the rebuild's own group), so that its members, which run at once, each
 * read what the others wrote: a capture after its chatbot's deletion in another member's partition
 * waits for the deletion and is dropped, as batch-order.int.test.ts shows of the live one.
 */
function replayConsumer(
  opts: RebuildOptions,
  run: Run,
  stats: ProjectionStats,
  stop: (err: RebuildStoppedError) => void,
): EventConsumer {
  const backend: EventLogBackend =
    opts.eventLog.kind === 'journal'
      ? { ...opts.eventLog, partitions: REBUILD_JOURNAL_PARTITIONS }
      : opts.eventLog
  const { orderBatch, handler, droppedEvents } = projectorBatches(run.group_id, opts.keyring, stats)
  return createEventConsumer(backend, {
    pool: opts.pool,
    groupId: run.group_id,
    streamTypes: PROJECTED_STREAM_TYPES,
    maxBatchSize: REBUILD_BATCH,
    trailing: ANALYSIS_AFTER_MESSAGES,
    neverAppends: true,
    orderBatch,
    droppedEvents,
    handler: async (records, client, sources) => {
      // In the transaction's handler, after its checkpoint rows (abandon and the swap lock them first
      // too), and after it was marked never to append: a wait here holds no journal reader back.
      await holdRunningRun(client, run.id, 'SHARE').catch((err: unknown) => {
        if (err instanceof RebuildStoppedError) stop(err)
        throw err
      })
      // Asynchronous commit: a crash may lose the last batches committed, but each batch commits
      // together with its checkpoint, so what is lost is lost from both, and the resumed rebuild
      // replays it. The swap itself commits synchronously, making everything before it durable.
      await client.query(
        `SET LOCAL search_path TO ${run.schema_name}, public; SET LOCAL synchronous_commit TO off`,
      )
      await handler(records, client, sources)
    },
  })
}

/**
 * Swaps the shadow tables in, if the rebuild has reached every checkpoint of the live projector (whose
 * checkpoints stay locked meanwhile). Returns false, changing nothing, when it has not.
 *
 * Kafka checkpoints are per topic partition, the same for both groups. The journal's virtual partitions
 * are not: the rebuild has its own, and has applied every stream's events up to the lowest of its
 * checkpoints at least. The live projector's journal partitions all continue from there; what the
 * rebuild applied past it comes again and is dropped by stream version, like any redelivery.
 */
async function swapIn(
  pool: pg.Pool,
  run: Run,
  liveGroupId: string,
  eventLog: EventLogBackend,
): Promise<false | { setAside: number }> {
  return withTransaction(pool, async (client) => {
    // In (topic, partition) order, the order a batch of the live projector locks its rows in (applyBatches):
    // taken in the order the table gives them, the swap and a batch of several partitions could each hold
    // one the other waits for.
    const { rows: live } = await client.query<{ topic: string; partition: number; last_offset: string }>(
      `SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1
        ORDER BY topic, partition FOR UPDATE`,
      [liveGroupId],
    )
    // Locked, and then the run's row, as a batch of the run locks them (another process may be running
    // it too): a run ended meanwhile is not swapped in.
    const { rows: rebuilt } = await client.query<{ topic: string; partition: number; last_offset: string }>(
      `SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1
        ORDER BY topic, partition FOR UPDATE`,
      [run.group_id],
    )
    await holdRunningRun(client, run.id, 'UPDATE')
    const journal = rebuilt.filter((r) => r.topic === JOURNAL_TOPIC).map((r) => BigInt(r.last_offset))
    let journalReached = journal[0] ?? -1n
    for (const offset of journal) if (offset < journalReached) journalReached = offset
    const reached = new Map(rebuilt.map((r) => [`${r.topic}/${r.partition}`, BigInt(r.last_offset)]))
    // Only the checkpoints of the log both read: a service that ran on the journal before KAFKA_BROKERS
    // was set (or the other way round) keeps the live group's checkpoints of the other log, which the
    // rebuild never reaches; they are dropped with the rest of the live group's below.
    const current = live.filter((l) => (l.topic === JOURNAL_TOPIC) === (eventLog.kind === 'journal'))
    const behind = current.some((l) => {
      const at =
        l.topic === JOURNAL_TOPIC ? journalReached : (reached.get(`${l.topic}/${l.partition}`) ?? -1n)
      return at < BigInt(l.last_offset)
    })
    if (behind) return false

    // The live projector carries on from where the rebuild is, on the new tables. Handed over before
    // the tables are moved: with a stream-version row per stream, that takes seconds on a large
    // deployment (1.1 s at 150,000 streams), and from the first move on, every read of the read models
    // waits for this transaction to end. The events the rebuild set aside (dead-letters.ts) are the
    // live group's now: those of the old tables go with them, and a re-drive applies to the new ones.
    let setAside = 0
    for (const table of ['consumer_checkpoints', 'consumer_stream_versions', 'dead_letters']) {
      await client.query(`DELETE FROM ${table} WHERE group_id = $1`, [liveGroupId])
      const moved = await client.query(`UPDATE ${table} SET group_id = $1 WHERE group_id = $2`, [
        liveGroupId,
        run.group_id,
      ])
      if (table === 'dead_letters') setAside = moved.rowCount ?? 0
    }
    if (journal.length > 0) {
      const partitions = eventLog.kind === 'journal' ? (eventLog.partitions ?? 1) : 1
      await setCheckpoints(client, liveGroupId, partitions, journalReached.toString())
    }
    const replaced = `replaced_${run.id}`
    await client.query(`CREATE SCHEMA ${replaced}`)
    for (const table of READ_MODEL_TABLES) {
      // The shadow table's indexes and constraints carry the live one's names already (createIndexLike, the
      // indexing phase, the resume check), as later migrations refer to them.
      await client.query(`ALTER TABLE public.${table} SET SCHEMA ${replaced}`)
      await client.query(`ALTER TABLE ${run.schema_name}.${table} SET SCHEMA public`)
      await copyStorageParameters(client, `${replaced}.${table}`, `public.${table}`)
      if (PROTECTED.has(table))
        await client.query('SELECT cas_protect_read_model($1::regclass)', [`public.${table}`])
    }
    await client.query("UPDATE replay_runs SET status = 'done', finished_at = now() WHERE id = $1", [run.id])
    await client.query(`DROP SCHEMA ${replaced} CASCADE`)
    await client.query(`DROP SCHEMA ${run.schema_name} CASCADE`)
    return { setAside }
  })
}

/**
 * Statistics for the rebuilt tables before they are swapped in. Bulk-loaded, they have only what
 * autovacuum happened to gather while they grew, perhaps none: every read of the live service would be
 * planned on a guess of their sizes until its next pass (a plan made on none read the Topics page's
 * conversations quadratically: bench/FINDINGS.md, "The Topics page's reads as a chatbot grows"). One
 * ANALYZE per table, each its own short transaction (a long one would hold the journal's readers back,
 * as below), a sample of each table whatever its size.
 */
async function analyzeShadowTables(pool: pg.Pool, run: Run): Promise<void> {
  for (const table of READ_MODEL_TABLES) await pool.query(`ANALYZE ${run.schema_name}.${table}`)
}

/**
 * Builds the indexes of the live tables that the shadow tables do not have yet (the replay goes without
 * them), under the same names. Idempotent, so a resumed rebuild builds only what is missing (an index a
 * crash left half built, invalid, is built again). A run resumed across a migration may hold an index of
 * an older definition under its name (as 0013 redefined rm_hourly_activity_conversation): it is built
 * again; and one the live tables no longer have is dropped (swapped in, it would stand in the way of a
 * later migration creating that name).
 *
 * CONCURRENTLY, although nothing else writes the shadow tables: a plain CREATE INDEX holds a transaction
 * id for the whole build, and the journal's readers (the live projector, the relay) read nothing
 * committed after the oldest running transaction began: they would stall for as long as the build.
 */
async function buildDeferredIndexes(pool: pg.Pool, run: Run): Promise<void> {
  const client = await pool.connect()
  try {
    // Sorting for the index builds in memory, this session only (reset before it goes back to the pool).
    await client.query("SET maintenance_work_mem TO '256MB'")
    for (const table of READ_MODEL_TABLES) {
      const existing = new Map((await indexesOf(client, run.schema_name, table)).map((i) => [i.name, i]))
      const live = await indexesOf(client, 'public', table)
      for (const index of live) {
        const built = existing.get(index.name)
        if (built?.valid && sameIndex(built, index)) continue
        if (built) await client.query(`DROP INDEX ${run.schema_name}.${built.name}`)
        await createIndexLike(client, index, run.schema_name, { concurrently: true })
      }
      const names = new Set(live.map((i) => i.name))
      for (const built of existing.values())
        if (!names.has(built.name) && !built.constraint)
          await client.query(`DROP INDEX ${run.schema_name}.${built.name}`)
    }
  } finally {
    await client.query('RESET maintenance_work_mem').catch(() => {})
    client.release()
  }
}

/**
 * Gives the swapped-in table the replaced one's storage parameters, which `LIKE` does not copy. Only at
 * the swap: the replay inserts whole rows, which need no room for updates (rm_messages keeps half of
 * each page for the analysis update that follows a live capture, migration 0022; the replay's pages
 * are full, the live projector's from then on are not).
 */
async function copyStorageParameters(client: pg.ClientBase, from: string, to: string): Promise<void> {
  const { rows } = await client.query<{ options: string[] | null }>(
    'SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass',
    [from],
  )
  const options = rows[0]?.options
  if (options && options.length > 0) await client.query(`ALTER TABLE ${to} SET (${options.join(', ')})`)
}

/** Creates `index` (of a public table) on the same table in `schema`, under the same name. */
async function createIndexLike(
  client: pg.ClientBase,
  index: IndexDefinition,
  schema: string,
  opts: { concurrently?: boolean } = {},
): Promise<void> {
  if (index.constraint) {
    await client.query(
      `ALTER TABLE ${schema}.${index.table} ADD CONSTRAINT ${index.constraint} ${index.definition}`,
    )
    return
  }
  const on = ` ON public.${index.table} `
  if (!index.definition.includes(on) || !/^CREATE (UNIQUE )?INDEX /.test(index.definition))
    throw new Error(`unexpected index definition: ${index.definition}`)
  let definition = index.definition.replace(on, ` ON ${schema}.${index.table} `)
  if (opts.concurrently)
    definition = definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX CONCURRENTLY ')
  await client.query(definition)
}
