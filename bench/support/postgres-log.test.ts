/**
 * The benchmarks' reading of the Postgres log: on lines a PostgreSQL 18 server wrote (a deadlock between
 * two transactions, a unique violation, a missing relation, slow statements through both protocols, one
 * of them on several lines), and on a real deadlock produced on the embedded Postgres the benchmarks
 * start, read from the log startBenchServers keeps.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../../test/support/wait.ts'
import { postgresLogLines, summarisePostgresLog } from './postgres-log.ts'
import { type BenchServers, startBenchServers } from './servers.ts'

/** Written by the embedded PostgreSQL 18.4 with log_min_duration_statement = 100 (initdb's output first). */
const REAL_LOG = `Success. You can now start the database server using:
2026-11-29 12:59:03.568 UTC [6378] LOG:  database system is ready to accept connections
2026-11-29 12:59:04.591 UTC [6388] ERROR:  deadlock detected
2026-11-29 12:59:04.591 UTC [6388] DETAIL:  Process 6388 waits for ShareLock on transaction 756; blocked by process 6389.
\tProcess 6389 waits for ShareLock on transaction 755; blocked by process 6388.
\tProcess 6388: UPDATE t SET v = 2 WHERE id = $1
\tProcess 6389: UPDATE t
\t   SET v = 2
\t WHERE id = 1
2026-11-29 12:59:04.591 UTC [6388] HINT:  See server log for query details.
2026-11-29 12:59:04.591 UTC [6388] CONTEXT:  while updating tuple (0,2) in relation "t"
2026-11-29 12:59:04.591 UTC [6388] STATEMENT:  UPDATE t SET v = 2 WHERE id = $1
2026-11-29 12:59:04.592 UTC [6389] LOG:  duration: 1001.288 ms  statement: UPDATE t
\t   SET v = 2
\t WHERE id = 1
2026-11-29 12:59:04.747 UTC [6388] LOG:  duration: 150.267 ms  execute <unnamed>: SELECT pg_sleep(0.15), $1::int AS x
2026-11-29 12:59:04.747 UTC [6388] DETAIL:  Parameters: $1 = '1'
2026-11-29 12:59:04.869 UTC [6388] LOG:  duration: 121.415 ms  statement: SELECT pg_sleep(0.12)
\t  -- a comment
\t  , 2
2026-11-29 12:59:04.870 UTC [6388] ERROR:  relation "nope" does not exist at character 15
2026-11-29 12:59:04.870 UTC [6388] STATEMENT:  SELECT * FROM nope
2026-11-29 12:59:04.872 UTC [6388] ERROR:  duplicate key value violates unique constraint "t_pkey"
2026-11-29 12:59:04.872 UTC [6388] DETAIL:  Key (id)=(1) already exists.
2026-11-29 12:59:04.872 UTC [6388] STATEMENT:  INSERT INTO t VALUES (1, 0)
2026-11-29 12:59:04.883 UTC [6378] LOG:  background worker "logical replication launcher" (PID 6387) exited with exit code 1
2026-11-29 12:59:04.884 UTC [6382] LOG:  checkpoint starting: shutdown immediate`.split('\n')

describe('the Postgres log, read', () => {
  it('counts the deadlocks apart from the other errors, and lists the slow statements slowest first', () => {
    const s = summarisePostgresLog(REAL_LOG)
    expect(s.deadlocks).toBe(1)
    expect(s.deadlockStatements).toEqual(['UPDATE t SET v = 2 WHERE id = $1'])
    expect(s.otherErrors).toBe(2)
    expect(s.errorMessages.map((e) => e.message)).toEqual([
      'duplicate key value violates unique constraint "t_pkey"',
      'relation "nope" does not exist at character 15',
    ])
    expect(s.slow).toEqual([
      { ms: 1001.288, statement: 'UPDATE t SET v = 2 WHERE id = 1' },
      { ms: 150.267, statement: 'SELECT pg_sleep(0.15), $1::int AS x' },
      { ms: 121.415, statement: 'SELECT pg_sleep(0.12) -- a comment , 2' },
    ])
  })

  it('counts only the statements at or over the threshold', () => {
    expect(summarisePostgresLog(REAL_LOG, { slowMs: 150 }).slow.map((q) => q.ms)).toEqual([1001.288, 150.267])
  })

  it('says a deadlock is a problem, and says nothing of the kind without one', () => {
    const [first] = postgresLogLines(summarisePostgresLog(REAL_LOG))
    expect(first).toContain('1 "deadlock detected" (PROBLEM')
    expect(first).toContain('2 other errors, 3 statements over 100 ms')
    const quiet = postgresLogLines(summarisePostgresLog(REAL_LOG.slice(0, 2)))
    expect(quiet).toEqual(['0 "deadlock detected", 0 other errors, 0 statements over 100 ms'])
  })

  it('is empty on a log of other lines', () => {
    expect(summarisePostgresLog(['\tan orphan continuation', 'initdb: ok'])).toEqual({
      deadlocks: 0,
      deadlockStatements: [],
      otherErrors: 0,
      errorMessages: [],
      slow: [],
    })
  })
})

