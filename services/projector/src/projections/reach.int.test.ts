import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { derivedRollupDifferences } from '../../../../test/support/derived-rollups.ts'
import { waitFor } from '../../../../test/support/wait.ts'
import { RollupChanges } from './rollups.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db?.drop()
})

/** One message of a conversation in an hour, with its activity row, as applyMessagesCaptured adds them. */
function message(
  batch: RollupChanges,
  org: string,
  chatbot: string,
  hour: string,
  conversation: string,
  user: string,
) {
  batch.addMessage(org, chatbot, hour, 'user')
  batch.addActivity(org, chatbot, hour, conversation, user)
}

describe('RollupChanges and end users shared between transactions', () => {
  it('makes a second transaction adding hours of the same end user wait for the first', async () => {
    const [org, chatbot] = [randomUUID(), randomUUID()]
    // ada is known already: her row exists, so only its lock (not a pending insert) can order the two.
    const known = await db.pool.connect()
    try {
      await known.query('BEGIN')
      const batch = new RollupChanges()
      message(batch, org, chatbot, '2026-11-10T08:00:00.000Z', randomUUID(), 'ada')
      await batch.flush(known)
      await known.query('COMMIT')
    } finally {
      known.release()
    }
    const first = await db.pool.connect()
    const second = await db.pool.connect()
    try {
      await first.query('BEGIN')
      const a = new RollupChanges()
      message(a, org, chatbot, '2026-11-10T10:00:00.000Z', randomUUID(), 'ada')
      await a.flush(first)

      await second.query('BEGIN')
      const { rows } = await second.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      const b = new RollupChanges()
      message(b, org, chatbot, '2026-11-10T12:00:00.000Z', randomUUID(), 'ada')
      let flushed = false
      const flushing = b.flush(second).then(() => {
        flushed = true
      })
      // Blocked on ada's row in rm_org_end_users, not interleaving with the first transaction's links.
      await waitFor(
        async () => {
          const waiting = await db.pool.query(
            `SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
            [rows[0]?.pid],
          )
          return waiting.rows.length === 1
        },
        { what: 'the second flush to wait for the lock' },
      )
      expect(flushed).toBe(false)
      await first.query('COMMIT')
      await flushing
      await second.query('COMMIT')
    } finally {
      first.release()
      second.release()
    }
    expect(await derivedRollupDifferences(db.pool)).toEqual({})
    const { rows } = await db.pool.query(
      'SELECT hour, next_hour FROM rm_org_user_hours WHERE org_id = $1 ORDER BY hour',
      [org],
    )
    expect(rows).toEqual([
      { hour: new Date('2026-11-10T08:00:00Z'), next_hour: new Date('2026-11-10T10:00:00Z') },
      { hour: new Date('2026-11-10T10:00:00Z'), next_hour: new Date('2026-11-10T12:00:00Z') },
      { hour: new Date('2026-11-10T12:00:00Z'), next_hour: null },
    ])
  })
})
