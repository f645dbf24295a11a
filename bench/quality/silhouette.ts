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
  const { sample, similarity, n } = sims
  const k = Math.max(...labels) + 1
  const sizes = new Float64Array(k)
  for (const l of labels) sizes[l]! += 1
  const sums = new Float64Array(k)
  let total = 0
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
    if (Number.isFinite(b)) total += (b - a) / Math.max(a, b)
  }
  return total / sample.length
}

/**
 * Candidate numbers of clusters for n items, from the data size alone: a geometric grid from 2 up to
 * n / 10 (at least 3 items a cluster on average, with room), each about 20 % above the last.
 */
export function candidateKs(n: number): number[] {
  const ks: number[] = []
  for (let k = 2; k <= Math.max(2, Math.floor(n / 10)); k = Math.max(k + 1, Math.round(k * 1.2))) ks.push(k)
  return ks
}

export interface SilhouetteChoice {
  readonly k: number
  readonly labels: number[]
  /** The silhouette of each k tried, in the order tried. */
  readonly scores: readonly { k: number; silhouette: number }[]
}

/**
 * The k of highest mean silhouette: first over `candidateKs(n)`, then every k between the best one's
 * neighbours on that grid.
 */
export function kmeansBySilhouette(
  vectors: readonly Float32Array[],
  opts: { sampleSize?: number; seed?: number; maxIterations?: number } = {},
): SilhouetteChoice {
  const seed = opts.seed ?? 1
  const sims = sampleSimilarities(vectors, { sampleSize: opts.sampleSize ?? 2000, seed })
  const data = dense(vectors)
  const scores: { k: number; silhouette: number }[] = []
  const tried = new Set<number>()
  const tryK = (k: number) => {
    if (tried.has(k) || k >= vectors.length) return
    const labels = kmeans(data, k, { seed, restarts: 1, maxIterations: opts.maxIterations ?? 30 })
    tried.add(k)
    scores.push({ k, silhouette: meanSilhouette(sims, labels) })
  }
  const grid = candidateKs(vectors.length)
  for (const k of grid) tryK(k)
  const bestOf = () => scores.reduce((a, b) => (b.silhouette > a.silhouette ? b : a))
  const coarse = bestOf().k
  const at = grid.indexOf(coarse)
  const low = grid[Math.max(0, at - 1)]!
  const high = grid[Math.min(grid.length - 1, at + 1)]!
  // Every k between the neighbours would cost too much on a wide gap: at most 5 more, evenly spread.
  const step = Math.max(1, Math.ceil((high - low) / 4))
  for (let k = low; k <= high; k += step) tryK(k)
  const best = bestOf()
  // The search runs each k once; the clustering reported at the chosen k is the best of three seedings,
  // as the k-means told k is, so that the anchor does not hang on one seeding's luck.
  return { k: best.k, labels: kmeans(data, best.k, { seed, restarts: 3 }), scores }
}
