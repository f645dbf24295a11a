import type { Admin } from 'kafkajs'
import type { ClientBase, Pool } from 'pg'
import type { EventLogBackend } from './event-log.ts'
import { JOURNAL_TOPIC } from './journal-consumer.ts'
import { partitionExpression } from './journal-reader.ts'
import type { StreamType } from './records.ts'
import { RELAY_GROUP } from './relay.ts'
import { topicFor } from './topics.ts'

/** How far a consumer group, all its partitions together, is behind what was committed. */
export interface GroupLag {
  /**
   * Events committed that the group has not applied yet (in Kafka mode, those not yet relayed too); on
   * the journal (and the relay's backlog), counted up to MAX_COUNTED_EVENTS.
   */
  readonly events: number
  /**
   * When the oldest of them was committed; null when there are none. Exact on the journal; in Kafka mode
   * the earliest it can have been (see OldestPendingEstimator), so never later than the truth.
   */
  readonly oldestPendingAt: Date | null
}

export interface LagProbe {
  /** Looks at the log's end and the group's checkpoints now. */
  probe(): Promise<GroupLag>
  close(): Promise<void>
}

export interface LagProbeOptions {
  readonly pool: Pool
  readonly eventLog: EventLogBackend
  readonly groupId: string
  readonly streamTypes: readonly StreamType[]
  readonly now?: () => Date
}

/**
 * Measures a consumer group's progress from the log and the checkpoints in Postgres, whichever process
 * of the group asks and whatever partitions it owns: the answer is the same for the whole group, even
 * while none of its processes runs.
 */
export function createLagProbe(opts: LagProbeOptions): LagProbe {
  const { pool, eventLog, groupId, streamTypes } = opts
  if (eventLog.kind === 'journal') {
    return {
      probe: () => journalGroupLag(pool, groupId, eventLog.partitions ?? 1, streamTypes),
      close: async () => {},
    }
  }
  const now = opts.now ?? (() => new Date())
  const estimator = new OldestPendingEstimator()
  const topics = streamTypes.map((t) => topicFor(t, eventLog.topicPrefix))
  let admin: Promise<Admin> | undefined
  const connected = () => {
    admin ??= (async () => {
      const a = eventLog.kafka.admin()
      await a.connect()
      return a
    })().catch((err) => {
      admin = undefined
      throw err
    })
    return admin
  }
  return {
    async probe() {
      const at = now().getTime()
      // Committed, not yet in Kafka: the relay's backlog is the group's too.
      const relayed = await journalGroupLag(pool, RELAY_GROUP, 1, streamTypes)
      let looks: PartitionLook[]
      try {
        looks = await kafkaLooks(await connected(), pool, groupId, topics)
      } catch (err) {
        const a = admin
        admin = undefined
        await a?.then((c) => c.disconnect()).catch(() => {})
        throw err
      }
      const relayOldest = relayed.oldestPendingAt?.getTime() ?? null
      const estimate = estimator.estimate(looks, at, relayOldest)
      const bounds = [estimate.oldest, relayOldest]
      if (estimate.unbounded) bounds.push((await firstJournalEvent(pool, streamTypes)) ?? at)
      const known = bounds.filter((b): b is number => b !== null)
      return {
        events: relayed.events + looks.reduce((n, l) => n + l.pending, 0),
        oldestPendingAt: known.length > 0 ? new Date(Math.min(...known)) : null,
      }
    },
    async close() {
      const a = admin
      admin = undefined
      await a?.then((c) => c.disconnect()).catch(() => {})
    },
  }
}

/** One partition of a Kafka consumer group at one look. */
export interface PartitionLook {
  /** `topic/partition` */
  readonly partition: string
  /** Messages past the group's checkpoint. */
  readonly pending: number
  /** When the last event the group applied from it was committed (ms); null when none is recorded. */
  readonly lastAppliedAt: number | null
}

/**
 * In Kafka mode, when the oldest message a group has not applied was committed, without reading it: the
 * earliest time it can have been, from what is known. Of each partition behind:
 * - its pending messages were committed after the last one the group applied from it (`lastAppliedAt`,
 *   recorded with the checkpoint);
 * - if it was not behind at the previous look, they were published since that look, so committed since
 *   then, or they were waiting in the relay then (not before the relay's oldest pending event).
 * The later of the two holds. A partition idle for an hour that just got a message is thus seconds
 * behind, not an hour; a backlog the relay flushed into Kafka at once keeps its age. At the first look
 * of a partition already behind, only the first bound is known (after a restart, the group's own
 * checkpoint); with no checkpoint either, it is `unbounded` and the caller knows better (the journal).
 */
export class OldestPendingEstimator {
  /** Per partition behind at the previous look: the earliest its pending messages can have been committed. */
  private readonly floors = new Map<string, number | null>()
  private previous: { readonly at: number; readonly relayOldest: number | null } | undefined

