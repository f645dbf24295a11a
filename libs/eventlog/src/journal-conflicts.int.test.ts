/**
 * journal_conflicts under concurrency: a consumer group recording an event left out while the operator
 * acknowledges it (npm run journal-conflicts).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import type { SourcedRecord } from './apply-batch.ts'
import {
  acknowledgeJournalConflicts,
  countJournalConflicts,
  recordJournalConflicts,
} from './journal-conflicts.ts'
import type { JournalRecord } from './records.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

const source = { topic: 'cas-conversation-events', partition: 0 }

function lostEvent(): SourcedRecord & { source: typeof source } {
  return {
    offset: '7',
    source,
    record: {
      id: randomUUID(),
      type: 'conversation.messages-captured',
      version: 1,
      occurredAt: new Date().toISOString(),
      orgId: randomUUID(),
      chatbotId: randomUUID(),
      streamType: 'conversation',
      streamId: randomUUID(),
      streamVersion: 3,
      position: '1007',
      payload: {},
      metadata: {},
    } satisfies JournalRecord,
  }
}

describe('acknowledging journal conflicts while a group records them', () => {
  it("an acknowledgement that runs while a group's batch records the same event leaves none counted", async () => {
    // The bug: the acknowledgement's UPDATE did not see the row a group's open transaction had inserted
    // (read before the acknowledgement committed), so that row committed unacknowledged and /readyz
    // counted an event the operator had acknowledged.
    const event = lostEvent()
    const projector = await db.pool.connect()
    try {
      await recordJournalConflicts(projector, 'projector', [event])
      const analysis = await db.pool.connect()
      try {
        await analysis.query('BEGIN')
        await recordJournalConflicts(analysis, 'analysis', [event])
        const acknowledging = acknowledgeJournalConflicts(db.pool, { eventIds: [event.record.id] })
        let settled = false
        void acknowledging.finally(() => {
          settled = true
        })
        // Either it has finished already (it does not wait for the open batch) or it waits on a lock.
        await waitFor(
          async () =>
            settled ||
            (
              await db.pool.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                  WHERE c.relname = 'journal_conflicts' AND NOT l.granted`,
              )
            ).rows[0]!.n > 0,
          { what: 'the acknowledgement to finish or wait' },
        )
        await analysis.query('COMMIT')
        expect(await acknowledging).toEqual({ ok: true, acknowledged: 1 })
      } finally {
        analysis.release()
      }
    } finally {
      projector.release()
    }
    expect(await countJournalConflicts(db.pool)).toEqual({})
  })
})
