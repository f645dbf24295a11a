/**
 * applyBatches: batches of several sources in one transaction, each with its own checkpoint.
 */
import { randomUUID } from 'node:crypto'
import type { PoolClient } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { rowsRead } from '../../../test/support/plan-rows.ts'
import { applyBatches, type BatchSource, SEEN_STREAM_VERSIONS, type SourcedRecord } from './apply-batch.ts'
import type { JournalRecord } from './records.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

function events(streamId: string, offsets: number[], firstVersion = 1): SourcedRecord[] {
  return offsets.map((offset, i) => ({
    offset: String(offset),
    record: {
      id: randomUUID(),
      type: 'test.happened',
      version: 1,
      occurredAt: new Date(Date.UTC(2026, 10, 27, 12, 0, offset)).toISOString(),
      orgId: randomUUID(),
      chatbotId: randomUUID(),
      streamType: 'conversation',
      streamId,
      streamVersion: firstVersion + i,
      position: String(offset),
      payload: {},
      metadata: {},
    } satisfies JournalRecord,
  }))
}

async function checkpoints(groupId: string) {
  const { rows } = await db.pool.query<{ topic: string; partition: number; last_offset: string }>(
    `SELECT topic, partition, last_offset::text FROM consumer_checkpoints WHERE group_id = $1
      ORDER BY topic, partition`,
    [groupId],
  )
  return rows.map((r) => [r.topic, r.partition, r.last_offset])
}

describe('applying the batches of several sources in one transaction', () => {
  it('hands the handler every source’s new events in order, once, and moves each checkpoint', async () => {
    const groupId = `several-${randomUUID()}`
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()]
    const sources: BatchSource[] = [
      { topic: 'conversation-events', partition: 1 },
      { topic: 'analysis-events', partition: 1 },
      { topic: 'conversation-events', partition: 5 },
    ]
    const calls: { ids: string[]; sources: readonly BatchSource[] }[] = []
    const handler = async (
      records: readonly JournalRecord[],
      _client: PoolClient,
      s: readonly BatchSource[],
    ) => {
      calls.push({ ids: records.map((r) => `${r.streamId}/${r.streamVersion}`), sources: s })
    }
    const first = await applyBatches(
      db.pool,
      groupId,
      [
        { source: sources[0]!, batch: events(a, [0, 1]) },
        { source: sources[1]!, batch: events(b, [0]) },
        { source: sources[2]!, batch: events(c, [7, 8, 9]) },
      ],
      handler,
    )
    expect(first.applied.map((r) => `${r.streamId}/${r.streamVersion}`)).toEqual([
      `${a}/1`,
      `${a}/2`,
      `${b}/1`,
      `${c}/1`,
      `${c}/2`,
      `${c}/3`,
    ])
    expect(calls).toEqual([{ ids: first.applied.map((r) => `${r.streamId}/${r.streamVersion}`), sources }])
    expect(await checkpoints(groupId)).toEqual([
      ['analysis-events', 1, '0'],
      ['conversation-events', 1, '1'],
      ['conversation-events', 5, '9'],
    ])

    // Redelivered with more: what each source's checkpoint covers is skipped, per source
    const again = await applyBatches(
      db.pool,
      groupId,
      [
        { source: sources[0]!, batch: events(a, [1, 2], 2) },
        { source: sources[1]!, batch: events(b, [0]) },
        { source: sources[2]!, batch: [], upTo: '12' },
      ],
      handler,
    )
    expect(again.applied.map((r) => `${r.streamId}/${r.streamVersion}`)).toEqual([`${a}/3`])
    expect(again.duplicates).toBe(2)
    expect(await checkpoints(groupId)).toEqual([
      ['analysis-events', 1, '0'],
      ['conversation-events', 1, '2'],
      ['conversation-events', 5, '12'],
    ])
  })

  it('rolls every source back together when the handler fails', async () => {
    const groupId = `failing-${randomUUID()}`
    const parts = [
      { source: { topic: 'conversation-events', partition: 0 }, batch: events(randomUUID(), [3]) },
      { source: { topic: 'conversation-events', partition: 4 }, batch: events(randomUUID(), [6]) },
    ]
    await expect(
      applyBatches(db.pool, groupId, parts, async () => {
        throw new Error('handler failed')
      }),
    ).rejects.toThrow('handler failed')
    expect(await checkpoints(groupId)).toEqual([])
    const applied = await applyBatches(db.pool, groupId, parts, async () => {})
    expect(applied.applied).toHaveLength(2)
    expect(await checkpoints(groupId)).toEqual([
      ['conversation-events', 0, '3'],
      ['conversation-events', 4, '6'],
    ])
  })
})

