import { describe, expect, it } from 'vitest'
import { backgroundLoop } from './background-loop.ts'

/** A promise and its resolve, to hold a turn until the test lets it finish. */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** Lets every callback queued so far run (promise jobs and immediates), without waiting for any timer. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

/** A loop whose first turn says it started and then waits for `release`; a later turn resolves `next`. */
function holdingFirstTurn(intervalMs: number) {
  const started = deferred()
  const release = deferred()
  const next = deferred()
  let turns = 0
  const loop = backgroundLoop({
    intervalMs,
    run: async () => {
      turns++
      if (turns > 1) return next.resolve()
      started.resolve()
      await release.promise
    },
  })
  return { loop, started, release, next, turns: () => turns }
}

describe('backgroundLoop', () => {
  it('stop waits for the turn under way, and starts no other', async () => {
    const { loop, started, release, turns } = holdingFirstTurn(60_000)
    loop.start()
    await started.promise
    let stopped = false
    const stopping = loop.stop().then(() => {
      stopped = true
    })
    await settle()
    expect(stopped).toBe(false)
    release.resolve()
    await stopping
    expect(stopped).toBe(true)
    expect(turns()).toBe(1)
    expect(loop.running).toBe(false)
  })

  it('stop ends the wait between turns', async () => {
    const ran = deferred()
    const loop = backgroundLoop({ intervalMs: 3_600_000, run: async () => ran.resolve() })
    loop.start()
    await ran.promise
    // Would hang for an hour if the wait were not ended.
    await loop.stop()
    expect(loop.running).toBe(false)
  })

  it('backs off after failures by its retry policy, and waits the interval again after a success', async () => {
    const waits: number[] = []
    const errors: [string, number][] = []
    const done = deferred()
    let turn = 0
    const loop = backgroundLoop({
      intervalMs: 1_000,
      retry: { baseMs: 10, maxMs: 25, jitter: 'none' },
      run: async () => {
        turn++
        if (turn <= 3) throw new Error(`failure ${turn}`)
        if (turn === 5) done.resolve()
      },
      onError: (err, failures) => errors.push([(err as Error).message, failures]),
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    loop.start()
    await done.promise
    await loop.stop()
    expect(errors).toEqual([
      ['failure 1', 0],
      ['failure 2', 1],
      ['failure 3', 2],
    ])
    expect(waits.slice(0, 4)).toEqual([10, 20, 25, 1_000])
  })

  it('runs the next turn at once when a turn says there is more to do', async () => {
    const waits: number[] = []
    const done = deferred()
    let turn = 0
    const loop = backgroundLoop({
      intervalMs: 1_000,
      run: async () => {
        turn++
        if (turn === 4) done.resolve()
        return turn < 3
      },
      sleep: async (ms) => void waits.push(ms),
    })
    loop.start()
    await done.promise
    await loop.stop()
    // Turns 1 and 2 had more to do; turn 3 did not, so the loop waited before turn 4.
    expect(waits[0]).toBe(1_000)
    expect(turn).toBeGreaterThanOrEqual(4)
  })

  it('wake starts the next turn without waiting out the interval', async () => {
    const first = deferred()
    const second = deferred()
    let turn = 0
    const loop = backgroundLoop({
      intervalMs: 3_600_000,
      run: async () => {
        turn++
        if (turn === 1) first.resolve()
        else second.resolve()
      },
    })
    loop.start()
    await first.promise
    await settle()
    loop.wake()
    await second.promise
    await loop.stop()
    expect(turn).toBeGreaterThanOrEqual(2)
  })

  it('a wake during a turn starts the next turn without a wait', async () => {
    // Regression: a wake while a turn ran found no wait to end and was lost (the analysis job runner's claim
    // waited out its interval for a job queued during its signal sweep; seen on PostgreSQL 15).
    const { loop, started, release, next, turns } = holdingFirstTurn(3_600_000)
    loop.start()
    await started.promise
    loop.wake()
    release.resolve()
    await next.promise
    await loop.stop()
    expect(turns()).toBe(2)
  })

  it('with firstRunAfterInterval, the first turn comes after a wait', async () => {
    const events: string[] = []
    const done = deferred()
    const loop = backgroundLoop({
      intervalMs: 500,
      firstRunAfterInterval: true,
      run: async () => {
        events.push('run')
        done.resolve()
      },
      sleep: async (ms) => void events.push(`wait ${ms}`),
    })
    loop.start()
    await done.promise
    await loop.stop()
    expect(events.slice(0, 2)).toEqual(['wait 500', 'run'])
  })
})
