import { withTransaction } from '@cas/db'
import type { Pool, PoolClient } from 'pg'
import {
  type ApplyBatchOptions,
  applyBatches,
  type BatchHandler,
  type BatchOutcome,
  type BatchPart,
  type BatchSource,
  recordStreamVersions,
  type SourcedRecord,
} from './apply-batch.ts'
import type { ConsumerOptions, ConsumerStats } from './consumer.ts'
import { DeadLetterError } from './consumer-pipeline.ts'
import { markNeverAppends } from './journal.ts'
import type { JournalRecord } from './records.ts'

/**
 * How often a consumer tries a batch that keeps failing before it looks for the event at fault, and how
 * often it then tries that event on its own before setting it aside (DESIGN.md guarantee 9). With the
 * consumers' backoff (100 ms doubling, full jitter) the first five take a few seconds at most: the
 * other streams of the partition wait that long, well within the freshness bound.
 */
export const DEFAULT_MAX_ATTEMPTS = 5

/** An event set aside by a consumer group: what the operator command lists. */
export interface DeadLetter {
  readonly id: string
  readonly groupId: string
  readonly topic: string
  readonly partition: number
  readonly offset: string
  readonly eventId: string | null
  readonly eventType: string | null
  readonly streamType: string | null
  readonly streamId: string | null
  readonly streamVersion: number | null
  readonly orgId: string | null
  readonly chatbotId: string | null
  readonly error: string
  readonly attempts: number
  readonly deadLetteredAt: string
  readonly redriveRequestedAt: string | null
}

/** The record a dead letter holds, as the consumer received it (for `show`). */
export interface DeadLetterWithRecord extends DeadLetter {
  readonly record: JournalRecord | null
}

/** Where a dead-lettered event goes besides the table (the dead-letter topic in Kafka mode). */
export type DeadLetterSink = (letter: {
  readonly groupId: string
  readonly source: BatchSource
  readonly offset: string
  readonly record: JournalRecord
  readonly error: string
  readonly attempts: number
}) => Promise<void>

/**
 * Whether retrying can help: the database or the network was away, a lock or a serialization conflict
 * lost, the server is short of something, or our own SQL does not fit the schema (a deployment's
 * fault, which a retry after a fix repairs, so never a reason to set good events aside). Anything else
 * (a value Postgres refuses, `22xxx`; a constraint, `23xxx`; an event our code cannot read) is the
 * event's own fault, and the same event fails the same way every time.
 */
export function isTransientError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown }
  const code = typeof e?.code === 'string' ? e.code : ''
  if (/^[0-9A-Z]{5}$/.test(code)) return /^(08|40|42|53|55|57|58|XX|F0|HV|P0)/.test(code) && code !== 'P0001'
  if (/^E[A-Z]+$/.test(code)) return true // ECONNREFUSED, ECONNRESET, ETIMEDOUT, EPIPE, …
  const message = typeof e?.message === 'string' ? e.message : ''
  return /Connection terminated|connection error|timeout exceeded|Client was closed|not queryable|Cannot use a pool/i.test(
    message,
  )
}

export interface IsolateOptions extends ApplyBatchOptions {
  readonly maxAttempts?: number
  readonly sink?: DeadLetterSink
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
  /** Backoff between the attempts at one event (attempt number from 0). */
  readonly backoff?: (attempt: number) => Promise<void>
  /** After each event (a Kafka member heartbeats: a batch applied an event at a time takes a while). */
  readonly afterEach?: () => Promise<unknown>
}

export interface IsolatedOutcome extends BatchOutcome {
  /** The events set aside. */
  readonly deadLettered: readonly JournalRecord[]
}

/**
 * Applies the parts one event at a time, each in its own transaction with its checkpoint (applyBatches),
 * after the batch they make failed again and again. An event that fails `maxAttempts` times on its own,
 * with an error that is its own fault (not `isTransientError`), is set aside (`deadLetter`) and the
 * rest applied; a transient failure is thrown, and the caller retries as before. Slow, and only for
 * the batch that holds the bad event: the caller goes back to whole batches after it.
 */
