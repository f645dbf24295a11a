/**
 * What the frustration benches that train a head on conversation labels share (frustration-authors.ts,
 * frustration-pair-authors.ts): a sigmoid head's reading, multiple-instance training and the AUC of a
 * conversation score. Measure only: nothing here ships.
 */

import {
  type LinearHead,
  logits,
  type Sample,
  sigmoid,
  type TrainOptions,
  train,
} from '../../services/analysis/train/linear.ts'

/** A one-output sigmoid head's probability on `x`. */
export const readHead = (head: LinearHead, x: ArrayLike<number>) => sigmoid(logits(head, x)[0]!)

/** A probability's logit, clamped away from 0 and 1. */
export const logit = (p: number) => Math.log(Math.max(p, 1e-6) / Math.max(1 - p, 1e-6))

/** A conversation as the training reads it: its label and its instances (units or replies). */
export interface Bag {
  readonly labelled: boolean
  readonly xs: readonly Float32Array[]
}

/**
 * A one-output head trained multiple-instance on conversation labels: round 0 takes every instance of a
 * labelled conversation as positive, each later round only the instance the previous round's head read
 * highest; every instance of a conversation labelled otherwise is negative. Positives and negatives weigh
 * 5,000 each in all, after `base` (samples of other data, at their own weights). A bag without instances is
 * left out.
 */
export function trainMultipleInstance(
  bags: readonly Bag[],
  opts: { readonly rounds: number; readonly options: TrainOptions; readonly base?: readonly Sample[] },
): LinearHead {
  let head: LinearHead | undefined
  for (let round = 0; round < opts.rounds; round++) {
    const pos: Float32Array[] = []
    const neg: Float32Array[] = []
    for (const { labelled, xs } of bags) {
      if (xs.length === 0) continue
      if (!labelled) neg.push(...xs)
      else if (head === undefined) pos.push(...xs)
      else {
        const h = head
        pos.push(xs.reduce((best, x) => (readHead(h, x) > readHead(h, best) ? x : best)))
      }
    }
    const samples: Sample[] = [
      ...(opts.base ?? []),
      ...pos.map((x) => ({ x, y: [1], weight: 5_000 / pos.length })),
      ...neg.map((x) => ({ x, y: [0], weight: 5_000 / neg.length })),
    ]
    head = train(samples, 1, opts.options)
  }
  if (head === undefined) throw new Error('multiple-instance training takes at least one round')
  return head
}

/** The AUC of `score` over labelled against unlabelled conversations (ties count half). */
export function auc<C extends { readonly labelled: boolean }>(
  cs: readonly C[],
  score: (c: C) => number,
): number {
  const pos = cs.filter((c) => c.labelled).map(score)
  const neg = cs.filter((c) => !c.labelled).map(score)
  let s = 0
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0
  return s / (pos.length * neg.length)
}
