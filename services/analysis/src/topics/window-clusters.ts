import { UMAP } from 'umap-js'
import { seededRandom } from '../seeded-random.ts'
import { poolClusters } from './agglomerative.ts'
import { hdbscan } from './hdbscan.ts'
import { dot, type Vector } from './vectors.ts'

/**
 * How a re-clustering's window is clustered (issue 31; bench/FINDINGS.md "Issue 31: choosing topic
 * granularity from the data"): UMAP to 5 dimensions (15 neighbours, min_dist 0, cosine: BERTopic's
 * settings, not tuned here), then HDBSCAN with excess-of-mass selection (hdbscan.ts). The one constant
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
 * A cluster number per vector (unit vectors; numbered in order of each cluster's first member), −1 for
 * HDBSCAN's noise (the caller's "other").
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
  return hdbscan(umapEmbedding(vectors, options), { minClusterSize: options.minClusterSize })
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
