import { advisoryLockKey, delay, retryDelayMs, Waiter, withTransaction } from '@cas/db'
import type { ClientBase, Pool, PoolClient } from 'pg'
import { applyBatch, applyBatches, type SourcedRecord } from './apply-batch.ts'
import type { ConsumerOptions, EventConsumer, PartitionLag } from './consumer.ts'
import { ConsumerLifecycle, newConsumerStats, recordOutcome } from './consumer.ts'
import { DeadLetterError } from './consumer-pipeline.ts'
import { applyIsolated, DEFAULT_MAX_ATTEMPTS, startConsumerRedrive } from './dead-letters.ts'
import { partitionExpression, READABLE_POSITION_BOUND, readJournal } from './journal-reader.ts'
import { BATCH_RETRY, IN_BATCH_RETRY } from './retry-policies.ts'

export interface JournalConsumerOptions extends ConsumerOptions {
  /**
   * Virtual partitions: streams are hashed onto this many partitions, each with its own checkpoint, so
   * that several consumers of one group can split the work, and one consumer can apply several batches
   * at once (`partitionsConcurrently`). Default 1. Members of a group must agree on it; a group that
   * starts with another count than its checkpoints were kept for has them redrawn (`alignCheckpoints`).
   */
  readonly partitions?: number
  /** How long to wait before looking again when there was nothing new (default 20 ms). */
  readonly pollIntervalMs?: number
  /**
   * The longest wait between looks while nothing new comes (default 100 ms): after
   * `IDLE_POLLS_BEFORE_BACKOFF` looks in a row that applied nothing, each wait doubles from
   * `pollIntervalMs` up to this; the first look that applies events brings it back to `pollIntervalMs`.
   */
  readonly maxIdlePollIntervalMs?: number
  /** Injected for tests: how a wait between looks is made (`wake()` of the waiter ends it early). */
  readonly sleep?: (ms: number, waiter: Waiter) => Promise<void>
  /** How often membership is re-examined to rebalance partitions (default 500 ms). */
  readonly rebalanceIntervalMs?: number
}

export const JOURNAL_TOPIC = '$journal'
// Second advisory-lock key marking group membership; partition locks use 0..partitions-1.
const MEMBER_KEY = 65_535
// Second advisory-lock key (transaction-scoped) under which members starting at once align checkpoints.
const ALIGN_KEY = 65_534
/**
 * Looks in a row that applied nothing (nothing new, or only other stream types' events) before the wait
 * between looks starts to grow: a consumer between two commits of a busy writer (DSTC11's analysis commits
 * every 35–100 ms) keeps the short wait; one with nothing to do for longer looks less often. Every consumer
 * of the embedded log looked every 20 ms while idle: 85–107 journal reads a second, 55 ms of Postgres CPU a
 * second with the all-in-one idle (bench/FINDINGS.md, "perf4"), and the analysis consumer read every
 * analysis commit's events during a re-analysis only to move its checkpoints past them.
 */
export const IDLE_POLLS_BEFORE_BACKOFF = 10

/** The wait after `idlePolls` looks in a row that applied nothing. */
export function idlePollWaitMs(
  idlePolls: number,
  pollIntervalMs: number,
  maxIdlePollIntervalMs: number,
): number {
  const over = idlePolls - IDLE_POLLS_BEFORE_BACKOFF
  if (over <= 0) return pollIntervalMs
  return Math.max(pollIntervalMs, Math.min(maxIdlePollIntervalMs, pollIntervalMs * 2 ** Math.min(over, 16)))
}

/**
 * The embedded backend: reads the Postgres journal directly, with the same checkpoint-in-transaction and
 * dedup as the Kafka backend (apply-batch.ts). A member applies the batches of up to
 * `partitionsConcurrently` of its partitions at once, each in its own transaction, as the Kafka backend
 * does with a fetch's partitions: a stream's events stay in one partition, in order.
 *
 * Group membership and partition ownership are Postgres session advisory locks on one connection held
 * for the consumer's life: each member holds a shared "member" lock, and exclusive locks on the
 * partitions it owns. Each member aims for ceil(partitions / members) partitions, releasing surplus and
 * taking free ones; a member that dies loses its connection and with it its locks, and the others pick
 * its partitions up. Ownership is only a work split: correctness comes from the locked checkpoint.
 */
