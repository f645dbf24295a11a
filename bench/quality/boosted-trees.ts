/**
 * Gradient-boosted regression trees on the log-loss (Newton leaves, as in XGBoost), for
 * bench/quality/frustration-loso.ts: a learned combination that can express the rules' conjunctions (the head
 * AND the margin on the same message, a looser gate in a reply), which a logistic regression cannot. The
 * settings are the usual defaults (100 trees of depth 2, shrinkage 0.1, λ 1, at least 20 rows a leaf), not
 * tuned on any set. Deterministic.
 */
import { sigmoid } from './logistic-regression.ts'

export interface TreeOptions {
  readonly rounds: number
  readonly depth: number
  readonly rate: number
  readonly minLeaf: number
}

export const TREE_DEFAULTS: TreeOptions = { rounds: 100, depth: 2, rate: 0.1, minLeaf: 20 }

type Node =
  | { readonly leaf: number }
  | { readonly feature: number; readonly cut: number; left: Node; right: Node }

const LAMBDA = 1

function evaluate(node: Node, x: ArrayLike<number>): number {
  let n = node
  while (!('leaf' in n)) n = x[n.feature]! < n.cut ? n.left : n.right
  return n.leaf
}

/** Fits the trees on rows (no NaN: impute first); returns the log-odds the ensemble gives a row. */
export function boostedTrees(
  rows: readonly { readonly x: ArrayLike<number>; readonly y: number }[],
  opts: TreeOptions = TREE_DEFAULTS,
): (x: ArrayLike<number>) => number {
  const n = rows.length
  const dims = rows[0]?.x.length ?? 0
  const mean = rows.reduce((a, r) => a + r.y, 0) / Math.max(n, 1)
  const base = Math.log(Math.max(mean, 1e-6) / Math.max(1 - mean, 1e-6))
  // Each feature's row order, sorted once.
  const sorted = Array.from({ length: dims }, (_, f) =>
    Int32Array.from(rows.map((_, i) => i)).sort((a, b) => rows[a]!.x[f]! - rows[b]!.x[f]!),
  )
  const logit = new Float64Array(n).fill(base)
  const g = new Float64Array(n)
  const h = new Float64Array(n)
  const trees: Node[] = []

  const grow = (member: Uint8Array, count: number, depth: number): Node => {
    let G = 0
    let H = 0
    for (let i = 0; i < n; i++) {
      if (member[i] === 0) continue
      G += g[i]!
      H += h[i]!
    }
    const leaf = { leaf: (opts.rate * G) / (H + LAMBDA) }
    if (depth === opts.depth || count < 2 * opts.minLeaf) return leaf
    let best = { gain: 0, feature: -1, cut: 0 }
    const whole = (G * G) / (H + LAMBDA)
    for (let f = 0; f < dims; f++) {
      let gl = 0
      let hl = 0
      let left = 0
      let previous = Number.NaN
      for (const i of sorted[f]!) {
        if (member[i] === 0) continue
        const v = rows[i]!.x[f]!
        if (left >= opts.minLeaf && count - left >= opts.minLeaf && v !== previous) {
          const gain = (gl * gl) / (hl + LAMBDA) + ((G - gl) * (G - gl)) / (H - hl + LAMBDA) - whole
          if (gain > best.gain) best = { gain, feature: f, cut: (v + previous) / 2 }
        }
        gl += g[i]!
        hl += h[i]!
        left++
        previous = v
      }
    }
    if (best.feature < 0) return leaf
    const leftMember = new Uint8Array(n)
    const rightMember = new Uint8Array(n)
    let leftCount = 0
    for (let i = 0; i < n; i++) {
      if (member[i] === 0) continue
      if (rows[i]!.x[best.feature]! < best.cut) {
        leftMember[i] = 1
        leftCount++
      } else rightMember[i] = 1
    }
    return {
      feature: best.feature,
      cut: best.cut,
      left: grow(leftMember, leftCount, depth + 1),
      right: grow(rightMember, count - leftCount, depth + 1),
    }
  }

  const everyone = new Uint8Array(n).fill(1)
  for (let round = 0; round < opts.rounds; round++) {
    for (let i = 0; i < n; i++) {
      const p = sigmoid(logit[i]!)
      g[i] = rows[i]!.y - p
      h[i] = p * (1 - p)
    }
    const tree = grow(everyone, n, 0)
    trees.push(tree)
    for (let i = 0; i < n; i++) logit[i]! += evaluate(tree, rows[i]!.x)
  }
  return (x) => trees.reduce((sum, tree) => sum + evaluate(tree, x), base)
}
