import { describe, expect, it } from 'vitest'
import { checkedTimes } from './signal-coverage.ts'

const at = (day: number) => new Date(Date.UTC(2026, 10, day))
const iso = (day: number) => `"${at(day).toISOString()}"`

describe('checkedTimes', () => {
  it('checks every conversation for a signal on since the creation', () => {
    expect(checkedTimes([{ on: null, off: null }], null)).toBe('{(,)}')
  })

  it('checks the conversations whose last message falls in one of its periods', () => {
    expect(
      checkedTimes(
        [
          { on: null, off: at(3) },
          { on: at(5), off: at(7) },
          { on: at(9), off: null },
        ],
        null,
      ),
    ).toBe(`{(,${iso(3)}),[${iso(5)},${iso(7)}),[${iso(9)},)}`)
  })

  it('checks those before a re-analysis that ran while it was on, not one that ran while it was off', () => {
    const periods = [
      { on: at(2), off: at(4) },
      { on: at(6), off: null },
    ]
    expect(checkedTimes(periods, at(8))).toBe(`{[${iso(2)},${iso(4)}),[${iso(6)},),(,${iso(8)})}`)
    expect(checkedTimes(periods, at(5))).toBe(`{[${iso(2)},${iso(4)}),[${iso(6)},)}`)
  })
})
