/**
 * applyBatches: batches of several sources in one transaction, each with its own checkpoint.
 */
import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import type { PoolClient } from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { rowsRead } from '../../../test/support/plan-rows.ts'
import {
  applyBatches,
  type BatchSource,
  SEEN_STREAM_VERSIONS,
  SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL,
  type SourcedRecord,
} from './apply-batch.ts'
import { appendToStream, purgeStreamEvents } from './journal.ts'
import { countJournalConflicts } from './journal-conflicts.ts'
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

/** Appends `n` events to a conversation stream of the journal; returns them as Kafka would carry them. */
async function appendJournal(streamId: string, n: number, offsetFrom: number): Promise<SourcedRecord[]> {
  const { records } = await withTransaction(db.pool, (client) =>
    appendToStream(client, {
      streamType: 'conversation',
      streamId,
      orgId: randomUUID(),
      chatbotId: randomUUID(),
      expectedVersion: 'any',
      events: Array.from({ length: n }, () => ({ type: 'test.happened', version: 1, payload: {} })),
    }),
  )
  return records.map((record, i) => ({ record, offset: String(offsetFrom + i) }))
}

// Regression (trial4): after an older backup was restored under the same topics, Kafka's events of the
// lost journal were applied and the journal's next events, at the same stream versions, skipped.
describe('applying only what the journal holds (Kafka backend)', () => {
  const source = { topic: 'conversation-events', partition: 0 }
  const ids = (records: readonly JournalRecord[]) => records.map((r) => `${r.streamId}/${r.streamVersion}`)

  it('leaves out an event the journal lost, applies the journal’s event of its version, and those it deleted', async () => {
    const groupId = `restored-${randomUUID()}`
    const [kept, deleted, unknown] = [randomUUID(), randomUUID(), randomUUID()]
    const inJournal = await appendJournal(kept, 2, 0)
    // A deleted chatbot's events: published, then purged from the journal (its stream row stays).
    const purged = await appendJournal(deleted, 2, 2)
    await withTransaction(db.pool, (c) => purgeStreamEvents(c, 'conversation', deleted, []))
    // What a restore lost: version 3 of `kept`, and a stream the backup never had.
    const lost = [...events(kept, [4], 3), ...events(unknown, [5])]
    const handled: string[] = []
    const handler = async (records: readonly JournalRecord[]) => {
      handled.push(...ids(records))
    }
    const first = await applyBatches(
      db.pool,
      groupId,
      [{ source, batch: [...inJournal, ...purged, ...lost] }],
      handler,
      { verifyInJournal: true },
    )
    expect(ids(first.applied)).toEqual([`${kept}/1`, `${kept}/2`, `${deleted}/1`, `${deleted}/2`])
    expect(first.notInJournal?.map((b) => b.record.id)).toEqual(lost.map((b) => b.record.id))
    expect(first.duplicates).toBe(0)
    // The journal's own version 3, with another id: applied, as is its version 4.
    const next = await appendJournal(kept, 2, 6)
    const second = await applyBatches(
      db.pool,
      groupId,
      // The lost event again at a later offset (the relay's duplicates are redeliveries too).
      [{ source, batch: [...next, { ...lost[0]!, offset: '8' }] }],
      handler,
      { verifyInJournal: true },
    )
    expect(ids(second.applied)).toEqual([`${kept}/3`, `${kept}/4`])
    expect(second.applied.map((r) => r.id)).toEqual(next.map((b) => b.record.id))
    expect(second.notInJournal).toHaveLength(1)
    expect(handled).toEqual([...ids(first.applied), ...ids(second.applied)])
    // Listed once per event, with where Kafka holds it.
    expect(await countJournalConflicts(db.pool)).toMatchObject({ [groupId]: 2 })
    const { rows } = await db.pool.query(
      `SELECT event_id, stream_version, source_topic, source_offset::text FROM journal_conflicts
        WHERE group_id = $1 ORDER BY source_offset`,
      [groupId],
    )
    expect(rows).toEqual([
      { event_id: lost[0]!.record.id, stream_version: 3, source_topic: source.topic, source_offset: '4' },
      { event_id: lost[1]!.record.id, stream_version: 1, source_topic: source.topic, source_offset: '5' },
    ])
  })

  it('without the check (the journal backend, whose events come from the journal) applies as before', async () => {
    const groupId = `unchecked-${randomUUID()}`
    const outcome = await applyBatches(
      db.pool,
      groupId,
      [{ source, batch: events(randomUUID(), [0]) }],
      async () => {},
    )
    expect(outcome.applied).toHaveLength(1)
    expect(outcome.notInJournal).toBeUndefined()
  })

  // What the check costs: one probe of the journal's event id index per event, whatever the journal's size.
  it('reads one journal row per event of the batch', async () => {
    const streams = Array.from({ length: 100 }, () => randomUUID())
    const batch: SourcedRecord[] = []
    for (const [i, id] of streams.entries()) batch.push(...(await appendJournal(id, 5, i * 5)))
    const records = batch.map((b) => b.record)
    const params = [
      `cost-${randomUUID()}`,
      streams.map(() => 'conversation'),
      streams,
      records.map((r) => r.streamType),
      records.map((r) => r.streamId),
      records.map((r) => r.streamVersion),
      records.map((r) => r.id),
    ]
    const found = await db.pool.query(SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL, params)
    expect(found.rows).toEqual([])
    expect(await rowsRead(db.pool, 'event_journal', SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL, params)).toBe(
      records.length,
    )
    expect(await rowsRead(db.pool, 'event_streams', SEEN_STREAM_VERSIONS_AND_NOT_IN_JOURNAL, params)).toBe(0)
  })
})
