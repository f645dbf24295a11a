/**
 * applyBatches: batches of several sources in one transaction, each with its own checkpoint.
 */
import { randomUUID } from 'node:crypto'
import type { PoolClient } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { applyBatches, type BatchSource, type SourcedRecord } from './apply-batch.ts'
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
