import type { Pool, PoolClient } from 'pg'
import type { BatchSource, SourcedRecord } from './apply-batch.ts'

// Events a Kafka consumer group left out because the journal does not hold them (ApplyBatchOptions.
// verifyInJournal; migrations/0053_journal-conflicts.sql): what Kafka still has of a journal that a restored
// backup lost.

/** Records the events left out as not in the journal, once per group and event (a redelivery adds none). */
export async function recordJournalConflicts(
  client: PoolClient,
  groupId: string,
  lost: readonly (SourcedRecord & { readonly source: BatchSource })[],
) {
  await client.query({
    name: 'cas-consumer-journal-conflicts-record',
    text: `INSERT INTO journal_conflicts
       (group_id, event_id, stream_type, stream_id, stream_version, position, source_topic, source_partition, source_offset)
     SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::int[], $6::bigint[], $7::text[], $8::int[], $9::bigint[])
     ON CONFLICT (group_id, event_id) DO NOTHING`,
    values: [
      groupId,
      lost.map((b) => b.record.id),
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

/** How many events each group left out as not in the journal (none listed: no group has any). */
export async function countJournalConflicts(db: Pool): Promise<Record<string, number>> {
  const { rows } = await db.query<{ group_id: string; n: number }>(
    'SELECT group_id, count(*)::int AS n FROM journal_conflicts GROUP BY group_id ORDER BY group_id',
  )
  return Object.fromEntries(rows.map((r) => [r.group_id, r.n]))
}
