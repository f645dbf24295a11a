import { randomBytes } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { consumerLag, createEventConsumer, type EventConsumer, type EventLogBackend } from '@cas/eventlog'
import type { Keyring } from '@cas/keyring'
import type pg from 'pg'
import { PROJECTOR_GROUP } from './app.ts'
import { applyToReadModels, type ProjectionStats } from './projections/apply.ts'

/** The projector's tables, rebuilt together: they are one projection of the same events. */
export const READ_MODEL_TABLES = [
  'rm_conversations',
  'rm_messages',
  'rm_hourly_stats',
  'rm_hourly_topics',
  'rm_hourly_activity',
  'rm_org_hourly_stats',
  'rm_daily_topics',
  'rm_chatbot_user_hours',
  'rm_org_user_hours',
  'rm_org_end_users',
  'rm_deleted_chatbots',
  'rm_erased_conversations',
] as const
/** Tables the query role reads under row-level security (the deleted-chatbot tombstones are the projector's own). */
const PROTECTED = new Set<string>(READ_MODEL_TABLES.filter((t) => t !== 'rm_deleted_chatbots'))
export const READ_MODELS = 'read-models'

export interface RebuildProgress {
  readonly applied: number
  readonly eventsPerSecond: number
  /** Events in the log not yet applied by the rebuild. */
  readonly lag: number
  /** Seconds to catch up at the current rate, when known. */
  readonly etaSeconds: number | null
  readonly phase: 'replaying' | 'swapping' | 'done'
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
}