export function createJournalConsumer(opts: JournalConsumerOptions): EventConsumer {
  const stats = newConsumerStats(opts.droppedEvents)
  const partitionCount = opts.partitions ?? 1
  const groupKey = groupLockKey(opts.groupId)
  const waiter = new Waiter()
  const log = opts.log ?? (() => {})
  const owned = new Set<number>()
  let lockClient: PoolClient | undefined
  let loop: Promise<void> | undefined
  let lastRebalance = 0
  let redrive: { stop(): Promise<void> } | undefined
  // Batches of each partition that failed in a row: at `maxAttempts`, the next one is applied an event
  // at a time, and the event at fault set aside (dead-letters.ts).
  const failuresOf = new Map<number, number>()
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
  const batchOptions = { order: opts.orderBatch, neverAppends: opts.neverAppends }

  // The lock connection's error listener, taken off when the connection goes back to the pool whole:
  // left on, every start and stop of a consumer on the same pool added one more to a pooled connection.
  let lockLost: ((err: Error) => void) | undefined
  const connect = async () => {
    const client = await opts.pool.connect()
    const lost = (err: Error) => {
      // The locks went with the connection: own nothing until reconnected, and give the dead connection
      // back to the pool to be discarded (kept, it would count as lent out forever, and pool.end() at
      // shutdown would wait for it).
      if (lockClient === client) {
        lockClient = undefined
        owned.clear()
        client.release(err)
      }
    }
    client.on('error', lost)
    try {
      await client.query('SELECT pg_advisory_lock_shared($1, $2)', [groupKey, MEMBER_KEY])
    } catch (err) {
      client.release(err as Error)
      throw err
    }
    lockClient = client
    lockLost = lost
  }

  const rebalance = async () => {
    if (!lockClient) await connect()
    const client = lockClient!
    const { rows } = await client.query<{ members: number }>(
      `SELECT count(*)::int AS members FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND mode = 'ShareLock' AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = $1::bigint::oid AND objid = $2::bigint::oid`,
      [groupKey, MEMBER_KEY],
    )
    const target = Math.ceil(partitionCount / Math.max(1, rows[0]?.members ?? 1))
    for (const p of [...owned].sort((a, b) => b - a)) {
      if (owned.size <= target) break
      await client.query('SELECT pg_advisory_unlock($1, $2)', [groupKey, p])
      owned.delete(p)
    }
    for (let p = 0; p < partitionCount && owned.size < target; p++) {
      if (owned.has(p)) continue
      const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
        groupKey,
        p,
      ])
      if (got.rows[0]?.ok) owned.add(p)
    }
    lastRebalance = Date.now()
    stats.partitions = [...owned].sort((a, b) => a - b).map((p) => `${JOURNAL_TOPIC}/${p}`)
  }

  const maxBatchSize = opts.maxBatchSize ?? 500
  /**
   * One read for every partition this member owns, from the lowest of their checkpoints, then each
   * partition's batch applied in its own transaction, up to `partitionsConcurrently` at a time. A
   * partition holds about 1/partitions of the journal's events: looking at `partitions` times the batch
   * size gives each batch about `maxBatchSize` events, and the read returns at most that many per owned
   * partition. A partition whose checkpoint is ahead of the others' gets events it has applied again,
   * and skips them (apply-batch.ts). Says whether it read nothing new ('idle'), read only events of
   * other stream types and moved the checkpoints past them ('skipped'), or applied events ('applied').
   */
  const pollOwned = async (): Promise<'idle' | 'skipped' | 'applied'> => {
    const partitions = [...owned].sort((a, b) => a - b)
    if (partitions.length === 0) return 'idle'
    const { records, partitionOf, scannedTo } = await readJournal(opts.pool, {
      after: { lowestCheckpointOf: { groupId: opts.groupId, topic: JOURNAL_TOPIC, partitions } },
      limit: maxBatchSize * partitionCount,
      maxRecords: maxBatchSize * partitions.length,
      streamTypes: opts.streamTypes,
      partitions: { of: partitions, count: partitionCount },
    })
    if (scannedTo === '') return 'idle'
    const batches = new Map<number, SourcedRecord[]>()
    for (const [i, record] of records.entries()) {
      const batch = batches.get(partitionOf[i]!) ?? []
      batch.push({ record, offset: record.position })
      batches.set(partitionOf[i]!, batch)
    }
    // The partitions with nothing in the read move on together, in one statement rather than a
    // transaction each: the read, from the lowest of their checkpoints, saw all they had up to here.
    await moveCheckpoints(
      opts.pool,
      opts.groupId,
      partitions.filter((p) => !batches.has(p)),
      scannedTo,
    )
    if (batches.size === 0) return 'skipped'
    // A read of few events (a consumer keeping up) is applied in one transaction for all its partitions:
    // a transaction per partition ran the same dozen statements for a handful of events each (DSTC11's
    // analysis: 2.6 projector transactions per analysis commit; bench/FINDINGS.md, "Postgres per message").
    // A stream stays in one partition, so its events keep their order. A read of many (a backlog) goes a
    // partition at a time, `partitionsConcurrently` at once; so does a read with a partition whose batch
    // failed, and one whose combined transaction failed: one bad event never holds the other partitions.
    if (
      batches.size > 1 &&
      records.length <= maxBatchSize &&
      [...batches.keys()].every((p) => !failuresOf.has(p))
    ) {
      try {
        const outcome = await applyBatches(
          opts.pool,
          opts.groupId,
          [...batches]
            .sort(([a], [b]) => a - b)
            .map(([partition, batch]) => ({
              source: { topic: JOURNAL_TOPIC, partition },
              batch,
              upTo: scannedTo,
            })),
          opts.handler,
          batchOptions,
        )
        recordOutcome(stats, opts, outcome)
        return 'applied'
      } catch (err) {
        log('journal consumer batch of several partitions failed; applying them one by one', {
          group: opts.groupId,
          err: (err as Error).message,
        })
        if (!life.running) return 'applied'
      }
    }
    await inTurns([...batches], opts.partitionsConcurrently ?? 1, async ([partition, batch]) => {
      if (!life.running) return
      const source = { topic: JOURNAL_TOPIC, partition }
      try {
        const outcome =
          (failuresOf.get(partition) ?? 0) >= maxAttempts
            ? await applyIsolated(
                opts.pool,
                opts.groupId,
                [{ source, batch, upTo: scannedTo }],
                opts.handler,
                {
                  ...batchOptions,
                  maxAttempts,
                  log,
                  backoff: (attempt) => delay(retryDelayMs(IN_BATCH_RETRY, attempt)),
                },
              )
            : await applyBatch(opts.pool, opts.groupId, source, batch, opts.handler, {
                ...batchOptions,
                upTo: scannedTo,
              })
        failuresOf.delete(partition)
        recordOutcome(stats, opts, outcome)
      } catch (err) {
        // A step's `deadLetter` (consumer-pipeline.ts): straight to an event at a time, to set it aside.
        failuresOf.set(
          partition,
          err instanceof DeadLetterError ? maxAttempts : (failuresOf.get(partition) ?? 0) + 1,
        )
        throw err
      }
    })
    return 'applied'
  }

  const run = async () => {
    let failures = 0
    // Asked at start and whenever the last poll applied events: an idle consumer polls without asking,
    // and so does one whose last read held only other stream types' events (it queued nothing; the
    // analysis consumer reads past its own service's results after every analysis commit, and asking
    // counted the open jobs each time: bench/FINDINGS.md "perf450").
    let applied = true
    // Looks in a row that applied nothing: the wait between looks grows with them (idlePollWaitMs).
    let idlePolls = 0
    const pollIntervalMs = opts.pollIntervalMs ?? 20
    const maxIdlePollIntervalMs = opts.maxIdlePollIntervalMs ?? 100
    const sleep = (ms: number) => (opts.sleep ? opts.sleep(ms, waiter) : waiter.sleep(ms))
    while (life.running) {
      try {
        if (!lockClient || Date.now() - lastRebalance >= (opts.rebalanceIntervalMs ?? 500)) await rebalance()
        if (opts.admit && (applied || stats.paused)) {
          stats.paused = !(await opts.admit())
          if (stats.paused) {
            await waiter.sleep(opts.pauseIntervalMs ?? 250)
            continue
          }
        }
        const polled = await pollOwned()
        applied = polled === 'applied'
        idlePolls = applied ? 0 : idlePolls + 1
        failures = 0
        if (polled === 'idle') await sleep(idlePollWaitMs(idlePolls, pollIntervalMs, maxIdlePollIntervalMs))
      } catch (err) {
        stats.errors++
        log('journal consumer batch failed; retrying', {
          group: opts.groupId,
          err: (err as Error).message,
          attempts: Object.fromEntries(failuresOf),
        })
        await waiter.sleep(retryDelayMs(BATCH_RETRY, failures++))
      }
    }
  }

  // A stop asked for meanwhile (life.running false) starts nothing more; stop() waits for this to end.
  const begin = async () => {
    await alignCheckpoints(opts.pool, opts.groupId, partitionCount)
    if (!life.running) return
    await rebalance()
    if (!life.running) return
    loop = run()
    redrive = startConsumerRedrive(opts, stats, log)
  }

  /** Stops the loop and the dead-letter poller, and gives the lock connection back with its locks. */
  const end = async () => {
    waiter.wake()
    await redrive?.stop()
    await loop
    redrive = undefined
    loop = undefined
    const client = lockClient
    lockClient = undefined
    owned.clear()
    stats.partitions = []
    if (!client) return
    try {
      await client.query('SELECT pg_advisory_unlock_all()')
      if (lockLost) client.off('error', lockLost)
      client.release()
    } catch (err) {
      client.release(err as Error)
    }
  }

  const life = new ConsumerLifecycle(begin, end)
  return {
    groupId: opts.groupId,
    stats,
    lag: () => journalLag(opts.pool, opts.groupId, [...owned], partitionCount, opts.streamTypes),
    // A start that fails gives back the lock connection, with the group's member lock and any
    // partition's; a stop during a start gives back a lock connection the start took after it.
    start: () => life.start(),
    stop: () => life.stop(),
  }
}

