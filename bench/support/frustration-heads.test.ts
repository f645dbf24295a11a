import { describe, expect, it } from 'vitest'
import { type Sample, train } from '../../services/analysis/train/linear.ts'
import { auc, readHead, trainMultipleInstance } from './frustration-heads.ts'

const OPTIONS = { kind: 'sigmoid', epochs: 20, learningRate: 0.05, l2: 1e-6, batch: 4, seed: 1 } as const
const v = (...x: number[]) => Float32Array.from(x)
// Two labelled conversations, each with one frustrated instance (axis 0) and one calm one (axis 1), and
// two calm conversations.
const bags = [
  { labelled: true, xs: [v(1, 0), v(0, 1)] },
  { labelled: true, xs: [v(0.1, 1), v(0.9, 0.1)] },
  { labelled: false, xs: [v(0, 1), v(0.1, 0.9)] },
  { labelled: false, xs: [v(0.05, 1)] },
  { labelled: false, xs: [] },
]
const weighed = (pos: Float32Array[], neg: Float32Array[]): Sample[] => [
  ...pos.map((x) => ({ x, y: [1], weight: 5_000 / pos.length })),
  ...neg.map((x) => ({ x, y: [0], weight: 5_000 / neg.length })),
]
const negatives = [v(0, 1), v(0.1, 0.9), v(0.05, 1)]

describe('multiple-instance training of a frustration head', () => {
  it('trains round 0 on every instance of a labelled conversation, after the base samples', () => {
    const base: Sample[] = [{ x: v(1, 1), y: [1], weight: 3 }]
    const once = trainMultipleInstance(bags, { rounds: 1, options: OPTIONS, base })
    const all = train(
      [...base, ...weighed([v(1, 0), v(0, 1), v(0.1, 1), v(0.9, 0.1)], negatives)],
      1,
      OPTIONS,
    )
    expect(once).toEqual(all)
  })

  it("keeps in each later round only the instance the last round's head read highest", () => {
    const first = trainMultipleInstance(bags, { rounds: 1, options: OPTIONS })
    const best = bags
      .filter((b) => b.labelled)
      .map((b) => b.xs.reduce((a, x) => (readHead(first, x) > readHead(first, a) ? x : a)))
    const twice = trainMultipleInstance(bags, { rounds: 2, options: OPTIONS })
    expect(twice).toEqual(train(weighed(best, negatives), 1, OPTIONS))
    // Here the frustrated instance of each (axis 0).
    expect(best).toEqual([v(1, 0), v(0.9, 0.1)])
  })
})

describe('the AUC of a conversation score', () => {
  it('is 1 when every labelled conversation scores above every other, a half for each tie', () => {
    const cs = [
      { labelled: true, s: 0.9 },
      { labelled: true, s: 0.5 },
      { labelled: false, s: 0.5 },
      { labelled: false, s: 0.1 },
    ]
    expect(auc(cs, (c) => c.s)).toBe((1 + 1 + 0.5 + 1) / 4)
    expect(auc(cs.slice(0, 1).concat(cs.slice(2)), (c) => c.s)).toBe(1)
  })
})