describe('the log the benchmarks keep (startBenchServers watchPostgresLog), on a real deadlock', () => {
  let servers: BenchServers
  let a: pg.Client
  let b: pg.Client

  beforeAll(async () => {
    servers = await startBenchServers({ name: 'postgres-log-test', watchPostgresLog: true })
    a = new pg.Client(servers.postgres.url)
    b = new pg.Client(servers.postgres.url)
    await a.connect()
    await b.connect()
    await a.query('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)')
    await a.query('INSERT INTO accounts VALUES (1, 0), (2, 0)')
  })
  afterAll(async () => {
    await a?.end()
    await b?.end()
    await servers?.stop()
  })

  it('counts what happened after a mark: one deadlock, one other error, the slow statements', async () => {
    const log = servers.postgresLog!
    await a.query('SELECT pg_sleep(0.2) AS before_the_mark')
    await waitFor(() => log.summarise().slow.length === 1, { what: 'the first slow statement logged' })
    const mark = log.mark()

    // Each holds one row and asks for the other's: Postgres fails one of them after deadlock_timeout.
    await a.query('BEGIN')
    await b.query('BEGIN')
    await a.query('UPDATE accounts SET balance = 1 WHERE id = 1')
    await b.query('UPDATE accounts SET balance = 1 WHERE id = 2')
    const outcomes = await Promise.allSettled([
      a.query('UPDATE accounts SET balance = 2 WHERE id = $1', [2]),
      b.query('UPDATE accounts\n   SET balance = 2\n WHERE id = 1'),
    ])
    expect(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code: string }).code : 'ok')).sort(),
    ).toEqual(['40P01', 'ok'])
    await a.query('ROLLBACK')
    await b.query('ROLLBACK')
    await expect(a.query('INSERT INTO accounts VALUES (1, 0)')).rejects.toMatchObject({ code: '23505' })
    await a.query('SELECT pg_sleep(0.15), $1::int AS after_the_mark', [1])

    const s = await waitFor(
      () => {
        const now = log.summarise(mark)
        return now.otherErrors === 1 && now.slow.some((q) => q.statement.includes('after_the_mark')) && now
      },
      { what: 'the error and the last slow statement logged' },
    )
    expect(s.deadlocks).toBe(1)
    expect(s.deadlockStatements).toHaveLength(1)
    expect(s.deadlockStatements[0]).toMatch(/^UPDATE accounts SET balance = 2 WHERE id = (\$1|1)$/)
    expect(s.errorMessages).toEqual([
      { message: 'duplicate key value violates unique constraint "accounts_pkey"', count: 1 },
    ])
    // The transaction that won waited for the deadlock to be broken, the sleep slept: both slow; the one
    // before the mark is not counted.
    const statements = s.slow.map((q) => q.statement)
    expect(statements).toContain('SELECT pg_sleep(0.15), $1::int AS after_the_mark')
    expect(statements.some((q) => /^UPDATE accounts SET balance = 2 WHERE id = (\$1|1)$/.test(q))).toBe(true)
    expect(statements.some((q) => q.includes('before_the_mark'))).toBe(false)
    expect(log.summarise().slow.some((q) => q.statement.includes('before_the_mark'))).toBe(true)
  })
})
