import { describe, expect, it } from 'vitest'
import { signalsSince } from './signal-coverage.ts'

// What the audit log's settings patches tell of when each signal was turned on (issue 32).

const at = (day: number) => new Date(Date.UTC(2026, 10, day))
const discount = { label: 'Asks for a discount', examples: ['any coupon?'] }
const DISCOUNT = 'custom:asks-for-a-discount'

describe('signalsSince', () => {
  it('takes every signal as on since creation when no change touched the signals', () => {
    const since = signalsSince({ signals: { custom: [discount] } }, [{ at: at(2), patch: { name: 'x' } }])
    expect(since.get('frustration')).toBeNull()
    expect(since.get(DISCOUNT)).toBeNull()
    expect(since.size).toBe(7)
  })

  it('leaves out a signal off now, and dates one turned on again from that change', () => {
    const since = signalsSince({ signals: { disabled: ['escalation'] } }, [
      { at: at(2), patch: { signals: { disabled: ['frustration'] } } },
      { at: at(5), patch: { signals: { disabled: ['escalation'] } } },
    ])
    expect(since.has('escalation')).toBe(false)
    expect(since.get('frustration')).toEqual(at(5))
    expect(since.get('bot_failure')).toBeNull()
  })

  it('dates a custom signal from the first change that lists it, a removed and re-added one from its return', () => {
    const history = [
      { at: at(2), patch: { signals: { custom: [discount] } } },
      { at: at(3), patch: { signals: { abandonmentAfterMinutes: 10 } } },
      {
        at: at(4),
        patch: { signals: { custom: [discount, { label: 'Wants a refund', examples: ['refund'] }] } },
      },
    ]
    const settings = { signals: { custom: history[2]!.patch.signals.custom } }
    expect(signalsSince(settings, history).get(DISCOUNT)).toEqual(at(2))
    expect(signalsSince(settings, history).get('custom:wants-a-refund')).toEqual(at(4))
    const reAdded = [...history.slice(0, 1), { at: at(3), patch: { signals: null } }, ...history.slice(2)]
    expect(signalsSince(settings, reAdded).get(DISCOUNT)).toEqual(at(4))
  })
})