export async function applyIsolated(
  pool: Pool,
  groupId: string,
  parts: readonly BatchPart[],
  handler: BatchHandler,
  opts: IsolateOptions = {},
): Promise<IsolatedOutcome> {
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  const applied: JournalRecord[] = []
  const deadLettered: JournalRecord[] = []
  const notInJournal: SourcedRecord[] = []
  let duplicates = 0
  for (const part of parts) {
    const single = part.batch.map((b, i) => ({
      source: part.source,
      batch: [b],
      ...(i === part.batch.length - 1 && part.upTo !== undefined ? { upTo: part.upTo } : {}),
    }))
    if (single.length === 0) single.push({ source: part.source, batch: [], upTo: part.upTo })
    for (const one of single) {
      for (let attempt = 1; ; attempt++) {
        try {
          const outcome = await applyBatches(pool, groupId, [one], handler, opts)
          applied.push(...outcome.applied)
          duplicates += outcome.duplicates
          notInJournal.push(...(outcome.notInJournal ?? []))
          break
        } catch (err) {
          const item = one.batch[0]
          if (!item || isTransientError(err)) throw err
          // A step that said `deadLetter` (consumer-pipeline.ts) is not tried again: it knows.
          if (attempt < maxAttempts && !(err instanceof DeadLetterError)) {
            await opts.backoff?.(attempt - 1)
            continue
          }
          const error = (err as Error).message ?? String(err)
          await opts.sink?.({
            groupId,
            source: one.source,
            offset: item.offset,
            record: item.record,
            error,
            attempts: attempt,
          })
          const stored = await deadLetter(pool, groupId, one.source, item, error, attempt, opts)
          if (stored) {
            deadLettered.push(item.record)
            opts.log?.('set an event aside in the dead-letter store', {
              group: groupId,
              eventId: item.record.id,
              type: item.record.type,
              streamId: item.record.streamId,
              streamVersion: item.record.streamVersion,
              source: `${one.source.topic}/${one.source.partition}`,
              offset: item.offset,
              attempts: attempt,
              err: error,
            })
          }
          break
        }
      }
      await opts.afterEach?.()
    }
  }
  return { applied, duplicates, deadLettered, ...(notInJournal.length > 0 ? { notInJournal } : {}) }
}

/**
 * Sets one event aside: the dead letter, the group's stream version of it and its checkpoint past it,
 * in one transaction. Returns false when the checkpoint had already passed it (another member of the
 * group applied or set it aside meanwhile).
 */
async function deadLetter(
  pool: Pool,
  groupId: string,
  source: BatchSource,
  item: { readonly record: JournalRecord; readonly offset: string },
  error: string,
  attempts: number,
  opts: ApplyBatchOptions,
): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    if (opts.neverAppends) await markNeverAppends(client)
    await client.query(
      `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset) VALUES ($1, $2, $3, -1)
       ON CONFLICT DO NOTHING`,
      [groupId, source.topic, source.partition],
    )
    const { rows } = await client.query<{ last_offset: string }>(
      `SELECT last_offset::text FROM consumer_checkpoints
        WHERE group_id = $1 AND topic = $2 AND partition = $3 FOR UPDATE`,
      [groupId, source.topic, source.partition],
    )
    if (BigInt(rows[0]?.last_offset ?? '-1') >= BigInt(item.offset)) return false
    const r = item.record
    await client.query(
      `INSERT INTO dead_letters (group_id, topic, partition, "offset", event_id, event_type, stream_type,
                                 stream_id, stream_version, org_id, chatbot_id, record, error, attempts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (group_id, event_id) DO UPDATE
         SET error = EXCLUDED.error, attempts = dead_letters.attempts + EXCLUDED.attempts,
             dead_lettered_at = now(), redrive_requested_at = NULL`,
      [
        groupId,
        source.topic,
        source.partition,
        item.offset,
        r.id,
        r.type,
        r.streamType,
        r.streamId,
        r.streamVersion,
        r.orgId,
        r.chatbotId,
        // JSON.stringify writes a lone surrogate as an escape: the text is valid UTF-8 whatever it holds.
        JSON.stringify(r),
        truncate(error, 2_000),
        attempts,
      ],
    )
    await recordStreamVersions(client, groupId, [r])
    await client.query(
      `UPDATE consumer_checkpoints SET last_offset = $4, last_occurred_at = $5, updated_at = now()
        WHERE group_id = $1 AND topic = $2 AND partition = $3`,
      [groupId, source.topic, source.partition, item.offset, r.occurredAt],
    )
    return true
  })
}

