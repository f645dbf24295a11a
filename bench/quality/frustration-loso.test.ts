import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../services/analysis/src/seeded-random.ts'
import type { MessageCues } from '../../services/analysis/src/signals/cues.ts'
import { boostedTrees } from './boosted-trees.ts'
import {
  type Bag,
  bagsOf,
  chooseThreshold,
  countsAt,
  FEATURES,
  fitAndTest,
  fitModel,
  leaveOneSetOut,
  scoreBag,
  UNIT_FEATURES,
} from './frustration-loso.ts'
import { logisticRegression } from './logistic-regression.ts'
import type { ScoredConversation } from './signals-replay.ts'

const random = seededRandom(32)
const noise = () => random() - 0.5

/** A bag of `calm` instances and, when `angry`, one more whose first feature reads high; the second is noise. */
function bag(set: string, id: string, angry: boolean, calm = 3): Bag {
  const instances = Array.from({ length: calm }, () => Float64Array.from([noise(), noise()]))
  if (angry) instances.push(Float64Array.from([2 + noise(), noise()]))
  return { set, id, positive: angry, instances }
}

const sets = ['a', 'b', 'c', 'd']
const bags = sets.flatMap((set) => Array.from({ length: 20 }, (_, i) => bag(set, `${set}-${i}`, i % 3 === 0)))

describe('logisticRegression', () => {
  it('weighs the feature that separates the classes, not the noise beside it', () => {
    const rows = Array.from({ length: 200 }, () => {
      const x = [noise() * 4, noise()]
      return { x, y: x[0]! + noise() > 0 ? 1 : 0 }
    })
    const { weights } = logisticRegression(rows, 1)
    expect(weights[0]).toBeGreaterThan(1)
    expect(Math.abs(weights[1]!)).toBeLessThan(weights[0]! / 4)
  })

  it('pulls the weights towards 0 as the ridge grows', () => {
    const rows = Array.from({ length: 100 }, () => {
      const x = [noise()]
      return { x, y: x[0]! > 0 ? 1 : 0 }
    })
    expect(logisticRegression(rows, 100).weights[0]!).toBeLessThan(logisticRegression(rows, 0.1).weights[0]!)
  })
})

describe('boostedTrees', () => {
  it('learns a conjunction a logistic regression cannot (frustrated when exactly one of two cues is high)', () => {
    const rows = Array.from({ length: 400 }, () => {
      const x = [noise(), noise()]
      return { x, y: x[0]! > 0 !== x[1]! > 0 ? 1 : 0 }
    })
    const right = (logit: (x: number[]) => number) =>
      rows.filter((r) => (logit(r.x) > 0 ? 1 : 0) === r.y).length / rows.length
    const trees = boostedTrees(rows)
    const { weights, bias } = logisticRegression(rows, 1)
    expect(right(trees)).toBeGreaterThan(0.9)
    expect(right((x) => bias + weights[0]! * x[0]! + weights[1]! * x[1]!)).toBeLessThan(0.7)
  })
})

describe('chooseThreshold', () => {
  it('cuts where the fewest conversations are decided wrongly, midway between two scores', () => {
    const scored = [0.1, 0.2, 0.3, 0.7, 0.8].map((score, i) => ({ score, positive: i >= 3 }))
    expect(chooseThreshold(scored)).toBeCloseTo(0.5)
    // A positive among the negatives: one error at best (at 0.15 or 0.5), never two.
    const mixed = [0.1, 0.2, 0.3, 0.7, 0.8].map((score, i) => ({ score, positive: [1, 3, 4].includes(i) }))
    const c = countsAt(mixed, chooseThreshold(mixed))
    expect(c.fp + c.fn).toBe(1)
  })
})

describe('fitModel', () => {
  it('scores the conversations with a frustrated message above those without (multiple-instance: the max)', () => {
    for (const instances of ['all', 'top'] as const) {
      const model = fitModel(bags, { instances })
      const positives = bags.filter((b) => b.positive).map((b) => scoreBag(model, b))
      const negatives = bags.filter((b) => !b.positive).map((b) => scoreBag(model, b))
      expect(Math.min(...positives)).toBeGreaterThan(Math.max(...negatives))
    }
  })

  it('scores them so with boosted trees too', () => {
    const model = fitModel(bags, { instances: 'top', learner: 'trees' })
    expect(model.weights).toBeUndefined()
    const positives = bags.filter((b) => b.positive).map((b) => scoreBag(model, b))
    const negatives = bags.filter((b) => !b.positive).map((b) => scoreBag(model, b))
    expect(Math.min(...positives)).toBeGreaterThan(Math.max(...negatives))
  })

  it('reads only the columns it is given', () => {
    const model = fitModel(bags, { instances: 'all', columns: [1] })
    expect(model.columns).toEqual([1])
    expect(model.weights).toHaveLength(1)
  })
})

