import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { appendToStream } from './journal.ts'
import { readJournal, readJournalRaw } from './journal-reader.ts'
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
