import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { appendToStream, appendToStreams } from './journal.ts'
import {
  journalReadStatement,
  type ReadJournalOptions,
  readJournal,
  readJournalRaw,
} from './journal-reader.ts'
import { decodeRecord, encodeRawRecord, encodeRecord } from './kafka.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

// What JSON can hold that a naive copy could get wrong: escapes, line and paragraph separators, astral
// characters, numbers jsonb writes its own way, nesting, empty containers.
const PAYLOADS: unknown[] = [
  {},
  { text: 'quote " backslash \\ newline \n tab \t nul-ish \u0001 separators \u2028\u2029 emoji 😀 é' },
  { numbers: [0, -1, 0.1, 1.5e-7, 1e21, 123456789.125, 2 ** 53 + 2], flags: [true, false, null] },
  { nested: { a: [{ b: [[], {}] }], 'key with "quotes"': 'v' } },
  {
    messages: [
      { id: 'm-1', role: 'user', content: 'Réinitialiser mon mot de passe ?', sentAt: '2026-01-01' },
    ],
  },
]

describe('readJournalRaw', () => {
  it('reads what readJournal reads, and its envelope is the one encodeRecord writes', async () => {
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT coalesce(max(position), 0)::text AS p FROM event_journal',
    )
    const after = rows[0]!.p
    const streams = [randomUUID(), randomUUID()]
    for (const [i, payload] of PAYLOADS.entries()) {
      await withTransaction(db.pool, (c) =>
        appendToStream(c, {
          streamType: i % 2 ? 'analysis' : 'conversation',
          streamId: streams[i % 2]!,
          orgId: randomUUID(),
          chatbotId: randomUUID(),
          expectedVersion: 'any',
          events: [{ type: 'test.happened', version: 2, payload }],
          metadata: { correlationId: `c-"${i}"` },
        }),
      )
    }
    const parsed = await waitFor(
      async () => {
        const page = await readJournal(db.pool, { after, limit: 100 })
        return page.records.length === PAYLOADS.length && page
      },
      { what: 'the events readable' },
    )
    const raw = await readJournalRaw(db.pool, { after, limit: 100 })
    expect(raw.scannedTo).toBe(parsed.scannedTo)
    expect(raw.records.map((r) => r.position)).toEqual(parsed.records.map((r) => r.position))
    for (const [i, r] of raw.records.entries()) {
      const value = encodeRawRecord(r)
      expect(JSON.parse(value)).toEqual(JSON.parse(encodeRecord(parsed.records[i]!)))
      // Consumers decode it to the record readJournal gives.
      const topic = r.streamType === 'analysis' ? 'analysis-events' : 'conversation-events'
      expect(decodeRecord(topic, Buffer.from(value))).toEqual({ ok: true, record: parsed.records[i] })
    }

    // The same filters.
    const onlyAnalysis = { after, limit: 100, streamTypes: ['analysis' as const] }
    expect((await readJournalRaw(db.pool, onlyAnalysis)).records.map((r) => r.position)).toEqual(
      (await readJournal(db.pool, onlyAnalysis)).records.map((r) => r.position),
    )
    const partition = { after, limit: 100, partition: { index: 1, count: 2 } }
    expect((await readJournalRaw(db.pool, partition)).records.map((r) => r.position)).toEqual(
      (await readJournal(db.pool, partition)).records.map((r) => r.position),
    )
  })
})

/** Rows each node of a plan that reads event_journal or one of its indexes produced, in all (EXPLAIN ANALYZE). */
function journalRowsRead(node: Record<string, unknown>): number {
  const own =
    node['Relation Name'] === 'event_journal' || String(node['Index Name'] ?? '').startsWith('event_journal')
      ? Number(node['Actual Rows']) * Number(node['Actual Loops'])
      : 0
  const children = (node.Plans as Record<string, unknown>[] | undefined) ?? []
  return own + children.reduce((sum, child) => sum + journalRowsRead(child), 0)
}

describe('a read looks at the positions it scans, never at all the events of its stream types', () => {
  it('reads the next positions by their range and fetches the picked ones, with no statistics on the journal', async () => {
    // Statistics of a new or restored database: none until autovacuum's first analyze (kept off here).
    await db.pool.query('ALTER TABLE event_journal SET (autovacuum_enabled = false)')
    const chatbotId = randomUUID()
    const orgId = randomUUID()
    await withTransaction(db.pool, (c) =>
      appendToStreams(
        c,
        Array.from({ length: 600 }, (_, i) => ({
          streamType: i % 3 ? ('analysis' as const) : ('conversation' as const),
          streamId: randomUUID(),
          orgId,
          chatbotId,
          expectedVersion: 'any' as const,
          events: Array.from({ length: 10 }, () => ({ type: 'test.happened', version: 1, payload: { i } })),
        })),
      ),
    )
    const { rows: stats } = await db.pool.query("SELECT 1 FROM pg_stats WHERE tablename = 'event_journal'")
    expect(stats).toEqual([])
    const { rows } = await db.pool.query<{ p: string }>(
      'SELECT position::text AS p FROM event_journal ORDER BY position DESC LIMIT 1 OFFSET 12',
    )
    // As the projector reads: its stream types, four partitions, a batch of positions past its checkpoint.
    const projectorRead = {
      after: rows[0]!.p,
      limit: 8000,
      maxRecords: 8000,
      streamTypes: ['chatbot', 'conversation', 'analysis'] as const,
      partitions: { of: [0, 1, 2, 3], count: 4 },
    }
    const page = await waitFor(
      async () => {
        const p = await readJournal(db.pool, projectorRead)
        return p.records.length === 12 && p
      },
      { what: 'the last twelve events readable' },
    )
    const explain = async (opts: ReadJournalOptions) => {
      const { text, values } = journalReadStatement(opts)
      const { rows: plan } = await db.pool.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        values,
      )
      return journalRowsRead(plan[0]!['QUERY PLAN'][0].Plan)
    }
    // Each of the 12 positions in the range scan (its index, then the heap) and fetched by its key (index,
    // heap). Joined by a range with the stream types as a join condition, the planner ANDed the stream-type
    // index with the range: the 6,000 events of those types read on each read (6,053 rows), idle or not.
    expect(await explain(projectorRead)).toBeLessThanOrEqual(4 * 12)
    // An idle poll (nothing past the checkpoint) reads nothing.
    expect(await explain({ ...projectorRead, after: page.scannedTo })).toBe(0)
    // The same from a consumer group's lowest checkpoint, read in the statement (perf7): the same rows.
    const groupId = `plan-${randomUUID()}`
    await db.pool.query(
      `INSERT INTO consumer_checkpoints (group_id, topic, partition, last_offset)
       VALUES ($1, '$journal', 0, $2), ($1, '$journal', 1, $3)`,
      [groupId, page.scannedTo, rows[0]!.p],
    )
    const fromCheckpoints = (partitions: number[]) => ({
      ...projectorRead,
      after: { lowestCheckpointOf: { groupId, topic: '$journal', partitions } },
    })
    expect(await explain(fromCheckpoints([0, 1]))).toBeLessThanOrEqual(4 * 12)
    expect((await readJournal(db.pool, fromCheckpoints([0, 1]))).records).toEqual(page.records)
    expect(await explain(fromCheckpoints([0]))).toBe(0)
    await db.pool.query('ALTER TABLE event_journal RESET (autovacuum_enabled)')
  })
})