describe('leaveOneSetOut', () => {
  it('fits and chooses the threshold without the set it decides', () => {
    const folds = leaveOneSetOut(bags, { instances: 'top' })
    expect(folds.map((f) => f.sets)).toEqual(sets.map((s) => [s]))
    // Turn set a's labels over: its own fold's model and threshold do not move, the other folds' do.
    const flipped = bags.map((b) => (b.set === 'a' ? { ...b, positive: !b.positive } : b))
    const again = leaveOneSetOut(flipped, { instances: 'top' })
    expect(again[0]!.threshold).toBe(folds[0]!.threshold)
    expect(Array.from(again[0]!.model.weights!)).toEqual(Array.from(folds[0]!.model.weights!))
    expect(Array.from(again[1]!.model.weights!)).not.toEqual(Array.from(folds[1]!.model.weights!))
    // Decided with the labels turned over, set a is now all wrong: its 7 angry ones false, its 13 calm ones missed.
    expect(again[0]!.counts.a).toEqual({ tp: 0, fp: 7, fn: 13 })
    expect(folds[0]!.counts.a).toEqual({ tp: 7, fp: 0, fn: 0 })
  })

  it('names the conversations it decides wrongly', () => {
    const test = [bag('e', 'e-1', false), { ...bag('e', 'e-2', true), positive: false }]
    expect(fitAndTest(bags, test, { instances: 'all' }).wrong).toEqual(['e e-2'])
  })
})

describe('bagsOf', () => {
  const user = (cues: Partial<MessageCues>): ScoredConversation['messages'][number] => ({
    role: 'user',
    cues: { social: -0.3, frustration: -0.1, resolution: -0.2, ...cues },
    vector: [1, 0],
  })
  const bot = (cues: Partial<MessageCues>, vector = [0, 1]): ScoredConversation['messages'][number] => ({
    role: 'assistant',
    cues: { social: -0.3, failure: -0.2, ...cues },
    vector,
  })
  const conversation: ScoredConversation = {
    set: 'fresh9',
    id: 'x-01',
    labels: ['frustration'],
    messages: [
      user({ emotionFrustration: 0.7, frustrationUnits: [{ head: 0.7, margin: -0.1 }] }),
      bot({}),
      user({}),
      bot({ inability: true, failure: 0.05 }, [0, 1]),
      user({
        frustration: 0.04,
        emotionFrustration: 0.2,
        frustrationUnits: [
          { head: 0.2, margin: 0.01, displeasure: 0.1 },
          { head: 0.9, margin: 0.04, displeasure: 0.6 },
        ],
        escalationUnits: [
          { head: 0.1, margin: -0.3 },
          { head: 0.6, margin: -0.2 },
        ],
      }),
    ],
  }

  it('reads each end-user message with its place and the turn before', () => {
    const [b] = bagsOf([conversation])
    expect(b!.positive).toBe(true)
    expect(b!.instances).toHaveLength(3)
    const row = (k: number) =>
      Object.fromEntries(FEATURES.map((f, i) => [f, b!.instances[k]![i]])) as Record<string, number>
    expect(row(0)).toMatchObject({ reply: 0, last: 0, upsetBefore: 0, prevInability: 0, thanksAfter: -0.2 })
    expect(row(0).prevFailure).toBeNaN()
    expect(row(2)).toMatchObject({
      reply: 1,
      last: 1,
      headWhole: 0.2,
      headMax: 0.9,
      marginMax: 0.04,
      headAtBestMargin: 0.9,
      displeasureMax: 0.6,
      escalationMax: 0.6,
      prevFailure: 0.05,
      prevInability: 1,
      // The failed turn says the first answer again (the same vector).
      prevRepeat: 1,
      upsetBefore: 0.7,
    })
    expect(row(2).thanksAfter).toBeNaN()
  })

  it('gives each unit an instance of its own, read with its message', () => {
    const [b] = bagsOf([conversation], 'unit')
    // The first message has one unit, the second none (no units scored), the last two.
    expect(b!.instances).toHaveLength(3)
    const last = Object.fromEntries(UNIT_FEATURES.map((f, i) => [f, b!.instances[2]![i]])) as Record<
      string,
      number
    >
    expect(last).toMatchObject({
      unitHead: 0.9,
      unitMargin: 0.04,
      unitEscalation: 0.6,
      unitIsWhole: 0,
      reply: 1,
    })
    expect(last.headByMargin).toBeCloseTo(0.036)
  })
})
