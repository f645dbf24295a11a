import { advisoryLockKey, lockKeysInOrder } from '@cas/db'
import type { BatchSource, JournalRecord } from '@cas/eventlog'
import type pg from 'pg'

/**
 * Orders the projector's batches that run at the same time (batches of several partitions of one fetch,
 * batches of other members of the group), so that each reads what the others wrote:
 *
 * - A conversation's events come on two topics, its capture and erasure on `conversation`, its analysis
 *   on `analysis`, keyed by its id, so in the same partition number of both (the consumer checks that
 *   the topics have the same partition count). Each batch locks its partition number for its whole
 *   transaction: a conversation's capture, analysis and erasure are never applied at once, and whichever
 *   comes second sees the first (an analysis result after the erasure is dropped, instead of writing a
 *   message row back; a result and its capture fold into one row).
 * - A chatbot's deletion comes on `chatbot`, its conversations on every partition: a batch with
 *   `chatbot.deleted` takes the deletion lock exclusively, every other batch shares it. The deletion
 *   waits for the batches under way, and the batches after it see the chatbot deleted.
 *
 * The deletion lock first, then the partitions' in ascending order: every batch takes them in this order, before any row
 * lock, so they cannot deadlock with each other. Transaction-scoped advisory locks, under a key of the
 * consumer group (`groupLockKey`): a rebuild into its own tables does not wait for the live projector.
 */
export async function orderBatch(
  client: pg.ClientBase,
  groupKey: number,
  sources: readonly BatchSource[],
  records: readonly JournalRecord[],
): Promise<void> {
  const deletes = records.some((r) => r.type === 'chatbot.deleted')
  await client.query(
    deletes
      ? { name: 'cas-projector-batch-lock', text: 'SELECT pg_advisory_xact_lock($1, -1)', values: [groupKey] }
      : {
          name: 'cas-projector-batch-lock-shared',
          text: 'SELECT pg_advisory_xact_lock_shared($1, -1)',
          values: [groupKey],
        },
  )
  // A transaction of several sources (batches of one Kafka fetch applied together) locks each partition
  // number once, in ascending order, as every batch does: no two wait for each other in a circle.
  await lockKeysInOrder(
    client,
    groupKey,
    sources.map((s) => s.partition),
  )
}

/** The first advisory-lock key of the projector's consumer group's batch ordering. */
export function groupLockKey(groupId: string): number {
  return advisoryLockKey(`projector-batches:${groupId}`)
}
