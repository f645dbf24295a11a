import { dot, type Vector } from './vectors.ts'

/** Points whose silhouette is measured when choosing a cut: evenly spaced through the pool past this. */
export const SILHOUETTE_SAMPLE = 300
/** Every cut into at most this many clusters is tried; past it, each tried cut has 5 % more clusters. */
const EVERY_CUT_UP_TO = 64

/**
 * The pool's clusters, their granularity chosen from the data (issue 31): the average-linkage (UPGMA)
 * dendrogram of the unit vectors, cut where the mean silhouette (cosine distance) is highest. The
 * `references` are the existing topics' member means (a topic's embedding sum over its count): a pooled
 * message's distance to a topic's members is 1 − its dot product with that mean, so a message that lies
 * nearer an existing topic than its own cluster lowers the silhouette of that cut as it should, and the
 * whole pool may be one cluster (k = 1) when there is a topic to set it against. Without references, at
 * least two clusters (a lone group cannot be told from noise). Singletons score 0, as scikit-learn's.
 * Then a cluster any member of which has a silhouette ≤ 0 is dissolved into singletons: in a small pool
 * the best cut can be coarse (one cluster per domain), and such a cluster has members nearer another.
 * With `dissolve: false` (re-clustering a whole window) no cluster is dissolved.
 * Returns a cluster number per vector (clusters numbered in order of their first member, then the
 * dissolved points each a number of its own).
 *
 * Cost: the n×n similarity matrix and the nearest-neighbour chain, O(n²·d) and O(n²); then for each tried
 * cut (all up to 64 clusters, then 5 % steps: about 120 at n = 1,000) the silhouette of at most 300
 * sampled points, O(300·n) each, and O(n·r) dot products for r references; the dissolving pass O(n²).
 * Deterministic.
 */
export function poolClusters(
  vectors: readonly Vector[],
  references: readonly Vector[] = [],
  options: { dissolve?: boolean } = {},
): number[] {
  const n = vectors.length
  if (n <= 1) return vectors.map(() => 0)
  const similarity = similarities(vectors)
  const merges = averageLinkageMerges(Float32Array.from(similarity), n)
  const toReference = new Float64Array(n * references.length)
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < references.length; t++)
      toReference[i * references.length + t] = dot(vectors[i]!, references[t]!)
  }
  const sample = Array.from({ length: Math.min(n, SILHOUETTE_SAMPLE) }, (_, i) =>
    Math.floor((i * n) / Math.min(n, SILHOUETTE_SAMPLE)),
  )
  let best: { labels: number[]; score: number } | undefined
  for (const k of cutsToTry(n, references.length > 0)) {
    const labels = labelsAfter(merges, n, n - k)
    const score = meanSilhouette(labels, k, sample, similarity, n, toReference, references.length)
    // Ties go to the coarser cut: tried first.
    if (!best || score > best.score) best = { labels, score }
  }
  if (!best) return vectors.map((_, i) => i)
  if (options.dissolve === false) return best.labels
  // A cluster with a member no nearer its own cluster than another (or a topic) is none: its members go apart.
  const k = Math.max(...best.labels) + 1
  const all = Array.from({ length: n }, (_, i) => i)
  const s = silhouettes(best.labels, k, all, similarity, n, toReference, references.length)
  const bad = new Set<number>()
  for (let i = 0; i < n; i++) if (s[i]! <= 0) bad.add(best.labels[i]!)
  let next = k
  return best.labels.map((l) => (bad.has(l) ? next++ : l))
}

function cutsToTry(n: number, oneAllowed: boolean): number[] {
  const cuts: number[] = []
  for (let k = oneAllowed ? 1 : 2; k < n && k <= EVERY_CUT_UP_TO; k++) cuts.push(k)
  for (let k = EVERY_CUT_UP_TO; k < n; k = Math.ceil(k * 1.05)) if (k > EVERY_CUT_UP_TO) cuts.push(k)
  return cuts
}

export function similarities(vectors: readonly Vector[]): Float32Array {
  const n = vectors.length
  const sim = new Float32Array(n * n)
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = dot(vectors[i]!, vectors[j]!)
      sim[i * n + j] = s
      sim[j * n + i] = s
    }
  }
  return sim
}

/**
 * The merges of the full average-linkage dendrogram, most similar first: [a, b] pairs of point indices
 * (each standing for its cluster). The nearest-neighbour chain algorithm: O(n²) time on the n×n
 * similarity matrix (overwritten), exact for average linkage (a reducible linkage, so the chain finds the
 * same merges as the textbook O(n³) loop, and sorting them by similarity gives the dendrogram's levels).
 */
