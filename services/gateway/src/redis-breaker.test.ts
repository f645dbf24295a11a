import { describe, expect, it } from 'vitest'
import { type BreakerPolicy, RedisBreaker } from './redis-breaker.ts'

const policy: BreakerPolicy = { timeoutsToOpen: 3, firstOpenMs: 1_000, maxOpenMs: 5_000 }

function breaker() {
  let now = 0
  const events: string[] = []
  const b = new RedisBreaker(policy, () => now, {
    opened: () => events.push('opened'),
    closed: () => events.push('closed'),
  })
  const timeOut = (n: number) => {
    for (let i = 0; i < n; i++) b.report(b.admit() ?? 'closed', 'timed-out')
  }
  const advance = (ms: number) => {
    now += ms
  }
  return { b, events, timeOut, advance }
}

describe('RedisBreaker', () => {
  it('opens after consecutive timeouts only, once', () => {
    const { b, events, timeOut } = breaker()
    timeOut(2)
    b.report('closed', 'answered')
    timeOut(2)
    b.report('closed', 'failed')
    expect(b.isOpen).toBe(false)
    expect(b.admit()).toBe('closed')

    timeOut(1)
    expect(b.isOpen).toBe(true)
    expect(b.admit()).toBeUndefined()
    // A burst's other commands time out after it opened: not another opening.
    b.report('closed', 'timed-out')
    b.report('closed', 'answered')
    expect(events).toEqual(['opened'])
  })

  it('lets one probe through when the interval is over, and closes when it is answered', () => {
    const { b, events, timeOut, advance } = breaker()
    timeOut(3)
    advance(999)
    expect(b.admit()).toBeUndefined()
    advance(1)
    expect(b.admit()).toBe('probe')
    expect(b.admit()).toBeUndefined()
    b.report('probe', 'answered')
    expect(b.isOpen).toBe(false)
    expect(b.admit()).toBe('closed')
    expect(events).toEqual(['opened', 'closed'])
  })

  it('doubles the interval after each failed probe, up to the bound, and starts over once closed', () => {
    const { b, events, timeOut, advance } = breaker()
    timeOut(3)
    const intervals: number[] = []
    for (let probe = 0; probe < 4; probe++) {
      let waited = 0
      while (!b.admit()) {
        advance(100)
        waited += 100
      }
      intervals.push(waited)
      b.report('probe', probe % 2 ? 'failed' : 'timed-out')
    }
    expect(intervals).toEqual([1_000, 2_000, 4_000, 5_000])
    expect(events).toEqual(['opened'])

    advance(5_000)
    b.report(b.admit()!, 'answered')
    timeOut(3)
    advance(1_000)
    expect(b.admit()).toBe('probe')
    expect(events).toEqual(['opened', 'closed', 'opened'])
  })
})