/**
 * Runs `apply` over `items`, at most `limit` at a time. Every call settles before it returns; the first
 * failure, if any, is thrown then.
 */
async function inTurns<T>(
  items: readonly T[],
  limit: number,
  apply: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0
  const failures: unknown[] = []
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!
      await apply(item).catch((err: unknown) => failures.push(err))
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  if (failures.length > 0) throw failures[0]
}

/**
 * Moves the checkpoints of `partitions` to `to` where they are behind it. Only for partitions a read
 * from at or below their checkpoints found nothing for up to `to`: a member that applies one of them
 * meanwhile (a rebalance under way) holds its row, and this waits for it.
 */
async function moveCheckpoints(pool: Pool, groupId: string, partitions: readonly number[], to: string) {
  if (partitions.length === 0) return
  await pool.query({
    name: 'cas-journal-checkpoints-move',
    text: `UPDATE consumer_checkpoints SET last_offset = $4, updated_at = now()
      WHERE group_id = $1 AND topic = $2 AND partition = ANY($3::int[]) AND last_offset < $4`,
    values: [groupId, JOURNAL_TOPIC, partitions, to],
  })
}

/**
 * Makes the group's journal checkpoints one per partition, 0 to `partitions` - 1, before its first
 * batch. A new group gets them all at once, from the start of the journal: with only those of the
 * partitions polled so far, the lag (counted from the lowest) could read 0 while another partition had
 * not started. A group whose checkpoints were kept for another count (the partition count changed, as
 * from 1 to the embedded default of `EMBEDDED_EVENT_LOG`) has them redrawn, every partition from the
 * lowest: nothing is skipped, and what is read again is dropped by stream version (apply-batch.ts).
 */
