import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { readPipelineStatus, type StageReport, StageReporter } from './pipeline-status.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await db.drop()
})
beforeEach(async () => {
  await db.pool.query('DELETE FROM pipeline_status')
})

const T = new Date('2026-03-02T10:00:00.000Z')
const at = (seconds: number) => new Date(T.getTime() + seconds * 1000)

/** A reporter whose measurement and clock the test sets. */
function reporter(id: string, clock: { now: Date }, measured: { report: StageReport }) {
  let measurements = 0
  const r = new StageReporter({
    pool: db.pool,
    stage: 'analysis',
    reporterId: id,
    intervalMs: 1_000,
    now: () => clock.now,
    measure: async () => {
      measurements++
      return measured.report
    },
  })
  return { r, measurements: () => measurements }
}

describe('the pipeline status', () => {
  it('is unknown for a stage nobody has reported', async () => {
    expect(await readPipelineStatus(db.pool, T)).toEqual({
      projection: { state: 'unknown', behindSeconds: null, events: null, checkedAt: null },
      analysis: {
        state: 'unknown',
        behindSeconds: null,
        events: null,
        jobs: null,
        analyzer: null,
        checkedAt: null,
      },
    })
  })

  it('says how long ago the oldest pending work was committed, and behind from 5 s', async () => {
    const clock = { now: T }
    const measured = {
      report: { events: 0, jobs: 0, oldestPendingAt: null, analyzer: 'semantic@2' } as StageReport,
    }
    const { r } = reporter('a', clock, measured)
    expect(await r.report()).toBe(true)
    expect((await readPipelineStatus(db.pool, at(1))).analysis).toEqual({
      state: 'up-to-date',
      behindSeconds: 0,
      events: 0,
      jobs: 0,
      analyzer: 'semantic@2',
      checkedAt: T.toISOString(),
    })

    // A model still loading: no analyzer to name.
    measured.report = { events: 120, jobs: 7, oldestPendingAt: at(-4), analyzer: null }
    await r.report()
    expect((await readPipelineStatus(db.pool, T)).analysis).toMatchObject({
      state: 'up-to-date',
      behindSeconds: 4,
      events: 120,
      jobs: 7,
      analyzer: null,
    })
    // Between reports the same work only gets older.
    expect((await readPipelineStatus(db.pool, at(1))).analysis).toMatchObject({
      state: 'behind',
      behindSeconds: 5,
    })
    expect((await readPipelineStatus(db.pool, at(240))).analysis.behindSeconds).toBe(244)
  })

  it('is unknown once nobody has reported for 30 s, though work known pending is as late as ever', async () => {
    const clock = { now: T }
    const measured = {
      report: { events: 0, jobs: 0, oldestPendingAt: null, analyzer: 'semantic@2' } as StageReport,
    }
    await reporter('a', clock, measured).r.report()
    expect((await readPipelineStatus(db.pool, at(30))).analysis).toMatchObject({
      state: 'up-to-date',
      analyzer: 'semantic@2',
    })
    // Its analyzer may have gone with its process: unknown too.
    expect((await readPipelineStatus(db.pool, at(31))).analysis).toMatchObject({
      state: 'unknown',
      behindSeconds: null,
      analyzer: null,
      checkedAt: T.toISOString(),
    })

    measured.report = { events: 3, jobs: 3, oldestPendingAt: at(-10) }
    await reporter('a', clock, measured).r.report()
    expect((await readPipelineStatus(db.pool, at(60))).analysis).toMatchObject({
      state: 'unknown',
      behindSeconds: 70,
    })
  })

  it('is measured and written by one process of a stage at a time; another takes over when it stops', async () => {
    const measured = { report: { events: 1, jobs: 1, oldestPendingAt: T } as StageReport }
    const [clockA, clockB] = [{ now: T }, { now: T }]
    const a = reporter('a', clockA, measured)
    const b = reporter('b', clockB, measured)
    // The first to look keeps the row; the other neither measures nor writes while it is kept.
    expect(await a.r.report()).toBe(true)
    clockB.now = at(2)
    expect(await b.r.report()).toBe(false)
    expect(b.measurements()).toBe(0)
    clockA.now = at(2)
    expect(await a.r.report()).toBe(true)
    // When a stops reporting, b takes the row over after three intervals of silence, and keeps it.
    clockB.now = at(4.9)
    expect(await b.r.report()).toBe(false)
    clockB.now = at(5)
    expect(await b.r.report()).toBe(true)
    const { rows } = await db.pool.query(
      "SELECT reporter, checked_at FROM pipeline_status WHERE stage = 'analysis'",
    )
    expect(rows).toEqual([{ reporter: 'b', checked_at: at(5) }])
    clockA.now = at(6)
    expect(await a.r.report()).toBe(false)
  })

  it('reports every interval once started, until stopped', async () => {
    const measured = { report: { events: 2, jobs: 2, oldestPendingAt: T } as StageReport }
    let n = 0
    const r = new StageReporter({
      pool: db.pool,
      stage: 'projection',
      intervalMs: 10,
      measure: async () => {
        n++
        return measured.report
      },
    })
    r.start()
    await waitFor(() => n >= 3, { what: 'three reports' })
    await r.stop()
    const stopped = n
    expect((await readPipelineStatus(db.pool, new Date())).projection).toMatchObject({ events: 2 })
    expect(n).toBe(stopped)
  })
})
