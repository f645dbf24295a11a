import { describe, expect, it } from 'vitest'
import { ConsumerLifecycle } from './consumer.ts'

/**
 * A lifecycle whose begin and end write what they did; `failBegins(n)` makes the next n begins fail (as a
 * begin that cannot find the group coordinator); `hold('begin' | 'end')` holds the begins (ends) entered
 * until `release()`, each writing 'begun' ('ended') once let through.
 */
function recorded() {
  const steps: string[] = []
  let failures = 0
  const held: { begin?: Hold; end?: Hold } = {}
  const pass = async (step: 'begin' | 'end') => {
    steps.push(step)
    const hold = held[step]
    if (!hold) return
    hold.entered.resolve()
    await hold.gate.promise
    steps.push(`${step === 'begin' ? 'begun' : 'ended'}`)
  }
  const life = new ConsumerLifecycle(
    async () => {
      await pass('begin')
      if (failures-- > 0) throw new Error('no coordinator')
    },
    () => pass('end'),
  )
  return {
    life,
    steps,
    failBegins: (n: number) => {
      failures = n
    },
    hold: (step: 'begin' | 'end') => {
      const hold = { entered: deferred(), gate: deferred() }
      held[step] = hold
      return {
        entered: hold.entered.promise,
        release: () => {
          held[step] = undefined
          hold.gate.resolve()
        },
      }
    },
  }
}

interface Hold {
  entered: ReturnType<typeof deferred>
  gate: ReturnType<typeof deferred>
}

/** A promise and the function that resolves it. */
function deferred() {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('ConsumerLifecycle start and stop, in the order they were asked for', () => {
  it('a start asked for during a stop begins once the stop has ended', async () => {
    // Regression: a start asked for while a stop ran began at once, while the stop's end gave back what
    // the consumer held (the Kafka backend's end disconnected the consumer the new start had just made).
    const { life, steps, hold } = recorded()
    await life.start()
    const end = hold('end')
    const stopping = life.stop()
    await end.entered
    const starting = life.start()
    end.release()
    await Promise.all([stopping, starting])
    expect(steps).toEqual(['begin', 'end', 'ended', 'begin'])
    expect(life.running).toBe(true)
  })

  it('a stop and a start asked for during a start run after it, in that order', async () => {
    const { life, steps, hold } = recorded()
    const begin = hold('begin')
    const first = life.start()
    await begin.entered
    const stopping = life.stop()
    const second = life.start()
    begin.release()
    await Promise.all([first, stopping, second])
    expect(steps).toEqual(['begin', 'begun', 'end', 'begin'])
    expect(life.running).toBe(true)
  })

  it('a start followed by a stop before its turn came starts nothing', async () => {
    const { life, steps, hold } = recorded()
    const begin = hold('begin')
    const first = life.start()
    await begin.entered
    const stops = [life.stop()]
    const waiting = life.start()
    stops.push(life.stop())
    begin.release()
    await Promise.all([first, waiting, ...stops])
    expect(steps).toEqual(['begin', 'begun', 'end', 'end'])
    expect(life.running).toBe(false)
  })

  it('starts asked for again while one waits for its turn are that one', async () => {
    const { life, steps, hold } = recorded()
    await life.start()
    const end = hold('end')
    const stopping = life.stop()
    await end.entered
    const starting = life.start()
    expect(life.start()).toBe(starting)
    end.release()
    await Promise.all([stopping, starting])
    expect(steps).toEqual(['begin', 'end', 'ended', 'begin'])
  })

  it('a start asked for while one that fails is under way shares its failure; asked for after, begins', async () => {
    const { life, steps, failBegins, hold } = recorded()
    const begin = hold('begin')
    failBegins(1)
    const failing = life.start()
    await begin.entered
    expect(life.start()).toBe(failing)
    begin.release()
    await expect(failing).rejects.toThrow('no coordinator')
    await life.start()
    expect(steps).toEqual(['begin', 'begun', 'end', 'begin'])
    expect(life.running).toBe(true)
  })
})

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

  it('asked for while a start is under way, ends and begins again after it', async () => {
    const { life, steps, hold } = recorded()
    const begin = hold('begin')
    const starting = life.start()
    await begin.entered
    const restarting = life.restart(
      async () => {},
      () => {},
    )
    // A start asked for meanwhile is the restart, not another begin.
    expect(life.start()).toBe(restarting)
    begin.release()
    await Promise.all([starting, restarting])
    expect(steps).toEqual(['begin', 'begun', 'end', 'begin'])
    expect(life.running).toBe(true)
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
