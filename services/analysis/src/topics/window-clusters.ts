import { UMAP } from 'umap-js'
import { seededRandom } from '../seeded-random.ts'
import { poolClusters } from './agglomerative.ts'
import { hdbscan } from './hdbscan.ts'
import { addInto, dot, normalized, type Vector } from './vectors.ts'

/**
 * How a re-clustering's window is clustered (issue 31; bench/FINDINGS.md "Issue 31: choosing topic
 * granularity from the data"): UMAP to 5 dimensions (15 neighbours, min_dist 0, cosine: BERTopic's
 * settings, not tuned here), then HDBSCAN with excess-of-mass selection (hdbscan.ts), its noise then
 * placed in the nearest cluster (noiseToNearest). The one constant
 * that sets how coarse the topics are, minClusterSize = 8 (the fewest requests that may make a topic),
 * was chosen on CLINC150 validation and confirmed on DSTC11 development and CLINC150 test; the seed only
 * makes a run repeatable.
 */
export interface WindowClusterOptions {
  readonly neighbours: number
  readonly components: number
  readonly minDist: number
  readonly minClusterSize: number
  readonly seed: number
  /** UMAP's epochs; unset: umap-js's own choice (400 at 2,500–5,000 points). */
  readonly epochs?: number
}

export const WINDOW_CLUSTERING: WindowClusterOptions = {
  neighbours: 15,
  components: 5,
  minDist: 0,
  minClusterSize: 8,
  seed: 31,
}

/**
 * A cluster number per vector (unit vectors; numbered in order of each cluster's first member; HDBSCAN's
 * noise in its nearest cluster).
 *
 * A window of fewer than minClusterSize² requests (64) is too small for densities: a cluster's core
 * distances would rest on a handful of neighbours, and UMAP's 15-neighbour graph would span most of the
 * window. Such a young chatbot's window is cut by the silhouette-cut average linkage the pool uses
 * (agglomerative.ts, measured against the `references`: the held topics' member means), no cluster
 * dissolved. The threshold is a choice, not fitted: every measured set is far larger.
 *
 * Cost at n = 5,000: the exact cosine k-nearest neighbours, n² dot products of the vectors' dimension;
 * umap-js's optimisation (400 epochs, O(n · neighbours) each); HDBSCAN's core distances and Prim's tree,
 * 2 · n² distances in 5-d. Memory O(n · (d + neighbours)): no n × n matrix. Deterministic for a seed.
 */
export function windowClusters(
  vectors: readonly Vector[],
  references: readonly Vector[] = [],
  options: WindowClusterOptions = WINDOW_CLUSTERING,
): number[] {
  if (vectors.length < options.minClusterSize ** 2) {
    return poolClusters(vectors, references, { dissolve: false })
  }
  const numbers = hdbscan(umapEmbedding(vectors, options), { minClusterSize: options.minClusterSize })
  return noiseToNearest(numbers, vectors)
}

/**
 * HDBSCAN's noise, each to the cluster whose centroid (its members' mean direction, in the model's own
 * space, not UMAP's) is most similar: BERTopic's `reduce_outliers(strategy="embeddings")`. Measured on
 * CLINC150 validation against leaving noise to wait, or joining only inside a cluster's spread (one
 * standard deviation, two, or the range of its members' own mean similarities): every point placed raised
 * NMI and ACC most, on every UMAP seed, and was confirmed on CLINC150 test and DSTC11 (bench/FINDINGS.md,
 * "Issue 31: window-clustering candidates"). A window's requests thus all get a topic at each run; between
 * runs a new message still joins one only inside its spread, and waits otherwise until the next run.
 * Ties go to the lower cluster number; with no cluster at all, noise stays −1.
 */
export function noiseToNearest(numbers: readonly number[], vectors: readonly Vector[]): number[] {
  const sums = new Map<number, Float32Array>()
  numbers.forEach((n, i) => {
    if (n < 0) return
    let sum = sums.get(n)
    if (!sum) {
      sum = new Float32Array(vectors[i]!.length)
      sums.set(n, sum)
    }
    addInto(sum, vectors[i]!)
  })
  const centroids = [...sums].sort(([a], [b]) => a - b).map(([n, sum]) => [n, normalized(sum)] as const)
  return numbers.map((n, i) => {
    if (n >= 0) return n
    let nearest = -1
    let best = Number.NEGATIVE_INFINITY
    for (const [c, centroid] of centroids) {
      const s = dot(vectors[i]!, centroid)
      if (s > best) {
        best = s
        nearest = c
      }
    }
    return nearest
  })
}

/** The vectors in `components` dimensions: umap-js on the exact cosine neighbours, seeded. */
export function umapEmbedding(vectors: readonly Vector[], options: WindowClusterOptions): number[][] {
  const { indices, distances } = nearestNeighbours(vectors, options.neighbours)
  const umap = new UMAP({
    nComponents: options.components,
    nNeighbors: options.neighbours,
    minDist: options.minDist,
    ...(options.epochs ? { nEpochs: options.epochs } : {}),
    random: seededRandom(options.seed),
    distanceFn: (a, b) => 1 - dot(a as unknown as Vector, b as unknown as Vector),
  })
  umap.setPrecomputedKNN(indices, distances)
  // umap-js reads only the count and the neighbours given: the Float32Arrays need no copying.
  return umap.fit(vectors as unknown as number[][])
}

/**
 * Each vector's `k` nearest by cosine distance, itself first (as umap-learn's exact search for small
 * sets returns them). O(n² · d / 2): each pair's dot product once, offered to both lists.
 */
export function nearestNeighbours(
  vectors: readonly Vector[],
  k: number,
): { indices: number[][]; distances: number[][] } {
  const n = vectors.length
  const size = Math.min(k, n)
  // Each vector's list, most similar first: indices and similarities, `count` filled.
  const ids = new Int32Array(n * size)
  const sims = new Float64Array(n * size)
  const count = new Int32Array(n)
  const offer = (i: number, j: number, s: number) => {
    const base = i * size
    let at = count[i]!
    if (at === size) {
      if (s <= sims[base + size - 1]!) return
      at = size - 1
    } else count[i] = at + 1
    // Ties keep the earlier offer first: pairs are offered in index order, so the lower index.
    while (at > 0 && sims[base + at - 1]! < s) {
      ids[base + at] = ids[base + at - 1]!
      sims[base + at] = sims[base + at - 1]!
      at--
    }
    ids[base + at] = j
    sims[base + at] = s
  }
  for (let i = 0; i < n; i++) {
    offer(i, i, Number.POSITIVE_INFINITY)
    const vi = vectors[i]!
    for (let j = i + 1; j < n; j++) {
      const s = dot(vi, vectors[j]!)
      offer(i, j, s)
      offer(j, i, s)
    }
  }
  const indices: number[][] = []
  const distances: number[][] = []
  for (let i = 0; i < n; i++) {
    const row = Array.from(ids.subarray(i * size, i * size + count[i]!))
    indices.push(row)
    distances.push(row.map((j, r) => (j === i ? 0 : Math.max(0, 1 - sims[i * size + r]!))))
  }
  return { indices, distances }
}