export function averageLinkageMerges(sim: Float32Array, n: number): [number, number][] {
  const size = new Array<number>(n).fill(1)
  const active = new Uint8Array(n).fill(1)
  const merges: { a: number; b: number; s: number; order: number }[] = []
  let remaining = n
  const chain: number[] = []
  while (remaining > 1) {
    if (chain.length === 0) chain.push(active.indexOf(1))
    const a = chain[chain.length - 1]!
    const previous = chain.length > 1 ? chain[chain.length - 2]! : -1
    let best = -1
    let bestSim = Number.NEGATIVE_INFINITY
    for (let c = 0; c < n; c++) {
      if (c === a || !active[c]) continue
      const s = sim[a * n + c]!
      // Ties go to the previous chain element, which guarantees the chain ends in a reciprocal pair.
      if (s > bestSim || (s === bestSim && c === previous)) {
        bestSim = s
        best = c
      }
    }
    if (best !== previous) {
      chain.push(best)
      continue
    }
    chain.length -= 2
    // Merge `best` into `a`: the average similarity to every other cluster, weighted by sizes.
    const sa = size[a]!
    const sb = size[best]!
    for (let c = 0; c < n; c++) {
      if (!active[c] || c === a || c === best) continue
      const s = (sa * sim[a * n + c]! + sb * sim[best * n + c]!) / (sa + sb)
      sim[a * n + c] = s
      sim[c * n + a] = s
    }
    size[a] = sa + sb
    active[best] = 0
    remaining--
    merges.push({ a, b: best, s: bestSim, order: merges.length })
  }
  merges.sort((x, y) => y.s - x.s || x.order - y.order)
  return merges.map((m) => [m.a, m.b])
}

/**
 * The merges of the full Ward dendrogram of unit vectors, lowest first, as averageLinkageMerges gives
 * them: each merge joins the two clusters whose union adds least to the within-cluster sum of squared
 * (Euclidean, 2 − 2·cosine) distances. Ward keeps clusters of comparable spread: where points lie about
 * evenly apart (a chatbot's topics in one domain) average linkage chains most of them into one cluster
 * and leaves the few outliers alone, Ward does not. The nearest-neighbour chain with the Lance–Williams
 * update (Ward is reducible): O(n²) time and one n×n matrix, from the similarities (not overwritten).
 */
export function wardMerges(sim: Float32Array, n: number): [number, number][] {
  const d = new Float64Array(n * n)
  for (let i = 0; i < n * n; i++) d[i] = 2 - 2 * sim[i]!
  const size = new Array<number>(n).fill(1)
  const active = new Uint8Array(n).fill(1)
  const merges: { a: number; b: number; h: number; order: number }[] = []
  const chain: number[] = []
  for (let remaining = n; remaining > 1; ) {
    if (chain.length === 0) chain.push(active.indexOf(1))
    const a = chain[chain.length - 1]!
    const previous = chain.length > 1 ? chain[chain.length - 2]! : -1
    let best = -1
    let bestD = Number.POSITIVE_INFINITY
    for (let c = 0; c < n; c++) {
      if (c === a || !active[c]) continue
      const x = d[a * n + c]!
      // Ties go to the previous chain element, which guarantees the chain ends in a reciprocal pair.
      if (x < bestD || (x === bestD && c === previous)) {
        bestD = x
        best = c
      }
    }
    if (best !== previous) {
      chain.push(best)
      continue
    }
    chain.length -= 2
    const sa = size[a]!
    const sb = size[best]!
    for (let c = 0; c < n; c++) {
      if (!active[c] || c === a || c === best) continue
      const sc = size[c]!
      const x = ((sa + sc) * d[a * n + c]! + (sb + sc) * d[best * n + c]! - sc * bestD) / (sa + sb + sc)
      d[a * n + c] = x
      d[c * n + a] = x
    }
    size[a] = sa + sb
    active[best] = 0
    remaining--
    merges.push({ a, b: best, h: bestD, order: merges.length })
  }
  merges.sort((x, y) => x.h - y.h || x.order - y.order)
  return merges.map((m) => [m.a, m.b])
}

/** Cluster numbers after the first `count` merges, in order of each cluster's first member. */
export function labelsAfter(merges: readonly [number, number][], n: number, count: number): number[] {
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!
      i = parent[i]!
    }
    return i
  }
  for (let m = 0; m < count; m++) parent[find(merges[m]![1])] = find(merges[m]![0])
  const numbers = new Map<number, number>()
  return Array.from({ length: n }, (_, i) => {
    const root = find(i)
    let k = numbers.get(root)
    if (k === undefined) {
      k = numbers.size
      numbers.set(root, k)
    }
    return k
  })
}

function meanSilhouette(
  labels: readonly number[],
  k: number,
  sample: readonly number[],
  sim: Float32Array,
  n: number,
  toReference: Float64Array,
  references: number,
): number {
  const s = silhouettes(labels, k, sample, sim, n, toReference, references)
  return s.reduce((a, b) => a + b, 0) / sample.length
}

function silhouettes(
  labels: readonly number[],
  k: number,
  sample: readonly number[],
  sim: Float32Array,
  n: number,
  toReference: Float64Array,
  references: number,
): number[] {
  const out: number[] = []
  const sizes = new Array<number>(k).fill(0)
  for (const l of labels) sizes[l]!++
  const sums = new Float64Array(k)
  for (const i of sample) {
    const own = labels[i]!
    if (sizes[own]! === 1) {
      out.push(0)
      continue
    }
    sums.fill(0)
    // The diagonal is 0: a point's own similarity is left out of its cluster's sum.
    for (let j = 0; j < n; j++) sums[labels[j]!]! += sim[i * n + j]!
    const a = 1 - sums[own]! / (sizes[own]! - 1)
    let b = Number.POSITIVE_INFINITY
    for (let c = 0; c < k; c++) if (c !== own) b = Math.min(b, 1 - sums[c]! / sizes[c]!)
    for (let t = 0; t < references; t++) b = Math.min(b, 1 - toReference[i * references + t]!)
    const denominator = Math.max(a, b)
    out.push(denominator > 0 && Number.isFinite(b) ? (b - a) / denominator : 0)
  }
  return out
}