describe('the stream versions a group has applied', () => {
  it('drops, per stream, what was applied, however many streams the batch holds', async () => {
    const groupId = `versions-${randomUUID()}`
    const source = { topic: 'conversation-events', partition: 0 }
    const streams = Array.from({ length: 300 }, () => randomUUID())
    // Relay duplicates: the same events under new offsets (a republished Kafka batch).
    const batch = (from: number, versions: number[]) =>
      streams.flatMap((id, i) =>
        events(
          id,
          versions.map((_, k) => from + i * versions.length + k),
          versions[0],
        ),
      )
    const first = await applyBatches(db.pool, groupId, [{ source, batch: batch(0, [1, 2]) }], async () => {})
    expect(first.applied).toHaveLength(600)
    const again = await applyBatches(
      db.pool,
      groupId,
      [{ source, batch: batch(1000, [2, 3]) }],
      async () => {},
    )
    expect(again.duplicates).toBe(300)
    expect(again.applied.map((r) => `${r.streamId}/${r.streamVersion}`)).toEqual(
      streams.map((id) => `${id}/3`),
    )
    // A stream of another type with the same id is another stream.
    const analysis = events(streams[0]!, [5000]).map((e) => ({
      ...e,
      record: { ...e.record, streamType: 'analysis' as const },
    }))
    const other = await applyBatches(db.pool, groupId, [{ source, batch: analysis }], async () => {})
    expect(other.applied).toHaveLength(1)
  })

  // A group of a long-lived projector, or a rebuild's group near the end of a long log, has a row per
  // stream ever seen. Asking for a batch's streams must read those streams' rows, not the group's.
  it('reads the rows of the batch’s streams only, however many the group has', async () => {
    const groupId = `large-${randomUUID()}`
    await db.pool.query(
      `INSERT INTO consumer_stream_versions (group_id, stream_type, stream_id, version)
       SELECT g, CASE WHEN i % 2 = 0 THEN 'conversation' ELSE 'analysis' END, gen_random_uuid(), 3
         FROM unnest(ARRAY[$1, $1 || '-other']) g, generate_series(1, 150000) i`,
      [groupId],
    )
    await db.pool.query('ANALYZE consumer_stream_versions')
    const known = (
      await db.pool.query<{ stream_type: string; stream_id: string }>(
        'SELECT stream_type, stream_id FROM consumer_stream_versions WHERE group_id = $1 LIMIT 500',
        [groupId],
      )
    ).rows
    const asked = [
      ...known,
      ...Array.from({ length: 1500 }, (_, i) => ({
        stream_type: i % 2 ? 'analysis' : 'conversation',
        stream_id: randomUUID(),
      })),
    ]
    const params = [groupId, asked.map((k) => k.stream_type), asked.map((k) => k.stream_id)]
    const read = (sql: string) => rowsRead(db.pool, 'consumer_stream_versions', sql, params)
    const found = await db.pool.query(SEEN_STREAM_VERSIONS, params)
    expect(found.rows).toHaveLength(500)
    expect(found.rows.every((r) => r.version === 3)).toBe(true)
    expect(await read(SEEN_STREAM_VERSIONS)).toBeLessThanOrEqual(asked.length)
    // The control, which shows what the lookup avoids: joined plainly, the planner reads the group.
    const plainJoin = `SELECT v.stream_type, v.stream_id, v.version FROM consumer_stream_versions v
       JOIN unnest($2::text[], $3::uuid[]) AS s(stream_type, stream_id)
         ON v.stream_type = s.stream_type AND v.stream_id = s.stream_id WHERE v.group_id = $1`
    expect(await read(plainJoin)).toBeGreaterThanOrEqual(150000)
  })
})
