import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { freePort } from './free-port.ts'
import { GroupCommitter } from './group-commit.ts'
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
