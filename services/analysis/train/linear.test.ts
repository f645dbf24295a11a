import { describe, expect, it } from 'vitest'
import { seededRandom } from '../src/seeded-random.ts'
import { binaryReading, evaluate, pearson } from './evaluate.ts'
import { logits, type Sample, sigmoid, softmax, stratifiedFolds, train } from './linear.ts'

describe('the training of the linear heads', () => {
  // Three classes on a line: x < −1, −1..1, > 1 (with a constant feature), separable by a softmax.
  const points = Array.from({ length: 90 }, (_, i) => -3 + (i * 6) / 89)
  const classOf = (x: number) => (x < -1 ? 0 : x > 1 ? 2 : 1)
  const samples: Sample[] = points.map((x) => ({
    x: [x, x * x],
    y: [0, 1, 2].map((k) => (k === classOf(x) ? 1 : 0)),
    weight: 1,
  }))
  const opts = { epochs: 300, learningRate: 0.05, l2: 0, batch: 16, seed: 7 }

  it('learns separable classes with a softmax, the same weights for the same seed', () => {
    const head = train(samples, 3, { ...opts, kind: 'softmax' })
    const predicted = points.map((x) => {
      const p = softmax(logits(head, [x, x * x]))
      return p.indexOf(Math.max(...p))
    })
    const right = predicted.filter((k, i) => k === classOf(points[i]!)).length
    expect(right / points.length).toBeGreaterThan(0.9)
    expect(train(samples, 3, { ...opts, kind: 'softmax' })).toEqual(head)
  })

  it('learns one label with a sigmoid', () => {
    const binary = samples.map((s, i) => ({ ...s, y: [points[i]! > 0 ? 1 : 0] }))
    const head = train(binary, 1, { ...opts, kind: 'sigmoid' })
    expect(sigmoid(logits(head, [2, 4])[0]!)).toBeGreaterThan(0.9)
    expect(sigmoid(logits(head, [-2, 4])[0]!)).toBeLessThan(0.1)
  })
})

describe('the evaluation', () => {
  it('gives precision and recall per class and macro-F1 over the classes present', () => {
    const ev = evaluate(
      ['negative', 'negative', 'positive', 'positive'],
      ['negative', 'neutral', 'positive', 'negative'],
    )
    expect(ev.perClass.negative).toMatchObject({ precision: 0.5, recall: 0.5, support: 2 })
    expect(ev.perClass.positive).toMatchObject({ precision: 1, recall: 0.5 })
    expect(ev.perClass.neutral.support).toBe(0)
    // neutral has no examples: the mean of negative's F1 (0.5) and positive's (2/3).
    expect(ev.macroF1).toBeCloseTo((0.5 + 2 / 3) / 2)
    expect(ev.accuracy).toBe(0.5)
  })

  it('reads a yes/no head at a threshold: accuracy, precision and recall', () => {
    const labels = [true, true, true, false, false, false, false, false]
    const reading = [0.9, 0.6, 0.3, 0.7, 0.2, 0.1, 0.4, 0.55]
    // ≥ 0.5: yes for 0.9, 0.6 (right), 0.7 and 0.55 (wrong); 0.3 missed.
    expect(binaryReading(labels, reading, 0.5)).toEqual({ accuracy: 0.625, precision: 0.5, recall: 0.667 })
    expect(binaryReading(labels, reading, 0.95)).toEqual({ accuracy: 0.625, precision: 0, recall: 0 })
  })

  it("computes Pearson's r", () => {
    expect(pearson([1, 2, 3], [2, 4, 6])).toBeCloseTo(1)
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1)
  })

  it('splits each class evenly over the folds, the same folds for the same random sequence', () => {
    const labels = Array.from({ length: 23 }, (_, i) => i % 3 === 0)
    const folds = stratifiedFolds(labels, 5, seededRandom(3))
    expect(folds).toHaveLength(23)
    for (const yes of [true, false]) {
      const sizes = [0, 1, 2, 3, 4].map((f) => folds.filter((k, i) => k === f && labels[i] === yes).length)
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1)
    }
    expect(stratifiedFolds(labels, 5, seededRandom(3))).toEqual(folds)
    expect(stratifiedFolds(labels, 5, seededRandom(4))).not.toEqual(folds)
  })
})
