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

describe('group commit held while more requests are coming (holdWhile)', () => {
  it('takes a trickle of requests in groups of the size asked for, and a lone request at once', async () => {
    const db = await createTestDatabase()
    const groups: number[] = []
    let coming = 0
    const committer = new GroupCommitter<number, number>(
      db.pool,
      {
        keyOf: (n) => String(n),
        run: async (_client, group) => group.map((n) => ({ ok: true, value: n })),
      },
      {
        maxTransactions: 1,
        maxGroup: 64,
        onCommit: (size) => groups.push(size),
        holdWhile: (waiting) => coming > 0 && waiting < 8,
        // Longer than any test waits: only the queue's size and `coming` release a group here.
        holdMs: 600_000,
      },
    )
    try {
      // 40 requests one after the other, as an analyzer's results come: without the hold each would
      // have a transaction of its own.
      coming = 40
      const submitted: Promise<number>[] = []
      for (let i = 0; i < 40; i++) {
        const one = committer.submit(i)
        submitted.push(one)
        coming--
        // The next comes once this one is committed, or a while later if it is held.
        await Promise.race([one, new Promise((resolve) => setTimeout(resolve, 10))])
      }
      expect(await Promise.all(submitted)).toEqual(Array.from({ length: 40 }, (_, i) => i))
      expect(groups.reduce((a, b) => a + b, 0)).toBe(40)
      // At most one group short of 8: the last, released when nothing more was coming.
      expect(groups.length).toBeLessThanOrEqual(40 / 8 + 1)
      expect(groups.filter((size) => size < 8).length).toBeLessThanOrEqual(1)

      // Nothing more coming: a lone request is not held (the hold would outlast the test).
      groups.length = 0
      expect(await committer.submit(41)).toBe(41)
      expect(groups).toEqual([1])

      // Held while more is coming, released by reconsider() once nothing is.
      groups.length = 0
      coming = 1
      const held = committer.submit(42)
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(groups).toEqual([])
      expect(committer.waiting).toBe(1)
      coming = 0
      committer.reconsider()
      expect(await held).toBe(42)
      expect(groups).toEqual([1])
    } finally {
      await db.drop()
    }
  })

  it('holds a request no longer than holdMs when more keeps being announced', async () => {
    const db = await createTestDatabase()
    const groups: number[] = []
    const committer = new GroupCommitter<number, number>(
      db.pool,
      {
        keyOf: (n) => String(n),
        run: async (_client, group) => group.map((n) => ({ ok: true, value: n })),
      },
      {
        maxTransactions: 1,
        maxGroup: 64,
        onCommit: (size) => groups.push(size),
        holdWhile: () => true,
        holdMs: 30,
      },
    )
    try {
      expect(await Promise.all([committer.submit(1), committer.submit(2)])).toEqual([1, 2])
      expect(groups).toEqual([2])
    } finally {
      await db.drop()
    }
  })
})