export interface RebuildResult {
  readonly runId: string
  readonly resumed: boolean
  readonly swapped: boolean
  readonly applied: number
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
 */
export async function rebuildReadModels(opts: RebuildOptions): Promise<RebuildResult> {
  const { pool } = opts
  const { run, resumed } = await startOrResume(pool)
  const stats: ProjectionStats = { applied: 0, dropped: {} }
  const started = Date.now()
  const liveGroupId = opts.liveGroupId ?? PROJECTOR_GROUP
  // Once swapped in, the rebuild's checkpoints are the live projector's.
  const report = async (phase: RebuildProgress['phase']) => {
    const lag = await consumerLag(pool, opts.eventLog, phase === 'done' ? liveGroupId : run.group_id)
    const seconds = Math.max((Date.now() - started) / 1_000, 0.001)
    const eventsPerSecond = Math.round(stats.applied / seconds)
    opts.onProgress?.({
      applied: stats.applied,
      eventsPerSecond,
      lag,
      etaSeconds: eventsPerSecond > 0 ? Math.round(lag / eventsPerSecond) : null,
      phase,
    })
    return lag
  }
  for (;;) {
    const consumer = replayConsumer(opts, run, stats)
    await consumer.start()
    try {
      for (;;) {
        const lag = await report('replaying')
        if (opts.stopAfter !== undefined && stats.applied >= opts.stopAfter) {
          return { runId: run.id, resumed, swapped: false, applied: stats.applied }
        }
        if (lag === 0) break
        await new Promise((resolve) => setTimeout(resolve, opts.progressIntervalMs ?? 1_000))
      }
    } finally {
      await consumer.stop()
    }
    await report('swapping')
    if (await swapIn(pool, run, liveGroupId)) break
    // The live projector moved past the rebuild meanwhile: replay a little more and try again.
  }
  await report('done')
  return { runId: run.id, resumed, swapped: true, applied: stats.applied }
}

async function startOrResume(pool: pg.Pool): Promise<{ run: Run; resumed: boolean }> {
  const { rows } = await pool.query<Run>(
    "SELECT id, schema_name, group_id FROM replay_runs WHERE projection = $1 AND status = 'running'",
    [READ_MODELS],
  )
  if (rows[0]) return { run: rows[0], resumed: true }
  const id = `${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${randomBytes(3).toString('hex')}`
  const run = { id, schema_name: `rebuild_${id}`, group_id: `rebuild-${id}` }
  await withTransaction(pool, async (client) => {
    await client.query(`CREATE SCHEMA ${run.schema_name}`)
    for (const table of READ_MODEL_TABLES) {
      await client.query(`CREATE TABLE ${run.schema_name}.${table} (LIKE public.${table} INCLUDING ALL)`)
    }
    await client.query(
      `INSERT INTO replay_runs (id, projection, schema_name, group_id, status, started_at)
       VALUES ($1, $2, $3, $4, 'running', now())`,
      [run.id, READ_MODELS, run.schema_name, run.group_id],
    )
  })
  return { run, resumed: false }
}

/** The projector, writing into the shadow tables: unqualified table names resolve to the run's schema. */
function replayConsumer(opts: RebuildOptions, run: Run, stats: ProjectionStats): EventConsumer {
  return createEventConsumer(opts.eventLog, {
    pool: opts.pool,
    groupId: run.group_id,
    streamTypes: ['chatbot', 'conversation', 'analysis'],
    maxBatchSize: 1_000,
    handler: async (records, client) => {
      await client.query(`SET LOCAL search_path TO ${run.schema_name}, public`)
      await applyToReadModels(client, opts.keyring, records, stats)
    },
  })
}

/**
 * Swaps the shadow tables in, if the rebuild has reached every checkpoint of the live projector (whose
 * checkpoints stay locked meanwhile). Returns false, changing nothing, when it has not.
 */
async function swapIn(pool: pg.Pool, run: Run, liveGroupId: string): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rows: live } = await client.query<{ topic: string; partition: number; last_offset: string }>(
      'SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1 FOR UPDATE',
      [liveGroupId],
    )
    const { rows: rebuilt } = await client.query<{ topic: string; partition: number; last_offset: string }>(
      'SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1',
      [run.group_id],
    )
    const reached = new Map(rebuilt.map((r) => [`${r.topic}/${r.partition}`, BigInt(r.last_offset)]))
    const behind = live.some((l) => (reached.get(`${l.topic}/${l.partition}`) ?? -1n) < BigInt(l.last_offset))
    if (behind) return false

    const replaced = `replaced_${run.id}`
    await client.query(`CREATE SCHEMA ${replaced}`)
    for (const table of READ_MODEL_TABLES) {
      const oldIndexes = await indexNames(client, 'public', table)
      await client.query(`ALTER TABLE public.${table} SET SCHEMA ${replaced}`)
      await client.query(`ALTER TABLE ${run.schema_name}.${table} SET SCHEMA public`)
      // Keep the migrations' index names, so later migrations can refer to them.
      const newIndexes = await indexNames(client, 'public', table)
      for (const [definition, name] of oldIndexes) {
        const current = newIndexes.get(definition)
        if (current && current !== name) await client.query(`ALTER INDEX public.${current} RENAME TO ${name}`)
      }
      if (PROTECTED.has(table))
        await client.query('SELECT cas_protect_read_model($1::regclass)', [`public.${table}`])
    }
    // The live projector carries on from where the rebuild is, on the new tables.
    for (const table of ['consumer_checkpoints', 'consumer_stream_versions']) {
      await client.query(`DELETE FROM ${table} WHERE group_id = $1`, [liveGroupId])
      await client.query(`UPDATE ${table} SET group_id = $1 WHERE group_id = $2`, [liveGroupId, run.group_id])
    }
    await client.query("UPDATE replay_runs SET status = 'done', finished_at = now() WHERE id = $1", [run.id])
    await client.query(`DROP SCHEMA ${replaced} CASCADE`)
    await client.query(`DROP SCHEMA ${run.schema_name} CASCADE`)
    return true
  })
}

/** A table's indexes by their definition (with the schema and the index's own name taken out) → name. */
async function indexNames(
  client: pg.ClientBase,
  schema: string,
  table: string,
): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 AND t.relname = $2`,
    [schema, table],
  )
  return new Map(
    rows.map((r) => [r.definition.replace(/INDEX \S+ ON \S+/, 'INDEX ON').replace(/\s+/g, ' '), r.name]),
  )
}