/**
 * Applies the dead letters of `groupId` that an operator asked to re-drive (`requestRedrive`), each in
 * a transaction of its own with the group's handler: applied, it leaves the store; failing again, it
 * stays with the new error and attempt count, no longer asked for. Its stream version was recorded when
 * it was set aside, so the re-drive hands it to the handler directly, past the group's dedup; the row,
 * locked and deleted in the same transaction, makes it happen once. Returns the events applied.
 */
export async function redriveRequested(
  pool: Pool,
  groupId: string,
  handler: BatchHandler,
  opts: ApplyBatchOptions & { readonly log?: IsolateOptions['log']; readonly limit?: number } = {},
): Promise<JournalRecord[]> {
  const applied: JournalRecord[] = []
  for (let i = 0; i < (opts.limit ?? 100); i++) {
    type Redrive =
      | 'none'
      | { readonly applied: JournalRecord }
      | { readonly failed: string; readonly error: string }
    const outcome = await withTransaction(pool, async (client): Promise<Redrive> => {
      const { rows } = await client.query<{
        id: string
        record: string | null
        topic: string
        partition: number
      }>(
        `SELECT id::text, record, topic, partition FROM dead_letters
          WHERE group_id = $1 AND redrive_requested_at IS NOT NULL
          ORDER BY dead_letters.id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [groupId],
      )
      const row = rows[0]
      if (!row) return 'none'
      if (row.record === null) {
        await client.query('UPDATE dead_letters SET redrive_requested_at = NULL WHERE id = $1', [row.id])
        return { failed: row.id, error: 'a message that is not an event cannot be re-driven' }
      }
      const record = JSON.parse(row.record) as JournalRecord
      try {
        await client.query('SAVEPOINT redrive')
        if (opts.order) await opts.order([record], client, [{ topic: row.topic, partition: row.partition }])
        if (opts.neverAppends) await markNeverAppends(client)
        await handler([record], client, [{ topic: row.topic, partition: row.partition }])
        await client.query('DELETE FROM dead_letters WHERE id = $1', [row.id])
        return { applied: record }
      } catch (err) {
        await client.query('ROLLBACK TO SAVEPOINT redrive')
        const error = (err as Error).message ?? String(err)
        await client.query(
          `UPDATE dead_letters SET redrive_requested_at = NULL, error = $2, attempts = attempts + 1
            WHERE id = $1`,
          [row.id, truncate(error, 2_000)],
        )
        return { failed: row.id, error }
      }
    })
    if (outcome === 'none') break
    if ('applied' in outcome) {
      applied.push(outcome.applied)
      opts.log?.('re-drove a dead letter', { group: groupId, eventId: outcome.applied.id })
    } else {
      opts.log?.('a re-driven dead letter failed again; it stays in the store', {
        group: groupId,
        deadLetter: outcome.failed,
        err: outcome.error,
      })
    }
  }
  return applied
}

interface DeadLetterRow {
  id: string
  group_id: string
  topic: string
  partition: number
  offset: string
  event_id: string | null
  event_type: string | null
  stream_type: string | null
  stream_id: string | null
  stream_version: number | null
  org_id: string | null
  chatbot_id: string | null
  error: string
  attempts: number
  dead_lettered_at: Date
  redrive_requested_at: Date | null
  record?: string | null
}

const COLUMNS = `id::text, group_id, topic, partition, "offset"::text AS offset, event_id, event_type,
  stream_type, stream_id, stream_version, org_id, chatbot_id, error, attempts, dead_lettered_at,
  redrive_requested_at`

function toDeadLetter(r: DeadLetterRow): DeadLetter {
  return {
    id: r.id,
    groupId: r.group_id,
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    eventId: r.event_id,
    eventType: r.event_type,
    streamType: r.stream_type,
    streamId: r.stream_id,
    streamVersion: r.stream_version,
    orgId: r.org_id,
    chatbotId: r.chatbot_id,
    error: r.error,
    attempts: r.attempts,
    deadLetteredAt: r.dead_lettered_at.toISOString(),
    redriveRequestedAt: r.redrive_requested_at?.toISOString() ?? null,
  }
}

/** The dead letters, oldest first, of one group or all. */
export async function listDeadLetters(
  db: Pool | PoolClient,
  filter: { readonly groupId?: string; readonly limit?: number } = {},
): Promise<DeadLetter[]> {
  const { rows } = await db.query<DeadLetterRow>(
    `SELECT ${COLUMNS} FROM dead_letters WHERE ($1::text IS NULL OR group_id = $1) ORDER BY id LIMIT $2`,
    [filter.groupId ?? null, filter.limit ?? 1_000],
  )
  return rows.map(toDeadLetter)
}

/** One dead letter with the event it holds, or undefined. */
export async function showDeadLetter(
  db: Pool | PoolClient,
  id: string,
): Promise<DeadLetterWithRecord | undefined> {
  if (!/^\d{1,18}$/.test(id)) return undefined
  const { rows } = await db.query<DeadLetterRow>(
    `SELECT ${COLUMNS}, record FROM dead_letters WHERE id = $1`,
    [id],
  )
  const row = rows[0]
  if (!row) return undefined
  return { ...toDeadLetter(row), record: row.record ? (JSON.parse(row.record) as JournalRecord) : null }
}

/** How many dead letters each group has (for /readyz and the metrics). */
export async function countDeadLetters(db: Pool | PoolClient): Promise<Record<string, number>> {
  const { rows } = await db.query<{ group_id: string; n: number }>(
    'SELECT group_id, count(*)::int AS n FROM dead_letters GROUP BY group_id ORDER BY group_id',
  )
  return Object.fromEntries(rows.map((r) => [r.group_id, r.n]))
}

/** Selects dead letters by id, or every one (of a group, when given). */
export type DeadLetterSelection =
  | { readonly ids: readonly string[] }
  | { readonly all: true; readonly groupId?: string }

function selectionSql(selection: DeadLetterSelection): { where: string; params: unknown[] } {
  if ('ids' in selection) {
    const ids = selection.ids.filter((id) => /^\d{1,18}$/.test(id))
    return { where: 'id = ANY($1::bigint[])', params: [ids] }
  }
  return { where: '($1::text IS NULL OR group_id = $1)', params: [selection.groupId ?? null] }
}

/**
 * Asks the running consumers to apply these dead letters again (after a fix): the group's next member to
 * look (within a few seconds) does. Returns how many were asked for.
 */
export async function requestRedrive(db: Pool | PoolClient, selection: DeadLetterSelection): Promise<number> {
  const { where, params } = selectionSql(selection)
  const { rowCount } = await db.query(
    `UPDATE dead_letters SET redrive_requested_at = now() WHERE ${where}`,
    params,
  )
  return rowCount ?? 0
}

/** Deletes dead letters for good (the events stay unapplied). Returns how many. */
export async function discardDeadLetters(
  db: Pool | PoolClient,
  selection: DeadLetterSelection,
): Promise<number> {
  const { where, params } = selectionSql(selection)
  const { rowCount } = await db.query(`DELETE FROM dead_letters WHERE ${where}`, params)
  return rowCount ?? 0
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/**
 * A consumer's re-drive poller (startRedrivePoller) with its options: the dead letters an operator asked
 * to re-drive are applied by the consumer's own handler, counted in `stats.redriven`, and told to its
 * owner as applied events. Both backends start it once they have joined.
 */
export function startConsumerRedrive(
  opts: ConsumerOptions,
  stats: ConsumerStats,
  log: IsolateOptions['log'],
): { stop(): Promise<void> } {
  return startRedrivePoller(opts.pool, opts.groupId, opts.handler, {
    order: opts.orderBatch,
    neverAppends: opts.neverAppends,
    intervalMs: opts.redriveIntervalMs,
    log,
    onRedriven: (records) => {
      stats.redriven += records.length
      opts.onApplied?.(records)
    },
  })
}

/**
 * Looks every `intervalMs` for dead letters of the consumer's group that an operator asked to re-drive,
 * and applies them (redriveRequested), one look at a time. Failures are logged and looked at again.
 */
export function startRedrivePoller(
  pool: Pool,
  groupId: string,
  handler: BatchHandler,
  opts: ApplyBatchOptions & {
    readonly intervalMs?: number
    readonly log?: IsolateOptions['log']
    readonly onRedriven?: (records: readonly JournalRecord[]) => void
  },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined
  const look = () => {
    if (running) return
    running = redriveRequested(pool, groupId, handler, opts)
      .then((records) => {
        if (records.length > 0) opts.onRedriven?.(records)
      })
      .catch((err) =>
        opts.log?.('could not re-drive dead letters', { group: groupId, err: (err as Error).message }),
      )
      .finally(() => {
        running = undefined
      })
  }
  const timer = setInterval(look, opts.intervalMs ?? 2_000)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
