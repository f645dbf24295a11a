// Shared by the projector's database tests of the projection: given(events).projected().thenRows(…).
// The events are written as the gateway and the analysis service append them (sealed under each
// chatbot's data key, in journal order), applied by the live projector's steps into read-model tables
// of their own, and the rows read back.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { withTransaction } from '@cas/db'
import type { JournalRecord } from '@cas/eventlog'
import type { EventPayload, EventType } from '@cas/events'
import { dataKeyFor } from '@cas/keyring'
import type pg from 'pg'
import { afterAll, beforeAll, expect } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { applyToReadModels, type ProjectionStats } from '../src/projections/apply.ts'
import { READ_MODEL_TABLES } from '../src/projections/registry.ts'
import { sealedRecord } from './sealed-record.ts'

/** An event of the journal, before it is sealed (which needs the database's data keys). */
export interface JournalEvent {
  readonly chatbotId: string
  readonly streamType: 'conversation' | 'analysis' | 'chatbot'
  readonly streamId: string
  readonly type: EventType
  readonly payload: unknown
  readonly occurredAt: string
}

/** Noon UTC on `day` of the month the projector's tests happen in (November 2026). */
export const onDay = (day: number) => `2026-11-${String(day).padStart(2, '0')}T12:00:00.000Z`

/** Writes events in journal order: `append` for each, `events` for `given`. */
export function journal(orgId: string) {
  const events: JournalEvent[] = []
  const append = <T extends EventType>(
    chatbotId: string,
    streamType: JournalEvent['streamType'],
    streamId: string,
    type: T,
    payload: EventPayload<T>,
    occurredAt = onDay(20),
  ) => {
    events.push({ chatbotId, streamType, streamId, type, payload, occurredAt })
  }
  return { orgId, events, append }
}

export type Row = Record<string, unknown>

export interface Projected {
  /** Every row of `table`, as JSON (to_jsonb). */
  rows(table: string): Promise<Row[]>
  /** Then `table` holds exactly these rows, each seen through `select`, in any order. */
  thenRows(table: string, select: (row: Row) => unknown, expected: readonly unknown[]): Promise<Projected>
  /** What the projector counted: events applied, and dropped by reason. */
  stats(): Promise<ProjectionStats>
  /** Then the events dropped, by reason, were these. */
  thenDropped(expected: Record<string, number>): Promise<Projected>
}

export interface ProjectedOptions {
  readonly batches?: readonly number[]
  readonly redelivered?: boolean
  /** What the journal holds instead of the records as written now (events of an older version). */
  readonly recorded?: (records: JournalRecord[]) => JournalRecord[]
}

/** `given(events)`: the events sealed, or projected. */
export interface Given {
  /** The records as the journal holds them (sealed). */
  records(): Promise<JournalRecord[]>
  projected(opts?: ProjectedOptions): Projected
}

/**
 * Registers a test database for the file (created before its tests, dropped after) and returns `given`:
 * `given(events).projected({ batches })` applies the events, in transactions of `batches` events each
 * (cycled; default all in one), into fresh read-model tables, as the projector does; `redelivered`
 * applies them all once more after (what a projection that is idempotent shrugs off).
 */
