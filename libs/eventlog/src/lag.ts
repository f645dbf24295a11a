import type { Pool } from 'pg'
import type { EventLogBackend } from './event-log.ts'
import { journalTotalLag } from './journal-consumer.ts'
import type { StreamType } from './records.ts'
import { STREAM_TYPES, topicFor } from './topics.ts'

/**
 * Events in the log a consumer group has not applied yet. Journal: positions past the group's oldest
 * checkpoint, -1 for a partition without one (whatever their stream type). Kafka: per partition of the topics of `streamTypes`, the
 * offsets past the group's checkpoint (from the partition's start when it has none).
 */
export async function consumerLag(
  pool: Pool,
  eventLog: EventLogBackend,
  groupId: string,
  streamTypes: readonly StreamType[] = STREAM_TYPES,
): Promise<number> {
  if (eventLog.kind === 'journal') return journalTotalLag(pool, groupId, eventLog.partitions ?? 1)
  const admin = eventLog.kafka.admin()
  await admin.connect()
  try {
    const { rows } = await pool.query<{ topic: string; partition: number; last_offset: string }>(
      'SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1',
      [groupId],
    )
    const done = new Map(rows.map((r) => [`${r.topic}/${r.partition}`, BigInt(r.last_offset)]))
    let lag = 0n
    for (const streamType of streamTypes) {
      const name = topicFor(streamType, eventLog.topicPrefix)
      for (const p of await admin.fetchTopicOffsets(name)) {
        const next = done.get(`${name}/${p.partition}`) ?? BigInt(p.low) - 1n
        const behind = BigInt(p.high) - 1n - next
        if (behind > 0n) lag += behind
      }
    }
    return Number(lag)
  } finally {
    await admin.disconnect()
  }
}
