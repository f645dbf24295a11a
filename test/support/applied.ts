import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream, type JournalRecord } from '@cas/eventlog'
import type { ClientBase, Pool } from 'pg'
import { expect } from 'vitest'

/** The table test consumers write each event they are handed into, in the order they get them. */
export async function createAppliedTable(pool: Pool) {
  await pool.query(`CREATE TABLE test_applied (
    seq bigserial PRIMARY KEY, consumer text, stream_id uuid, stream_version int, event_id uuid, position bigint)`)
}

export async function recordApplied(client: ClientBase, records: readonly JournalRecord[], consumer = '') {
  await client.query(
    `INSERT INTO test_applied (consumer, stream_id, stream_version, event_id, position)
     SELECT $1, * FROM unnest($2::uuid[], $3::int[], $4::uuid[], $5::bigint[])`,
    [
      consumer,
      records.map((r) => r.streamId),
      records.map((r) => r.streamVersion),
      records.map((r) => r.id),
      records.map((r) => r.position),
    ],
  )
}

export async function appliedCount(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_applied')
  return rows[0]!.n
}

/**
 * Appends `total` events to `streams` conversation streams from `concurrency` concurrent writers, each
 * transaction appending one to three events to a random stream. Returns the stream ids.
 */
export async function appendWorkload(
  pool: Pool,
  opts: { streams: number; total: number; concurrency?: number; streamIds?: string[] },
): Promise<string[]> {
  const streamIds = opts.streamIds ?? Array.from({ length: opts.streams }, () => randomUUID())
  let remaining = opts.total
  const writer = async () => {
    while (remaining > 0) {
      const n = Math.min(remaining, 1 + Math.floor(Math.random() * 3))
      remaining -= n
      const streamId = streamIds[Math.floor(Math.random() * streamIds.length)]!
      await withTransaction(pool, (c) =>
        appendToStream(c, {
          streamType: 'conversation',
          streamId,
          orgId: '00000000-0000-4000-8000-000000000001',
          chatbotId: '00000000-0000-4000-8000-000000000002',
          expectedVersion: 'any',
          events: Array.from({ length: n }, () => ({ type: 'test.happened', version: 1, payload: {} })),
        }),
      )
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, writer))
  return streamIds
}

/** Every journal event of these streams was applied exactly once, and each stream in version order. */
export async function expectExactlyOnceInStreamOrder(pool: Pool) {
  const { rows: journal } = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM event_journal WHERE stream_type = 'conversation'",
  )
  const { rows: dupes } = await pool.query(
    'SELECT event_id, count(*) FROM test_applied GROUP BY event_id HAVING count(*) > 1',
  )
  expect(dupes).toEqual([])
  expect(await appliedCount(pool)).toBe(journal[0]!.n)
  const { rows: outOfOrder } = await pool.query(`
    SELECT stream_id FROM (
      SELECT stream_id, stream_version, row_number() OVER (PARTITION BY stream_id ORDER BY seq) AS nth
        FROM test_applied) t
     WHERE stream_version <> nth`)
  expect(outOfOrder).toEqual([])
}
