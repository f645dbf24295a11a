import { describe, expect, it } from 'vitest'
import { agreement, joinReadings, precisionRecall, type SecondReading } from './frustration-agreement.ts'

const reading = (set: string, id: string, frustration: boolean): SecondReading => ({
  key: `${set}/${id}`,
  set,
  id,
  frustration,
  messages: [],
  sure: 'sure',
  why: '',
})

describe('Cohen κ', () => {
  it('matches a hand-computed table', () => {
    // 10 items: both yes 4, first yes second no 1, first no second yes 2, both no 3.
    // observed 7/10; first says yes 5/10, second 6/10; chance 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5) / 0.5 = 0.4
    const pairs: [boolean, boolean][] = [
      ...Array<[boolean, boolean]>(4).fill([true, true]),
      [true, false],
      [false, true],
      [false, true],
      ...Array<[boolean, boolean]>(3).fill([false, false]),
    ]
    const a = agreement(pairs)
    expect(a.n).toBe(10)
    expect(a.agree).toBe(7)
    expect(a.share).toBeCloseTo(0.7, 12)
    expect(a.kappa).toBeCloseTo(0.4, 12)
    // se = √(0.7 · 0.3 / (10 · 0.5²)) = √0.084
    expect(a.se).toBeCloseTo(Math.sqrt(0.084), 12)
  })

  it('is 1 for full agreement, below 0 for agreement worse than chance, NaN when nobody varies', () => {
    expect(
      agreement([
        [true, true],
        [false, false],
      ]).kappa,
    ).toBe(1)
    expect(
      agreement([
        [true, false],
        [false, true],
      ]).kappa,
    ).toBe(-1)
    expect(
      agreement([
        [false, false],
        [false, false],
      ]).kappa,
    ).toBeNaN()
  })
})

describe('joinReadings', () => {
  const sets: Record<string, Record<string, string[]>> = {
    fresh2: { 'a-01': ['frustration', 'escalation'], 'b-01': ['resolution'] },
    fresh12: { 'c-02': [] },
  }
  const signalsOf = (set: string, id: string) => sets[set]?.[id]

  it("pairs each reading with its conversation's original label and half", () => {
    const joined = joinReadings(
      [reading('fresh2', 'a-01', false), reading('fresh2', 'b-01', true), reading('fresh12', 'c-02', false)],
      signalsOf,
    )
    expect(joined.map((j) => [j.original, j.frustration, j.half])).toEqual([
      [true, false, 'older'],
      [false, true, 'older'],
      [false, false, 'newer'],
    ])
  })

  it('rejects a reading of a conversation the sets do not hold, and one read twice', () => {
    expect(() => joinReadings([reading('fresh2', 'zz-09', true)], signalsOf)).toThrow(/no conversation zz-09/)
    expect(() =>
      joinReadings([reading('fresh12', 'c-02', true)].concat(reading('fresh12', 'c-02', false)), signalsOf),
    ).toThrow(/read twice/)
  })
})

describe('precisionRecall', () => {
  it('counts a detector against labels', () => {
    const pr = precisionRecall([
      [true, true],
      [true, true],
      [true, false],
      [false, true],
      [false, false],
    ])
    expect(pr).toMatchObject({ tp: 2, fp: 1, fn: 1 })
    expect(pr.precision).toBeCloseTo(2 / 3, 12)
    expect(pr.recall).toBeCloseTo(2 / 3, 12)
  })
})
