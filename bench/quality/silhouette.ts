/**
 * k chosen from the data by the silhouette (Rousseeuw 1987), as DSTC11 track 2's baseline chooses it: the
 * model's embeddings clustered by k-means at each candidate k, and the k whose clustering has the highest
 * mean silhouette kept. Euclidean distance between the unit vectors, as scikit-learn's silhouette_score
 * by default. Not told the number of intents: the candidates depend only on the number of items.
 */
import { seededRandom } from '../support/random.ts'
import { dense, kmeans } from './kmeans.ts'

/** Cosine similarities of each sampled item to every item (unit vectors), computed once for every k. */
export interface SampledSimilarities {
  readonly sample: Int32Array
  /** sample.length × n, row-major. */
  readonly similarity: Float32Array
  readonly n: number
}

export function sampleSimilarities(
  vectors: readonly Float32Array[],
  opts: { sampleSize: number; seed: number },
): SampledSimilarities {
  const n = vectors.length
  const random = seededRandom(opts.seed)
  const order = Array.from({ length: n }, (_, i) => i)
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  const sample = Int32Array.from(order.slice(0, Math.min(n, opts.sampleSize)).sort((a, b) => a - b))
  const similarity = new Float32Array(sample.length * n)
  for (let s = 0; s < sample.length; s++) {
    const a = vectors[sample[s]!]!
    for (let j = 0; j < n; j++) {
      const b = vectors[j]!
      let dot = 0
      for (let d = 0; d < a.length; d++) dot += a[d]! * b[d]!
      similarity[s * n + j] = dot
    }
  }
  return { sample, similarity, n }
}

/**
 * Mean silhouette of the sampled items under `labels` (cluster numbers 0..k-1), each measured against all
 * items. An item alone in its cluster scores 0, as in scikit-learn.
 */
export function meanSilhouette(sims: SampledSimilarities, labels: readonly number[]): number {
  return sampledSilhouette(sims, labels).mean
}

/**
 * The sampled items' mean silhouette and its standard error (the items' standard deviation over the root
 * of their number): how far another sample of the same size would likely put the mean.
 */
export function sampledSilhouette(
  sims: SampledSimilarities,
  labels: readonly number[],
): { mean: number; standardError: number } {
  const { sample, similarity, n } = sims
  const k = Math.max(...labels) + 1
  const sizes = new Float64Array(k)
  for (const l of labels) sizes[l]! += 1
  const sums = new Float64Array(k)
  let total = 0
  let squares = 0
  for (let s = 0; s < sample.length; s++) {
    sums.fill(0)
    const row = s * n
    for (let j = 0; j < n; j++) {
      if (j === sample[s]) continue
      // |a - b| for unit vectors; clamped against rounding.
      sums[labels[j]!]! += Math.sqrt(Math.max(0, 2 - 2 * similarity[row + j]!))
    }
    const own = labels[sample[s]!]!
    if (sizes[own]! <= 1) continue
    const a = sums[own]! / (sizes[own]! - 1)
    let b = Number.POSITIVE_INFINITY
    for (let c = 0; c < k; c++) if (c !== own && sizes[c]! > 0) b = Math.min(b, sums[c]! / sizes[c]!)
    if (!Number.isFinite(b)) continue
    const item = (b - a) / Math.max(a, b)
    total += item
    squares += item * item
  }
  const m = sample.length
  const mean = total / m
  const variance = m > 1 ? Math.max(0, (squares - m * mean * mean) / (m - 1)) : 0
  return { mean, standardError: Math.sqrt(variance / m) }
}

/** The next k of the geometric grid after `k`: about 20 % above it. */
const nextK = (k: number) => Math.max(k + 1, Math.round(k * 1.2))

/**
 * Candidate numbers of clusters for n items, from the data size alone: a geometric grid from 2 up to
 * n / 10 (at least 3 items a cluster on average, with room), each about 20 % above the last.
 */
export function candidateKs(n: number): number[] {
  const ks: number[] = []
  for (let k = 2; k <= Math.max(2, Math.floor(n / 10)); k = nextK(k)) ks.push(k)
  return ks
}

/**
 * How far the sweep goes on when its best k is the last it tried: up to n / 5 (5 items a cluster on
 * average). Past that, a best k at the bound is reported as such (`SilhouetteChoice.atBound`).
 */
