/**
 * Linear heads trained with mini-batch Adam and L2: a softmax over classes, or independent sigmoids (one
 * per label, multi-label). Deterministic: a seeded shuffle, no other randomness.
 */

import { seededRandom } from '../src/seeded-random.ts'

export interface LinearHead {
  /** rows: outputs, columns: features */
  readonly weights: Float64Array[]
  readonly bias: Float64Array
}

export interface TrainOptions {
  readonly kind: 'softmax' | 'sigmoid'
  readonly epochs: number
  readonly learningRate: number
  readonly l2: number
  readonly batch: number
  readonly seed: number
}

export interface Sample {
  readonly x: ArrayLike<number>
  /** softmax: one-hot (or soft) target; sigmoid: 0/1 per label. */
  readonly y: ArrayLike<number>
  readonly weight: number
}

export function logits(head: LinearHead, x: ArrayLike<number>): Float64Array {
  const out = new Float64Array(head.bias.length)
  for (let k = 0; k < out.length; k++) {
    const w = head.weights[k]!
    let s = head.bias[k]!
    for (let j = 0; j < w.length; j++) s += w[j]! * x[j]!
    out[k] = s
  }
  return out
}

export function softmax(z: ArrayLike<number>): Float64Array {
  let max = -Infinity
  for (let i = 0; i < z.length; i++) max = Math.max(max, z[i]!)
  const out = new Float64Array(z.length)
  let sum = 0
  for (let i = 0; i < z.length; i++) {
    out[i] = Math.exp(z[i]! - max)
    sum += out[i]!
  }
  for (let i = 0; i < z.length; i++) out[i]! /= sum
  return out
}

export const sigmoid = (z: number) => 1 / (1 + Math.exp(-z))

export function train(samples: readonly Sample[], outputs: number, opts: TrainOptions): LinearHead {
  const dims = samples[0]!.x.length
  const weights = Array.from({ length: outputs }, () => new Float64Array(dims))
  const bias = new Float64Array(outputs)
  const m = weights.map(() => new Float64Array(dims))
  const v = weights.map(() => new Float64Array(dims))
  const mb = new Float64Array(outputs)
  const vb = new Float64Array(outputs)
  const gw = weights.map(() => new Float64Array(dims))
  const gb = new Float64Array(outputs)
  const [b1, b2, eps] = [0.9, 0.999, 1e-8]
  const random = seededRandom(opts.seed)
  const order = samples.map((_, i) => i)
  let step = 0
  const head = { weights, bias }
  for (let epoch = 0; epoch < opts.epochs; epoch++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    for (let start = 0; start < order.length; start += opts.batch) {
      const batch = order.slice(start, start + opts.batch)
      for (const g of gw) g.fill(0)
      gb.fill(0)
      let batchWeight = 0
      for (const idx of batch) {
        const { x, y, weight } = samples[idx]!
        batchWeight += weight
        const z = logits(head, x)
        const p = opts.kind === 'softmax' ? softmax(z) : z.map(sigmoid)
        for (let k = 0; k < outputs; k++) {
          const d = (p[k]! - y[k]!) * weight
          if (d === 0) continue
          const g = gw[k]!
          for (let j = 0; j < dims; j++) g[j]! += d * x[j]!
          gb[k]! += d
        }
      }
      // The batch's weighted mean loss, plus l2/2 · |w|².
      const scale = 1 / Math.max(batchWeight, 1e-9)
      const l2 = opts.l2
      step++
      const lr = (opts.learningRate * Math.sqrt(1 - b2 ** step)) / (1 - b1 ** step)
      for (let k = 0; k < outputs; k++) {
        const w = weights[k]!
        const g = gw[k]!
        const mk = m[k]!
        const vk = v[k]!
        for (let j = 0; j < dims; j++) {
          const grad = g[j]! * scale + l2 * w[j]!
          mk[j] = b1 * mk[j]! + (1 - b1) * grad
          vk[j] = b2 * vk[j]! + (1 - b2) * grad * grad
          w[j]! -= (lr * mk[j]!) / (Math.sqrt(vk[j]!) + eps)
        }
        const grad = gb[k]! * scale
        mb[k] = b1 * mb[k]! + (1 - b1) * grad
        vb[k] = b2 * vb[k]! + (1 - b2) * grad * grad
        bias[k]! -= (lr * mb[k]!) / (Math.sqrt(vb[k]!) + eps)
      }
    }
  }
  return head
}

/**
 * A seeded split of labelled items into `folds` folds within each class, for a cross-validated reading:
 * each class shuffled (Fisher–Yates on `random`), then dealt round the folds. The fold of each item, by
 * index; the same labels and random sequence give the same folds.
 */
export function stratifiedFolds(labels: readonly boolean[], folds: number, random: () => number): number[] {
  const fold = new Array<number>(labels.length)
  for (const yes of [true, false]) {
    const members = labels.map((label, i) => (label === yes ? i : -1)).filter((i) => i >= 0)
    for (let i = members.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[members[i], members[j]] = [members[j]!, members[i]!]
    }
    members.forEach((i, k) => {
      fold[i] = k % folds
    })
  }
  return fold
}