export async function alignCheckpoints(pool: Pool, groupId: string, partitions: number): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [groupLockKey(groupId), ALIGN_KEY])
    const { rows } = await client.query<{ partition: number; last_offset: string }>(
      `SELECT partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2
        ORDER BY partition FOR UPDATE`,
      [groupId, JOURNAL_TOPIC],
    )
    if (rows.length === partitions && rows.every((r, i) => r.partition === i)) return
    let from = -1n
    for (const [i, row] of rows.entries()) {
      if (i === 0 || BigInt(row.last_offset) < from) from = BigInt(row.last_offset)
    }
    await setCheckpoints(client, groupId, partitions, from.toString())
  })
}

/**
 * Replaces a group's journal checkpoints with one per partition, 0 to `partitions` - 1, all at `offset`
 * (inside the caller's transaction).
 */
export async function setCheckpoints(
  client: ClientBase,
  groupId: string,
  partitions: number,
  offset: string,
): Promise<void> {
  await client.query('DELETE FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2', [
    groupId,
    JOURNAL_TOPIC,
  ])
  await client.query(
    `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset)
     SELECT $1, $2, p, $4 FROM generate_series(0, $3::int - 1) p`,
    [groupId, JOURNAL_TOPIC, partitions, offset],
  )
}

/** The group's first advisory-lock key. */
function groupLockKey(groupId: string): number {
  return advisoryLockKey(`journal-consumer:${groupId}`)
}