export const sweepBound = (n: number) => Math.max(2, Math.floor(n / 5))

export interface SilhouetteChoice {
  readonly k: number
  readonly labels: number[]
  /** The silhouette of each k tried, in the order tried. */
  readonly scores: readonly { k: number; silhouette: number }[]
  /** The ks tried past `candidateKs(n)`'s last, because the best was the last tried. */
  readonly extended: readonly number[]
  /**
   * The best k is an end of the sweep: 2, or the largest k tried with the sweep stopped by its bound
   * (`sweepBound`) while the curve still rose there. Such a k is where the sweep stopped, not a maximum.
   */
  readonly atBound: boolean
  /** The standard error of the best k's sampled mean silhouette (`sampledSilhouette`). */
  readonly standardError: number
  /**
   * The ks tried whose silhouette is within two standard errors of the best: a curve flat at its top
   * gives many, and the choice among them is the sample's and the seeding's, not the data's.
   */
  readonly nearBest: readonly number[]
  /** The clustering (one seeding, as scored) of each k in `nearBest`. */
  readonly nearBestLabels: ReadonlyMap<number, readonly number[]>
}

/**
 * The k of highest mean silhouette (scikit-learn practice: the argmax over a range of k): first over
 * `candidateKs(n)`, extended along the same grid while the best is the last k tried (up to
 * `sweepBound(n)`), then every k between the best one's neighbours on that grid (at most 5 more).
 */
export function kmeansBySilhouette(
  vectors: readonly Float32Array[],
  opts: { sampleSize?: number; seed?: number; maxIterations?: number } = {},
): SilhouetteChoice {
  const seed = opts.seed ?? 1
  const n = vectors.length
  const sims = sampleSimilarities(vectors, { sampleSize: opts.sampleSize ?? 2000, seed })
  const data = dense(vectors)
  const scores: { k: number; silhouette: number; standardError: number; labels: number[] }[] = []
  const tryK = (k: number) => {
    if (scores.some((s) => s.k === k) || k >= n) return
    const labels = kmeans(data, k, { seed, restarts: 1, maxIterations: opts.maxIterations ?? 30 })
    const { mean, standardError } = sampledSilhouette(sims, labels)
    scores.push({ k, silhouette: mean, standardError, labels })
  }
  const bestOf = () => scores.reduce((a, b) => (b.silhouette > a.silhouette ? b : a))
  const grid = candidateKs(n)
  for (const k of grid) tryK(k)
  const extended: number[] = []
  // A best k at the grid's end says the curve may still rise past it: go on along the grid until it
  // falls (the best is no longer the last k tried) or the bound is reached.
  for (let next = nextK(grid.at(-1)!); bestOf().k === grid.at(-1) && next <= sweepBound(n) && next < n; ) {
    grid.push(next)
    extended.push(next)
    tryK(next)
    next = nextK(next)
  }
  const coarse = bestOf().k
  const at = grid.indexOf(coarse)
  const low = grid[Math.max(0, at - 1)]!
  const high = grid[Math.min(grid.length - 1, at + 1)]!
  // Every k between the neighbours would cost too much on a wide gap: at most 5 more, evenly spread.
  const step = Math.max(1, Math.ceil((high - low) / 4))
  for (let k = low; k <= high; k += step) tryK(k)
  const best = bestOf()
  const largestTried = Math.max(...scores.map((s) => s.k))
  const near = scores
    .filter((s) => s.silhouette >= best.silhouette - 2 * best.standardError)
    .sort((a, b) => a.k - b.k)
  // The search runs each k once; the clustering reported at the chosen k is the best of three seedings,
  // as the k-means told k is, so that the anchor does not hang on one seeding's luck.
  return {
    k: best.k,
    labels: kmeans(data, best.k, { seed, restarts: 3 }),
    scores: scores.map(({ k, silhouette }) => ({ k, silhouette })),
    extended,
    // The extension stops only once the best is not the last k tried, or at the bound.
    atBound: best.k === 2 || best.k === largestTried,
    standardError: best.standardError,
    nearBest: near.map((s) => s.k),
    nearBestLabels: new Map(near.map((s) => [s.k, s.labels])),
  }
}
