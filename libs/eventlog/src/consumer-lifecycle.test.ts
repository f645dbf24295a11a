import { describe, expect, it } from 'vitest'
import { ConsumerLifecycle } from './consumer.ts'

/**
 * A lifecycle whose begin and end write what they did; `failBegins(n)` makes the next n begins fail (as a
 * begin that cannot find the group coordinator).
 */
function recorded() {
  const steps: string[] = []
  let failures = 0
  const life = new ConsumerLifecycle(
    async () => {
      steps.push('begin')
      if (failures-- > 0) throw new Error('no coordinator')
    },
    async () => {
      steps.push('end')
    },
  )
  return {
    life,
    steps,
    failBegins: (n: number) => {
      failures = n
    },
  }
}

/** A promise and the function that resolves it. */
function deferred() {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('ConsumerLifecycle.restart (the backend stopped on its own)', () => {
  it('ends what is left and begins again after the backoff, trying again after a failed begin', async () => {
    const { life, steps, failBegins } = recorded()
    await life.start()
    const failed: unknown[] = []
    const waits: number[] = []
    // The first begin of the restart fails: the restart goes on, with the next attempt's backoff.
    failBegins(1)
    await life.restart(
      async (attempt) => {
        waits.push(attempt)
      },
      (err) => failed.push(err),
    )
    expect(steps).toEqual(['begin', 'end', 'begin', 'end', 'begin'])
    expect(waits).toEqual([0, 1])
    expect(failed).toHaveLength(1)
    expect(life.running).toBe(true)
  })

  it('asked for again while one runs, is that one, and begins once more after it', async () => {
    const { life, steps } = recorded()
    await life.start()
    const held = deferred()
    const first = life.restart(
      (attempt) => (attempt === 0 ? held.promise : Promise.resolve()),
      () => {},
    )
    // The backend stopped again before the restart began it: one more begin, not a second restart.
    const second = life.restart(
      async () => {},
      () => {},
    )
    expect(second).toBe(first)
    held.resolve()
    await first
    expect(steps).toEqual(['begin', 'end', 'begin'])
  })

  it('a stop asked for during the backoff waits for it, begins nothing more, and ends', async () => {
    const { life, steps } = recorded()
    await life.start()
    const held = deferred()
    const inBackoff = deferred()
    const restarting = life.restart(
      () => {
        inBackoff.resolve()
        return held.promise
      },
      () => {},
    )
    await inBackoff.promise
    const stopping = life.stop()
    held.resolve()
    await Promise.all([restarting, stopping])
    expect(steps).toEqual(['begin', 'end', 'end'])
    expect(life.running).toBe(false)
  })

  it('does nothing once stopped', async () => {
    const { life, steps } = recorded()
    await life.start()
    await life.stop()
    await life.restart(
      async () => {},
      () => {},
    )
    expect(steps).toEqual(['begin', 'end'])
  })
})
