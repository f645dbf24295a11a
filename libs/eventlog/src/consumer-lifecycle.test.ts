import { describe, expect, it } from 'vitest'
import { ConsumerLifecycle } from './consumer.ts'

/** A lifecycle whose begin and end write what they did; `failBegins` begins fail first. */
function recorded(failBegins = 0) {
  const steps: string[] = []
  let failures = failBegins
  const life = new ConsumerLifecycle(
    async () => {
      steps.push('begin')
      if (failures-- > 0) throw new Error('no coordinator')
    },
    async () => {
      steps.push('end')
    },
  )
  return { life, steps }
}

describe('ConsumerLifecycle.restart (the backend stopped on its own)', () => {
  it('ends what is left and begins again after the backoff, trying again after a failed begin', async () => {
    const { life, steps } = recorded()
    await life.start()
    const failed: unknown[] = []
    const waits: number[] = []
    // The first begin of the restart fails: the restart goes on, with the next attempt's backoff.
    let failNext = true
    const begin = (life as unknown as { begin: () => Promise<void> }).begin
    ;(life as unknown as { begin: () => Promise<void> }).begin = async () => {
      await begin()
      if (failNext) {
        failNext = false
        throw new Error('no coordinator')
      }
    }
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
    let release: () => void = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    const first = life.restart(
      (attempt) => (attempt === 0 ? held : Promise.resolve()),
      () => {},
    )
    // The backend stopped again before the restart began it: one more begin, not a second restart.
    const second = life.restart(
      async () => {},
      () => {},
    )
    expect(second).toBe(first)
    release()
    await first
    expect(steps).toEqual(['begin', 'end', 'begin'])
  })

  it('a stop asked for during the backoff waits for it, begins nothing more, and ends', async () => {
    const { life, steps } = recorded()
    await life.start()
    let release: () => void = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    let waiting: () => void = () => {}
    const inBackoff = new Promise<void>((r) => {
      waiting = r
    })
    const restarting = life.restart(
      () => {
        waiting()
        return held
      },
      () => {},
    )
    await inBackoff
    const stopping = life.stop()
    release()
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
