import { withTransaction } from '@cas/db'
import type { Pool, PoolClient } from 'pg'
import type { BatchSource, SourcedRecord } from './apply-batch.ts'

// Events a Kafka consumer group left out because the journal does not hold them (ApplyBatchOptions.
// verifyInJournal; migrations 0053 and 0055): what Kafka still has of a journal that a restored backup lost.
// The operator lists and acknowledges them with `npm run journal-conflicts` (docs/operations.md, Backups).

/**
 * Records the events left out as not in the journal, once per group and event (a redelivery adds none).
 * An event the operator has acknowledged (for another group) comes in acknowledged: the operator
 * acknowledges an event, whichever groups have read past it yet.
 */
export async function recordJournalConflicts(
  client: PoolClient,
  groupId: string,
  lost: readonly (SourcedRecord & { readonly source: BatchSource })[],
) {
  await client.query({
    name: 'cas-consumer-journal-conflicts-record',
    text: `INSERT INTO journal_conflicts
       (group_id, event_id, event_type, chatbot_id, stream_type, stream_id, stream_version, position,
        source_topic, source_partition, source_offset, acknowledged_at)
     SELECT $1, u.*,
            (SELECT max(j.acknowledged_at) FROM journal_conflicts j WHERE j.event_id = u.event_id)
       FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::uuid[], $7::int[], $8::bigint[],
                   $9::text[], $10::int[], $11::bigint[])
            AS u(event_id, event_type, chatbot_id, stream_type, stream_id, stream_version, position,
                 source_topic, source_partition, source_offset)
     ON CONFLICT (group_id, event_id) DO NOTHING`,
    values: [
      groupId,
      lost.map((b) => b.record.id),
      lost.map((b) => b.record.type),
      lost.map((b) => b.record.chatbotId),
      lost.map((b) => b.record.streamType),
      lost.map((b) => b.record.streamId),
      lost.map((b) => b.record.streamVersion),
      lost.map((b) => b.record.position),
      lost.map((b) => b.source.topic),
      lost.map((b) => b.source.partition),
      lost.map((b) => b.offset),
    ],
  })
}

/**
 * How many events each group left out as not in the journal that the operator has not acknowledged yet
 * (none listed: no group has any).
 */
export async function countJournalConflicts(db: Pool): Promise<Record<string, number>> {
  const { rows } = await db.query<{ group_id: string; n: number }>(
    `SELECT group_id, count(*)::int AS n FROM journal_conflicts WHERE acknowledged_at IS NULL
      GROUP BY group_id ORDER BY group_id`,
  )
  return Object.fromEntries(rows.map((r) => [r.group_id, r.n]))
}

/** One event left out as not in the journal, once however many consumer groups left it out. No payload. */
export interface JournalConflict {
  readonly eventId: string
  /** Null for an event recorded before migration 0055. */
  readonly eventType: string | null
  readonly streamType: string
  /** The chatbot's id for a chatbot stream, the internal conversation id for a conversation's. */
  readonly streamId: string
  /** Null for an event recorded before migration 0055. */
  readonly chatbotId: string | null
  readonly streamVersion: number
  /** Where Kafka holds it: where the first group to leave it out read it. */
  readonly topic: string
  readonly partition: number
  readonly offset: string
  /** The consumer groups that left it out, by name. */
  readonly groups: readonly string[]
  /** When a group first left it out. */
  readonly leftOutAt: string
  /** When the operator acknowledged it; null while not. */
  readonly acknowledgedAt: string | null
}

/** Every event left out as not in the journal, once each, in the order they were first left out. */
export async function listJournalConflicts(db: Pool): Promise<JournalConflict[]> {
  const { rows } = await db.query<{
    event_id: string
    event_type: string | null
    stream_type: string
    stream_id: string
    chatbot_id: string | null
    stream_version: number
    source_topic: string
    source_partition: number
    source_offset: string
    groups: string[]
    left_out_at: Date
    acknowledged_at: Date | null
  }>(
    `SELECT first.event_id, first.event_type, first.stream_type, first.stream_id, first.chatbot_id,
            first.stream_version, first.source_topic, first.source_partition, first.source_offset::text,
            agg.groups, agg.left_out_at, agg.acknowledged_at
       FROM (SELECT DISTINCT ON (event_id) * FROM journal_conflicts ORDER BY event_id, recorded_at, group_id) first
       JOIN (SELECT event_id, array_agg(group_id ORDER BY group_id) AS groups, min(recorded_at) AS left_out_at,
                    CASE WHEN bool_and(acknowledged_at IS NOT NULL) THEN max(acknowledged_at) END AS acknowledged_at
               FROM journal_conflicts GROUP BY event_id) agg ON agg.event_id = first.event_id
      ORDER BY agg.left_out_at, first.stream_type, first.stream_id, first.stream_version, first.event_id`,
  )
  return rows.map((r) => ({
    eventId: r.event_id,
    eventType: r.event_type,
    streamType: r.stream_type,
    streamId: r.stream_id,
    chatbotId: r.chatbot_id,
    streamVersion: r.stream_version,
    topic: r.source_topic,
    partition: r.source_partition,
    offset: r.source_offset,
    groups: r.groups,
    leftOutAt: r.left_out_at.toISOString(),
    acknowledgedAt: r.acknowledged_at?.toISOString() ?? null,
  }))
}

export type JournalConflictSelection = { readonly all: true } | { readonly eventIds: readonly string[] }

export type AcknowledgeOutcome =
  /** `acknowledged`: events acknowledged now (those acknowledged before are not counted again). */
  | { readonly ok: true; readonly acknowledged: number }
  /** Ids that no group left out: nothing was acknowledged. */
  | { readonly ok: false; readonly unknown: readonly string[] }

/**
 * Acknowledges events left out as not in the journal, in every group that left them out: /readyz no
 * longer counts them. Acknowledging again changes nothing; any id unknown changes nothing at all.
 */
export function acknowledgeJournalConflicts(
  db: Pool,
  selection: JournalConflictSelection,
): Promise<AcknowledgeOutcome> {
  return withTransaction(db, async (client) => {
    // Waits for the consumer batches under way that record conflicts, and holds off new ones until this
    // commits (reads go on): a row a batch inserted but had not committed would be invisible to the UPDATE
    // below, and one it inserted having read the acknowledgements before this commits would come in
    // unacknowledged; either way /readyz would count an event the operator acknowledged.
    await client.query('LOCK TABLE journal_conflicts IN SHARE ROW EXCLUSIVE MODE')
    if ('eventIds' in selection) {
      const { rows } = await client.query<{ id: string }>(
        `SELECT DISTINCT u.id FROM unnest($1::uuid[]) AS u(id)
          WHERE NOT EXISTS (SELECT 1 FROM journal_conflicts j WHERE j.event_id = u.id) ORDER BY u.id`,
        [selection.eventIds],
      )
      if (rows.length > 0) return { ok: false, unknown: rows.map((r) => r.id) }
    }
    const { rows } = await client.query<{ n: number }>(
      `WITH acknowledged AS (
         UPDATE journal_conflicts SET acknowledged_at = now()
          WHERE acknowledged_at IS NULL AND ($1::boolean OR event_id = ANY($2::uuid[]))
         RETURNING event_id)
       SELECT count(DISTINCT event_id)::int AS n FROM acknowledged`,
      ['all' in selection, 'eventIds' in selection ? selection.eventIds : []],
    )
    return { ok: true, acknowledged: rows[0]!.n }
  })
}