/**
 * Readable journal events a journal-backed group of `partitions` virtual partitions has not yet passed
 * (its slowest partition counts). A partition without a checkpoint yet (not yet owned, or nothing applied
 * since it was) has passed nothing: counting only the checkpoints there are said "caught up" while a
 * partition had not started.
 */
export async function journalTotalLag(
  db: Pool | ClientBase,
  groupId: string,
  partitions = 1,
): Promise<number> {
  const { rows } = await db.query<{ lag: number }>(
    `SELECT count(*)::int AS lag FROM event_journal
      WHERE position > (SELECT CASE WHEN count(*) < $3 THEN -1 ELSE min(last_offset) END
                          FROM consumer_checkpoints WHERE group_id = $1 AND topic = $2)
        AND position < ${READABLE_POSITION_BOUND}`,
    [groupId, JOURNAL_TOPIC, partitions],
  )
  return rows[0]!.lag
}

/**
 * Per owned virtual partition, the readable journal events of the consumed stream types past the
 * partition's checkpoint.
 */
async function journalLag(
  db: Pool,
  groupId: string,
  partitions: readonly number[],
  partitionCount: number,
  streamTypes: readonly string[],
): Promise<PartitionLag[]> {
  if (partitions.length === 0) return []
  const { rows } = await db.query<{ partition: number; lag: number }>(
    `SELECT p.partition, count(j.position)::int AS lag
       FROM unnest($2::int[]) AS p(partition)
       LEFT JOIN consumer_checkpoints c ON c.group_id = $1 AND c.topic = $3 AND c.partition = p.partition
       LEFT JOIN event_journal j
              ON j.position > coalesce(c.last_offset, -1)
             AND j.position < ${READABLE_POSITION_BOUND}
             AND j.stream_type = ANY($5::text[])
             AND ${partitionExpression('$4::int', 'j.stream_id')} = p.partition
      GROUP BY p.partition ORDER BY p.partition`,
    [groupId, partitions, JOURNAL_TOPIC, partitionCount, streamTypes],
  )
  return rows.map((r) => ({ topic: JOURNAL_TOPIC, partition: r.partition, lag: r.lag }))
}