export function projectionTests() {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase()
  })
  afterAll(async () => {
    await db?.drop()
  })
  const keys = new Map<string, Buffer>()
  const keyOf = async (orgId: string, chatbotId: string) => {
    let key = keys.get(chatbotId)
    if (!key) {
      key = await dataKeyFor(db.pool, testKeyring, chatbotId, orgId)
      keys.set(chatbotId, key)
    }
    return key
  }

  /** Seals the events as the journal holds them: stream versions and positions in order. */
  const seal = async (orgId: string, events: readonly JournalEvent[]): Promise<JournalRecord[]> => {
    const versions = new Map<string, number>()
    let position = 1_000n
    const records: JournalRecord[] = []
    for (const e of events) {
      const stream = `${e.streamType}/${e.streamId}`
      const streamVersion = (versions.get(stream) ?? 0) + 1
      versions.set(stream, streamVersion)
      position += 65_536n
      const place = {
        key: await keyOf(orgId, e.chatbotId),
        orgId,
        chatbotId: e.chatbotId,
        streamType: e.streamType,
        streamId: e.streamId,
        streamVersion,
        position,
        occurredAt: e.occurredAt,
      }
      records.push(sealedRecord(place, e.type, e.payload as EventPayload<typeof e.type>))
    }
    return records
  }

  const project = async (
    records: readonly JournalRecord[],
    sizes: readonly number[],
    redelivered: boolean,
  ) => {
    const schema = `given_${randomUUID().replaceAll('-', '').slice(0, 12)}`
    await withTransaction(db.pool, async (client) => {
      await client.query(`CREATE SCHEMA ${schema}`)
      for (const table of READ_MODEL_TABLES)
        await client.query(`CREATE TABLE ${schema}.${table} (LIKE public.${table} INCLUDING ALL)`)
    })
    const stats: ProjectionStats = { applied: 0, dropped: {} }
    for (let i = 0, b = 0; i < records.length; b++) {
      const size = sizes[b % sizes.length]!
      const batch = records.slice(i, i + size)
      i += size
      await withTransaction(db.pool, async (client) => {
        await client.query(`SET LOCAL search_path TO ${schema}, public`)
        await applyToReadModels(client, testKeyring, batch, stats)
      })
    }
    if (redelivered) {
      // Every event once more, in one batch, past the consumer's check of stream versions.
      await withTransaction(db.pool, async (client) => {
        await client.query(`SET LOCAL search_path TO ${schema}, public`)
        await applyToReadModels(client, testKeyring, records, { applied: 0, dropped: {} })
      })
    }
    return { schema, stats }
  }

  function given(j: { readonly orgId: string; readonly events: readonly JournalEvent[] }): Given {
    return {
      records: () => seal(j.orgId, j.events),
      projected(opts = {}) {
        const done = seal(j.orgId, j.events)
          .then((sealed) => opts.recorded?.(sealed) ?? sealed)
          .then((records) =>
            project(records, opts.batches ?? [Math.max(records.length, 1)], opts.redelivered ?? false),
          )
        const projected: Projected = {
          async rows(table) {
            const { schema } = await done
            const { rows } = await db.pool.query<{ row: Row }>(
              `SELECT to_jsonb(t) AS row FROM ${schema}.${table} t`,
            )
            return rows.map((r) => r.row)
          },
          async thenRows(table, select, expected) {
            expectSameRows((await projected.rows(table)).map(select), expected, table)
            return projected
          },
          stats: async () => (await done).stats,
          async thenDropped(expected) {
            expect((await done).stats.dropped).toEqual(expected)
            return projected
          },
        }
        return projected
      },
    }
  }

  /** Every read-model table's rows (as sorted JSON text), to compare two ways of projecting. */
  async function allRows(projected: Projected): Promise<Record<string, string[]>> {
    const tables: Record<string, string[]> = {}
    for (const table of READ_MODEL_TABLES)
      tables[table] = (await projected.rows(table)).map((r) => JSON.stringify(r)).sort()
    return tables
  }

  return { given, allRows, keyOf, pool: () => db.pool }
}

/** Then `seen` holds exactly the `expected` values, in any order (compared sorted by their JSON text). */
export function expectSameRows(
  seen: readonly unknown[],
  expected: readonly unknown[],
  message?: string,
): void {
  const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b))
  expect([...seen].sort(byJson), message).toEqual([...expected].sort(byJson))
}

/**
 * Then `table` holds exactly these rows (each seen through `select`, in any order) however the events are cut
 * into batches (of 1; of 2; of 3 then 1, cycled), and again when they are all delivered once more after.
 */
export async function thenRowsInAnyBatches(
  events: Given,
  table: string,
  select: (row: Row) => unknown,
  expected: readonly unknown[],
): Promise<void> {
  for (const batches of [[1], [2], [3, 1]]) {
    await events.projected({ batches }).thenRows(table, select, expected)
    await events.projected({ batches, redelivered: true }).thenRows(table, select, expected)
  }
}

/**
 * What a migration's back-fill makes of `records`: the migration's statements from `from` to its Down
 * Migration, run in a schema of their own where `tables` are empty copies of the public ones, the journal
 * holding `records` and `seed` having written what else the back-fill reads; `table`'s rows as JSON.
 */
export async function backfilled(
  pool: pg.Pool,
  opts: {
    readonly migration: string
    readonly from: string
    readonly tables: readonly string[]
    readonly records: readonly JournalRecord[]
    readonly seed: (client: pg.PoolClient) => Promise<unknown>
    readonly table: string
  },
): Promise<Row[]> {
  const sql = readFileSync(new URL(`../../../migrations/${opts.migration}`, import.meta.url), 'utf8')
  const backfill = sql.slice(sql.indexOf(opts.from), sql.indexOf('-- Down Migration'))
  const schema = `backfill_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  return withTransaction(pool, async (client) => {
    await client.query(`CREATE SCHEMA ${schema}`)
    for (const table of ['event_journal', ...opts.tables])
      await client.query(`CREATE TABLE ${schema}.${table} (LIKE public.${table} INCLUDING ALL)`)
    await client.query(`SET LOCAL search_path TO ${schema}, public`)
    for (const r of opts.records) {
      await client.query(
        `INSERT INTO event_journal (position, event_id, stream_type, stream_id, stream_version, type, version,
                                    occurred_at, org_id, chatbot_id, payload)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          r.position,
          r.id,
          r.streamType,
          r.streamId,
          r.streamVersion,
          r.type,
          r.version,
          r.occurredAt,
          r.orgId,
          r.chatbotId,
          JSON.stringify(r.payload),
        ],
      )
    }
    await opts.seed(client)
    await client.query(backfill)
    return (await client.query<{ row: Row }>(`SELECT to_jsonb(t) AS row FROM ${opts.table} t`)).rows.map(
      (r) => r.row,
    )
  })
}
