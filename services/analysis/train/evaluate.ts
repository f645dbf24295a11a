/** Per-class precision and recall, macro-F1 and Pearson's r: what the benchmark and training report. */
import { POLARITIES, type Polarity } from './corpora.ts'

export interface ClassScores {
  readonly precision: number
  readonly recall: number
  readonly f1: number
  readonly support: number
}

export interface Evaluation {
  readonly n: number
  readonly accuracy: number
  /** Over the classes the set has (negative and positive for a 2-class set). */
  readonly macroF1: number
  readonly perClass: Readonly<Record<Polarity, ClassScores>>
  /** confusion[label][predicted] */
  readonly confusion: Readonly<Record<Polarity, Readonly<Record<Polarity, number>>>>
}

export function evaluate(labels: readonly Polarity[], predicted: readonly Polarity[]): Evaluation {
  const confusion = Object.fromEntries(
    POLARITIES.map((l) => [l, Object.fromEntries(POLARITIES.map((p) => [p, 0]))]),
  ) as Record<Polarity, Record<Polarity, number>>
  labels.forEach((label, i) => {
    confusion[label][predicted[i]!]++
  })
  const perClass = Object.fromEntries(
    POLARITIES.map((c) => {
      const tp = confusion[c][c]
      const predictedC = POLARITIES.reduce((s, l) => s + confusion[l][c], 0)
      const actual = POLARITIES.reduce((s, p) => s + confusion[c][p], 0)
      const precision = predictedC === 0 ? 0 : tp / predictedC
      const recall = actual === 0 ? 0 : tp / actual
      const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)
      return [c, { precision, recall, f1, support: actual }]
    }),
  ) as Record<Polarity, ClassScores>
  const present = POLARITIES.filter((c) => perClass[c].support > 0)
  const correct = POLARITIES.reduce((s, c) => s + confusion[c][c], 0)
  return {
    n: labels.length,
    accuracy: correct / labels.length,
    macroF1: present.reduce((s, c) => s + perClass[c].f1, 0) / present.length,
    perClass,
    confusion,
  }
}

export function pearson(a: readonly number[], b: readonly number[]): number {
  const n = a.length
  const ma = a.reduce((s, x) => s + x, 0) / n
  const mb = b.reduce((s, x) => s + x, 0) / n
  let sab = 0
  let saa = 0
  let sbb = 0
  for (let i = 0; i < n; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb)
    saa += (a[i]! - ma) ** 2
    sbb += (b[i]! - mb) ** 2
  }
  return sab / Math.sqrt(saa * sbb)
}

/**
 * A yes/no reading (a head's probability per item) at a threshold against the items' labels: accuracy,
 * precision and recall, to 3 decimals (what the heads' cross-validations print).
 */
export function binaryReading(
  labels: readonly boolean[],
  reading: readonly number[],
  threshold: number,
): { accuracy: number; precision: number; recall: number } {
  let tp = 0
  let fp = 0
  let fn = 0
  labels.forEach((label, i) => {
    const says = reading[i]! >= threshold
    if (says && label) tp++
    else if (says) fp++
    else if (label) fn++
  })
  const r = (x: number) => Math.round(x * 1000) / 1000
  return {
    accuracy: r((labels.length - fp - fn) / labels.length),
    precision: r(tp / Math.max(tp + fp, 1)),
    recall: r(tp / Math.max(tp + fn, 1)),
  }
}
