import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { createTestDatabase } from '../../../test/support/database.ts'
import { freePort } from './free-port.ts'
import { GroupCommitter, MIN_SPREAD_GROUP } from './group-commit.ts'
import { isDatabaseUnavailable } from './unavailable.ts'

describe('group commit with the database unreachable', () => {
  it('fails the running group and everything queued at once, with one attempt to connect', async () => {
    // Nothing listens on this port: every connection attempt is refused.
    const pool = new pg.Pool({ connectionString: `postgres://x@127.0.0.1:${await freePort()}/x` })
    let connects = 0
    const connect = pool.connect.bind(pool)
    pool.connect = (() => {
      connects++
      return connect()
    }) as typeof pool.connect
    let runs = 0
    const committer = new GroupCommitter<number, number>(
      pool,
      {
        keyOf: (n) => String(n),
        run: async (_client, group) => {
          runs++
          return group.map((n) => ({ ok: true, value: n }))
        },
      },
      { maxTransactions: 1, maxGroup: 2 },
    )
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => committer.submit(i)))
    expect(outcomes.every((o) => o.status === 'rejected' && isDatabaseUnavailable(o.reason))).toBe(true)
    // One group of two tried to connect; the eight queued behind it were answered with its error.
    expect(connects).toBe(1)
    expect(runs).toBe(0)
    expect(committer.waiting).toBe(0)
    await pool.end()
  })
})

describe('group commit under load', () => {
  it('spreads the queue over the free transactions, at least MIN_SPREAD_GROUP to a group', async () => {
    // A closed loop of clients once travelled in one group, all of them, while the other transactions
    // idled: nothing of one group's work overlapped another's.
    const db = await createTestDatabase()
    const groups: number[] = []
    const committer = new GroupCommitter<number, number>(
      db.pool,
      {
        keyOf: (n) => String(n),
        run: async (_client, group) => group.map((n) => ({ ok: true, value: n })),
      },
      { maxTransactions: 4, maxGroup: 64, onCommit: (size) => groups.push(size) },
    )
    try {
      // Submitted in one turn of the event loop: all queued when the transactions start.
      await Promise.all(Array.from({ length: 64 }, (_, i) => committer.submit(i)))
      expect(groups.sort((a, b) => a - b)).toEqual([16, 16, 16, 16])
      groups.length = 0
      await Promise.all(Array.from({ length: 12 }, (_, i) => committer.submit(i)))
      expect(groups.sort((a, b) => a - b)).toEqual([12 - MIN_SPREAD_GROUP, MIN_SPREAD_GROUP])
      groups.length = 0
      await Promise.all(Array.from({ length: 400 }, (_, i) => committer.submit(i)))
      expect(Math.max(...groups)).toBe(64)
      expect(groups.reduce((a, b) => a + b, 0)).toBe(400)
    } finally {
      await db.drop()
    }
  })
})
