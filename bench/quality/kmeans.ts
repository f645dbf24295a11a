/**
 * The baselines topic discovery is measured against, computed in the same run: TF-IDF vectors of the end
 * users' messages clustered by k-means at the true number of intents (the classic approach), and the
 * model's own embeddings clustered the same way (what the embeddings can do when told the number).
 * Spherical k-means (cosine similarity) with k-means++ seeding, seeded so that a run is repeatable.
 */

import { seededRandom } from '../support/random.ts'

/** A unit vector as index → weight (TF-IDF), or a dense one (an embedding). */
export type SparseVector = { readonly indexes: Int32Array; readonly weights: Float32Array }

const STOP_WORDS = new Set(
  `a about an and are as at be but by can could do does for from have how i if in is it me my of on or please
  should so that the their them this to too was we what when where which who why will with would you your`.split(
    /\s+/,
  ),
)

/** TF-IDF of each text over the corpus: lower-case word tokens, stop words out, sublinear tf, l2-normalized. */
export function tfidf(texts: readonly string[]): { vectors: SparseVector[]; dimensions: number } {
  const vocabulary = new Map<string, number>()
  const docs = texts.map((text) => {
    const counts = new Map<number, number>()
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []) {
      if (STOP_WORDS.has(word)) continue
      let index = vocabulary.get(word)
      if (index === undefined) {
        index = vocabulary.size
        vocabulary.set(word, index)
      }
      counts.set(index, (counts.get(index) ?? 0) + 1)
    }
    return counts
  })
  const df = new Float64Array(vocabulary.size)
  for (const counts of docs) for (const index of counts.keys()) df[index]! += 1
  const n = texts.length
  const vectors = docs.map((counts) => {
    const entries = [...counts].map(
      ([index, tf]) => [index, (1 + Math.log(tf)) * (Math.log((1 + n) / (1 + df[index]!)) + 1)] as const,
    )
    const norm = Math.sqrt(entries.reduce((s, [, w]) => s + w * w, 0)) || 1
    return {
      indexes: Int32Array.from(entries.map(([i]) => i)),
      weights: Float32Array.from(entries.map(([, w]) => w / norm)),
    }
  })
  return { vectors, dimensions: vocabulary.size }
}

/** Dense unit vectors (embeddings) in the same form, so one k-means serves both. */
export function dense(vectors: readonly Float32Array[]): { vectors: SparseVector[]; dimensions: number } {
  const dimensions = vectors[0]?.length ?? 0
  const indexes = Int32Array.from({ length: dimensions }, (_, i) => i)
  return { vectors: vectors.map((weights) => ({ indexes, weights })), dimensions }
}

/**
 * Spherical k-means: each vector to the centroid of highest cosine similarity, centroids re-normalized
 * means, until no assignment changes (or `maxIterations`); the best of `restarts` seedings by total
 * similarity. Returns a cluster number per vector.
 */
export function kmeans(
  data: { vectors: readonly SparseVector[]; dimensions: number },
  k: number,
  opts: { seed?: number; restarts?: number; maxIterations?: number } = {},
): number[] {
  const random = seededRandom(opts.seed ?? 1)
  let best: { labels: number[]; score: number } | undefined
  for (let r = 0; r < (opts.restarts ?? 3); r++) {
    const run = kmeansOnce(data, k, random, opts.maxIterations ?? 50)
    if (!best || run.score > best.score) best = run
  }
  return best!.labels
}

function kmeansOnce(
  { vectors, dimensions }: { vectors: readonly SparseVector[]; dimensions: number },
  k: number,
  random: () => number,
  maxIterations: number,
): { labels: number[]; score: number } {
  const n = vectors.length
  const centroids = Array.from({ length: k }, () => new Float32Array(dimensions))
  // A dense vector (an embedding) is read without its index: the same sum, several times faster.
  const similarity = (v: SparseVector, c: Float32Array) => {
    let s = 0
    const w = v.weights
    if (w.length !== dimensions) {
      for (let i = 0; i < v.indexes.length; i++) s += w[i]! * c[v.indexes[i]!]!
      return s
    }
    let s1 = 0
    let s2 = 0
    let s3 = 0
    let i = 0
    for (; i + 3 < dimensions; i += 4) {
      s += w[i]! * c[i]!
      s1 += w[i + 1]! * c[i + 1]!
      s2 += w[i + 2]! * c[i + 2]!
      s3 += w[i + 3]! * c[i + 3]!
    }
    for (; i < dimensions; i++) s += w[i]! * c[i]!
    return s + s1 + s2 + s3
  }
  // k-means++: each next seed drawn with probability proportional to its squared distance to the nearest one.
  const nearest = new Float64Array(n).fill(Number.POSITIVE_INFINITY)
  let chosen = Math.floor(random() * n)
  for (let c = 0; c < k; c++) {
    const v = vectors[chosen]!
    for (let i = 0; i < v.indexes.length; i++) centroids[c]![v.indexes[i]!] = v.weights[i]!
    let total = 0
    for (let j = 0; j < n; j++) {
      const d = Math.max(0, 1 - similarity(vectors[j]!, centroids[c]!))
      nearest[j] = Math.min(nearest[j]!, d * d)
      total += nearest[j]!
    }
    let target = random() * total
    chosen = n - 1
    for (let j = 0; j < n; j++) {
      target -= nearest[j]!
      if (target <= 0) {
        chosen = j
        break
      }
    }
  }
  const labels = new Array<number>(n).fill(-1)
  let score = 0
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    let changed = false
    score = 0
    for (let j = 0; j < n; j++) {
      let bestC = 0
      let bestS = Number.NEGATIVE_INFINITY
      for (let c = 0; c < k; c++) {
        const s = similarity(vectors[j]!, centroids[c]!)
        if (s > bestS) {
          bestS = s
          bestC = c
        }
      }
      score += bestS
      if (labels[j] !== bestC) {
        labels[j] = bestC
        changed = true
      }
    }
    if (!changed) break
    for (const c of centroids) c.fill(0)
    for (let j = 0; j < n; j++) {
      const v = vectors[j]!
      const c = centroids[labels[j]!]!
      for (let i = 0; i < v.indexes.length; i++) c[v.indexes[i]!]! += v.weights[i]!
    }
    for (const c of centroids) {
      let norm = 0
      for (const x of c) norm += x * x
      norm = Math.sqrt(norm) || 1
      for (let i = 0; i < c.length; i++) c[i]! /= norm
    }
  }
  return { labels, score }
}