  estimate(
    looks: readonly PartitionLook[],
    at: number,
    relayOldest: number | null,
  ): { oldest: number | null; unbounded: boolean } {
    let oldest: number | null = null
    let unbounded = false
    const behind = new Set<string>()
    for (const look of looks) {
      if (look.pending <= 0) continue
      behind.add(look.partition)
      let floor = this.floors.get(look.partition)
      if (floor === undefined) {
        const previous = this.previous
        floor = previous ? Math.min(previous.at, previous.relayOldest ?? previous.at) : null
        this.floors.set(look.partition, floor)
      }
      const bound = Math.max(
        look.lastAppliedAt ?? Number.NEGATIVE_INFINITY,
        floor ?? Number.NEGATIVE_INFINITY,
      )
      if (bound === Number.NEGATIVE_INFINITY) unbounded = true
      else oldest = oldest === null ? bound : Math.min(oldest, bound)
    }
    for (const partition of [...this.floors.keys()]) if (!behind.has(partition)) this.floors.delete(partition)
    this.previous = { at, relayOldest }
    return { oldest, unbounded }
  }
}

async function kafkaLooks(
  admin: Admin,
  pool: Pool,
  groupId: string,
  topics: readonly string[],
): Promise<PartitionLook[]> {
  const [offsets, checkpoints] = await Promise.all([
    Promise.all(topics.map(async (t) => [t, await admin.fetchTopicOffsets(t)] as const)),
    pool.query<{ topic: string; partition: number; last_offset: string; last_occurred_at: Date | null }>(
      `SELECT topic, partition, last_offset::text, last_occurred_at FROM consumer_checkpoints
        WHERE group_id = $1 AND topic = ANY($2)`,
      [groupId, topics],
    ),
  ])
  const done = new Map(checkpoints.rows.map((r) => [`${r.topic}/${r.partition}`, r]))
  return offsets.flatMap(([topic, partitions]) =>
    partitions.map((p): PartitionLook => {
      const key = `${topic}/${p.partition}`
      const checkpoint = done.get(key)
      const low = BigInt(p.low)
      const after =
        checkpoint && BigInt(checkpoint.last_offset) >= 0n ? BigInt(checkpoint.last_offset) + 1n : low
      const pending = BigInt(p.high) - (after > low ? after : low)
      return {
        partition: key,
        pending: pending > 0n ? Number(pending) : 0,
        lastAppliedAt: checkpoint?.last_occurred_at?.getTime() ?? null,
      }
    }),
  )
}

/**
 * Pending events are counted up to this many: the count is for operators, and counting a backlog of
 * millions every few seconds would take a core from the projector catching up with it.
 */
export const MAX_COUNTED_EVENTS = 100_000

/**
 * Committed journal events of `streamTypes` past a journal-backed group's checkpoints (one per virtual
 * partition), up to `maxCounted`, and when the first of them (in journal order: commit order, give
 * or take a transaction's length) was committed.
 *
 * Committed, not only readable: an event behind a transaction still running is not readable yet (see
 * journal.ts), but it is pending all the same, and since when matters. Counting only readable events,
 * a probe said a group was up to date while another transaction held the events back, and the Kafka
 * estimate (OldestPendingEstimator) took such events, not yet in the relay's backlog either, for events
 * committed after its previous look.
 */
export async function journalGroupLag(
  db: Pool | ClientBase,
  groupId: string,
  partitions: number,
  streamTypes: readonly StreamType[],
  maxCounted = MAX_COUNTED_EVENTS,
): Promise<GroupLag> {
  // Each partition's checkpoint, read once (an array indexed by partition), so that the journal is read
  // in position order from the earliest and the scan stops at the count's limit.
  const { rows } = await db.query<{ events: number; oldest: Date | null }>(
    `WITH checkpoints AS (
       SELECT array_agg(coalesce(c.last_offset, -1) ORDER BY p.partition) AS offsets
         FROM generate_series(0, $3::int - 1) AS p(partition)
         LEFT JOIN consumer_checkpoints c ON c.group_id = $1 AND c.topic = $4 AND c.partition = p.partition
     ), pending AS (
       SELECT j.position, j.occurred_at
         FROM event_journal j
        WHERE j.position > (SELECT min(o) FROM checkpoints, unnest(offsets) AS o)
          AND j.stream_type = ANY($2::text[])
          AND j.position > (SELECT offsets FROM checkpoints)[${partitionExpression('$3::int', 'j.stream_id')} + 1]
        ORDER BY j.position
        LIMIT $5
     )
     SELECT count(*)::int AS events, (SELECT occurred_at FROM pending ORDER BY position LIMIT 1) AS oldest
       FROM pending`,
    [groupId, streamTypes, partitions, JOURNAL_TOPIC, maxCounted],
  )
  return { events: rows[0]!.events, oldestPendingAt: rows[0]!.oldest }
}

/** When the first journal event of `streamTypes` was committed (ms), or null when there is none. */
async function firstJournalEvent(pool: Pool, streamTypes: readonly StreamType[]): Promise<number | null> {
  const { rows } = await pool.query<{ occurred_at: Date }>(
    'SELECT occurred_at FROM event_journal WHERE stream_type = ANY($1::text[]) ORDER BY position LIMIT 1',
    [streamTypes],
  )
  return rows[0]?.occurred_at.getTime() ?? null
}
