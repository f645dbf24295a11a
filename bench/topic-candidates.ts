/**
 * Window-clustering candidates measured offline (issue 31, "Measured, not asserted"): each set's requests
 * as one re-clustering window of an empty state (as `bench:topics-offline -- --window`), UMAP computed
 * once per set and seed (cached under .cache/topics-offline/), then each candidate's HDBSCAN and
 * post-processing on the same embedding, through the real decision (decideRecluster), scored against the
 * intents. Constants are chosen on CLINC150 validation only; CLINC150 test and DSTC11 confirm.
 *
 *   npm run bench:topic-candidates -- [--set clinc150-val]... [--umap-seed 31,32,33] [--only name,...]
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  type CondensedEdge,
  condensedTree,
  coreDistances,
  hdbscan,
  labelPoints,
  mutualReachabilityTree,
  selectClusters,
} from '../services/analysis/src/topics/hdbscan.ts'
import { clusteringInput } from '../services/analysis/src/topics/recluster.ts'
import { emptyTopicState } from '../services/analysis/src/topics/topic-model.ts'
import { dot, normalized, type Vector } from '../services/analysis/src/topics/vectors.ts'
import {
  chooseBySilhouette,
  cosineSilhouette,
  dot64,
  minSamplesChoices,
  nearestNeighbours,
  noiseToNearest,
  splitLoose,
  treeClusters,
  umapEmbedding,
  WINDOW_CLUSTERING,
} from '../services/analysis/src/topics/window-clusters.ts'
import { computeAnchors } from './quality/anchors.ts'
import { seededRandom } from './support/random.ts'
import { type Embedded, embedded, runWindow, SETS, type SetName, score, windowOf } from './topics-offline.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const CACHE = path.join(ROOT, '.cache/topics-offline')

interface Context {
  readonly umap: number[][]
  readonly vectors: readonly Vector[]
  /** Each vector's 15 nearest by cosine, itself first (UMAP's graph), computed once per set. */
  readonly neighbours: () => number[][]
}

/** Each noise point to the cluster most of its clustered neighbours are in (ties: the nearer); else noise. */
function noiseByNeighbours(numbers: number[], neighbours: number[][]): number[] {
  return numbers.map((n, i) => {
    if (n >= 0) return n
    const votes = new Map<number, number>()
    for (const j of neighbours[i]!) {
      const c = numbers[j]!
      if (c >= 0) votes.set(c, (votes.get(c) ?? 0) + 1)
    }
    let best = -1
    let bestVotes = 0
    for (const [c, v] of votes) if (v > bestVotes) [best, bestVotes] = [c, v]
    return best
  })
}
type Candidate = { readonly name: string; readonly cluster: (c: Context) => number[] }

const MCS = WINDOW_CLUSTERING.minClusterSize
/** HDBSCAN on the window's UMAP embedding, its noise left as noise (−1). */
const base = (c: Context, o: Partial<Parameters<typeof hdbscan>[1]> = {}) =>
  hdbscan(c.umap, { minClusterSize: MCS, ...o })

/** BERTopic's nr_topics="auto": HDBSCAN (min_cluster_size 2, eom) on the clusters' unit centroids. */
function bertopicAuto(numbers: number[], vectors: readonly Vector[]): number[] {
  const ids = [...new Set(numbers.filter((n) => n >= 0))].sort((a, b) => a - b)
  const centroids = ids.map((id) => {
    const s = new Float32Array(vectors[0]!.length)
    numbers.forEach((n, i) => {
      if (n === id) for (let k = 0; k < s.length; k++) s[k]! += vectors[i]![k]!
    })
    return normalized(s)
  })
  const groups = hdbscan(centroids, { minClusterSize: 2 })
  const into = new Map<number, number>()
  ids.forEach((id, j) => {
    const g = groups[j]!
    if (g < 0) return
    const first = ids[groups.indexOf(g)]!
    into.set(id, first)
  })
  return numbers.map((n) => (n < 0 ? n : (into.get(n) ?? n)))
}

/** Noise joins its nearest cluster when its mean similarity to the members is within the members' own range. */
function noiseInRange(numbers: number[], vectors: readonly Vector[], deviations?: number): number[] {
  const sums = new Map<number, { sum: Float32Array; n: number; min: number; m: number; sq: number }>()
  numbers.forEach((c, i) => {
    if (c < 0) return
    const e = sums.get(c) ?? { sum: new Float32Array(vectors[i]!.length), n: 0, min: 1, m: 0, sq: 0 }
    for (let k = 0; k < e.sum.length; k++) e.sum[k]! += vectors[i]![k]!
    e.n++
    sums.set(c, e)
  })
  numbers.forEach((c, i) => {
    if (c < 0) return
    const e = sums.get(c)!
    const s = (dot(vectors[i]!, e.sum) - 1) / (e.n - 1)
    e.min = Math.min(e.min, s)
    e.m += s
    e.sq += s * s
  })
  const list = [...sums].map(([c, e]) => ({ c, e, centroid: normalized(e.sum) }))
  return numbers.map((c, i) => {
    if (c >= 0) return c
    let best = list[0]!
    let bestS = Number.NEGATIVE_INFINITY
    for (const x of list) {
      const s = dot(vectors[i]!, x.centroid)
      if (s > bestS) [best, bestS] = [x, s]
    }
    const mean = dot(vectors[i]!, best.e.sum) / best.e.n
    const mu = best.e.m / best.e.n
    const bar =
      deviations === undefined
        ? best.e.min
        : mu - deviations * Math.sqrt(Math.max(0, best.e.sq / best.e.n - mu * mu))
    return mean >= bar ? best.c : -1
  })
}

/** Mean silhouette of the clustered points in the UMAP space (noise left out), exact. */
function umapSilhouette(numbers: number[], umap: number[][]): number {
  const ids = [...new Set(numbers.filter((x) => x >= 0))]
  if (ids.length < 2) return -1
  const index = new Map(ids.map((c, i) => [c, i]))
  const sizes = new Float64Array(ids.length)
  for (const c of numbers) if (c >= 0) sizes[index.get(c)!]!++
  const d = new Float64Array(ids.length)
  let total = 0
  let count = 0
  for (let i = 0; i < numbers.length; i++) {
    if (numbers[i]! < 0) continue
    d.fill(0)
    for (let j = 0; j < numbers.length; j++) {
      if (numbers[j]! < 0 || j === i) continue
      let s = 0
      for (let k = 0; k < umap[i]!.length; k++) s += (umap[i]![k]! - umap[j]![k]!) ** 2
      d[index.get(numbers[j]!)!]! += Math.sqrt(s)
    }
    const own = index.get(numbers[i]!)!
    if (sizes[own]! < 2) continue
    const a = d[own]! / (sizes[own]! - 1)
    let b = Number.POSITIVE_INFINITY
    for (let c = 0; c < ids.length; c++) if (c !== own) b = Math.min(b, d[c]! / sizes[c]!)
    total += (b - a) / Math.max(a, b)
    count++
  }
  return total / count
}

/** min_samples chosen per window by the UMAP-space silhouette among a few. */
function bySilhouette(c: Context, options: readonly number[]): number[] {
  let best: number[] = []
  let bestS = Number.NEGATIVE_INFINITY
  for (const minSamples of options) {
    const numbers = base(c, { minSamples })
    const s = umapSilhouette(numbers, c.umap)
    if (s > bestS) [best, bestS] = [numbers, s]
  }
  return best
}

/**
 * Clusters merged while two lie as close together as their members do: the pair whose members' mean
 * similarity to each other (`between`) is highest among those where it reaches the mean similarity
 * within one of them (`rule`: the looser one's, their mean, or the tighter one's), repeatedly, as average
 * linkage would join them. All from the clusters' embedding sums (dot products of sums), O(k²) per merge.
 * Noise (−1) stays noise; the merged cluster takes the lower number.
 */
function mergeClose(
  numbers: readonly number[],
  vectors: readonly Vector[],
  rule: 'min' | 'mean' | 'max' = 'min',
): number[] {
  const ids = [...new Set(numbers.filter((x) => x >= 0))].sort((a, b) => a - b)
  const k = ids.length
  if (k < 2) return [...numbers]
  const index = new Map(ids.map((id, i) => [id, i]))
  const dimensions = vectors[0]!.length
  const sums = ids.map(() => new Float32Array(dimensions))
  const sizes = new Float64Array(k)
  numbers.forEach((x, i) => {
    if (x < 0) return
    const c = index.get(x)!
    const s = sums[c]!
    const v = vectors[i]!
    for (let d = 0; d < dimensions; d++) s[d]! += v[d]!
    sizes[c]!++
  })
  const gram = new Float64Array(k * k)
  for (let a = 0; a < k; a++)
    for (let b = a; b < k; b++) gram[a * k + b] = gram[b * k + a] = dot(sums[a]!, sums[b]!)
  const alive = new Uint8Array(k).fill(1)
  const into = Int32Array.from({ length: k }, (_, i) => i)
  const within = (a: number) => {
    const n = sizes[a]!
    return n < 2 ? Number.POSITIVE_INFINITY : (gram[a * k + a]! - n) / (n * (n - 1))
  }
  for (;;) {
    let bestA = -1
    let bestB = -1
    let best = Number.NEGATIVE_INFINITY
    for (let a = 0; a < k; a++) {
      if (!alive[a]) continue
      const wa = within(a)
      for (let b = a + 1; b < k; b++) {
        if (!alive[b]) continue
        const between = gram[a * k + b]! / (sizes[a]! * sizes[b]!)
        if (between <= best) continue
        const wb = within(b)
        const bar = rule === 'min' ? Math.min(wa, wb) : rule === 'max' ? Math.max(wa, wb) : (wa + wb) / 2
        if (between >= bar) {
          best = between
          bestA = a
          bestB = b
        }
      }
    }
    if (bestA < 0) break
    const a = bestA
    const b = bestB
    const ab = gram[a * k + b]!
    const aa = gram[a * k + a]! + 2 * ab + gram[b * k + b]!
    for (let c = 0; c < k; c++) {
      gram[a * k + c]! += gram[b * k + c]!
      gram[c * k + a] = gram[a * k + c]!
    }
    gram[a * k + a] = aa
    sizes[a]! += sizes[b]!
    alive[b] = 0
    into[b] = a
  }
  const root = (c: number): number => (into[c] === c ? c : root(into[c]!))
  return numbers.map((x) => (x < 0 ? x : ids[root(index.get(x)!)]!))
}

/**
 * hdbscan's `relative_validity_` (a fast DBCV on the mutual-reachability minimum spanning tree): per
 * cluster, (separation − sparseness) / max, weighted by size over all points (noise counts as zero).
 */
function relativeValidity(points: number[][], minSamples: number, labels: readonly number[]): number {
  const mst = mutualReachabilityTree(points, coreDistances(points, minSamples))
  const k = Math.max(-1, ...labels) + 1
  const sparse = new Float64Array(k)
  const sep = new Float64Array(k).fill(Number.POSITIVE_INFINITY)
  let maxDistance = 0
  for (const [a, b, w] of mst) {
    maxDistance = Math.max(maxDistance, w)
    const la = labels[a]!
    const lb = labels[b]!
    if (la < 0 || lb < 0) continue
    if (la === lb) sparse[la] = Math.max(sparse[la]!, w)
    else {
      sep[la] = Math.min(sep[la]!, w)
      sep[lb] = Math.min(sep[lb]!, w)
    }
  }
  const sizes = new Float64Array(k)
  for (const l of labels) if (l >= 0) sizes[l]!++
  let score = 0
  for (let c = 0; c < k; c++) {
    const s = Number.isFinite(sep[c]!) ? sep[c]! : 2 * maxDistance
    score += (sizes[c]! * (s - sparse[c]!)) / Math.max(s, sparse[c]!) / labels.length
  }
  return score
}

/** min_samples chosen per window by the relative validity among a few. */
function byValidity(c: Context, options: readonly number[]): number[] {
  let best: number[] = []
  let bestS = Number.NEGATIVE_INFINITY
  for (const minSamples of options) {
    const numbers = base(c, { minSamples })
    const s = relativeValidity(c.umap, minSamples, numbers)
    if (process.env.SHOW_VALIDITY) console.error(`    min_samples ${minSamples}: validity ${s.toFixed(4)}`)
    if (s > bestS) [best, bestS] = [numbers, s]
  }
  return best
}

/** The simplified (centroid) silhouette in the model's cosine space, every point placed. */
function centroidSilhouette(numbers: readonly number[], vectors: readonly Vector[]): number {
  const sums = new Map<number, Float32Array>()
  numbers.forEach((n, i) => {
    if (n < 0) return
    const sum = sums.get(n) ?? new Float32Array(vectors[i]!.length)
    for (let d = 0; d < sum.length; d++) sum[d]! += vectors[i]![d]!
    sums.set(n, sum)
  })
  const centroids = [...sums].map(([n, sum]) => [n, normalized(sum)] as const)
  let total = 0
  let count = 0
  numbers.forEach((n, i) => {
    if (n < 0) return
    let a = 0
    let b = Number.POSITIVE_INFINITY
    for (const [c, v] of centroids) {
      const d = 1 - dot(vectors[i]!, v)
      if (c === n) a = d
      else b = Math.min(b, d)
    }
    total += (b - a) / Math.max(a, b)
    count++
  })
  return total / count
}

function byCentroidSilhouette(c: Context, options: readonly number[]): number[] {
  let best: number[] = []
  let bestS = Number.NEGATIVE_INFINITY
  for (const minSamples of options) {
    const numbers = noiseToNearest(base(c, { minSamples }), c.vectors)
    const s = centroidSilhouette(numbers, c.vectors)
    if (process.env.SHOW_VALIDITY) console.error(`    min_samples ${minSamples}: silhouette ${s.toFixed(4)}`)
    if (s > bestS) [best, bestS] = [numbers, s]
  }
  return best
}

/** Mean similarity of two distinct members (unit vectors) from their sum and count. */
function withinOf(sum: Float64Array, size: number): number {
  return size < 2 ? 1 : (dot64(sum, sum) - size) / (size * (size - 1))
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const m = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2
}

type SplitRule = 'within' | 'between'

/**
 * The selected clusters, a loose one replaced by its child clusters in the condensed tree (again for
 * each child), judged against the window's typical topic: the median, over the selected clusters, of
 * their members' mean similarity to each other. 'within': a cluster whose members are less alike than
 * that is split; 'between': one whose children are less alike than that.
 */
function splitLooseBy(
  tree: readonly CondensedEdge[],
  selected: readonly number[],
  vectors: readonly Vector[],
  rule: SplitRule,
  quantile = 0.5,
): number[] {
  const { children, sums, sizes } = treeClusters(tree, vectors)
  const within = (c: number) => withinOf(sums.get(c)!, sizes.get(c)!)
  const sorted = selected.map(within).sort((a, b) => a - b)
  const bar = quantile === 0.5 ? median(sorted) : sorted[Math.floor(quantile * (sorted.length - 1))]!
  const loose = (c: number) => {
    const kids = children.get(c) ?? []
    if (kids.length < 2) return false
    if (rule === 'within') return within(c) < bar
    let cross = 0
    let pairs = 0
    for (let i = 0; i < kids.length; i++)
      for (let j = i + 1; j < kids.length; j++) {
        cross += dot64(sums.get(kids[i]!)!, sums.get(kids[j]!)!)
        pairs += sizes.get(kids[i]!)! * sizes.get(kids[j]!)!
      }
    return cross / pairs < bar
  }
  const out: number[] = []
  const stack = [...selected]
  while (stack.length > 0) {
    const c = stack.pop()!
    if (loose(c)) stack.push(...children.get(c)!)
    else out.push(c)
  }
  return out.sort((a, b) => a - b)
}

/**
 * Clusters merged while two lie as close together as a typical topic's members do: the pair whose
 * members' mean similarity to each other is highest, when it reaches the median over the clusters of
 * their members' mean similarity, repeatedly (as average linkage joins). Noise stays noise.
 */
function mergeTight(numbers: readonly number[], vectors: readonly Vector[], quantile = 0.5): number[] {
  const ids = [...new Set(numbers.filter((x) => x >= 0))].sort((a, b) => a - b)
  const k = ids.length
  if (k < 2) return [...numbers]
  const index = new Map(ids.map((id, i) => [id, i]))
  const d = vectors[0]!.length
  const sums = ids.map(() => new Float64Array(d))
  const sizes = new Float64Array(k)
  numbers.forEach((x, i) => {
    if (x < 0) return
    const c = index.get(x)!
    for (let t = 0; t < d; t++) sums[c]![t]! += vectors[i]![t]!
    sizes[c]!++
  })
  const gram = new Float64Array(k * k)
  for (let a = 0; a < k; a++)
    for (let b = a; b < k; b++) gram[a * k + b] = gram[b * k + a] = dot64(sums[a]!, sums[b]!)
  const withins = ids.map((_, a) =>
    sizes[a]! < 2 ? 1 : (gram[a * k + a]! - sizes[a]!) / (sizes[a]! * (sizes[a]! - 1)),
  )
  const sorted = [...withins].sort((a, b) => a - b)
  const bar = quantile === 0.5 ? median(sorted) : sorted[Math.floor(quantile * (sorted.length - 1))]!
  const alive = new Uint8Array(k).fill(1)
  const into = Int32Array.from({ length: k }, (_, i) => i)
  for (;;) {
    let bestA = -1
    let bestB = -1
    let best = bar
    for (let a = 0; a < k; a++) {
      if (!alive[a]) continue
      for (let b = a + 1; b < k; b++) {
        if (!alive[b]) continue
        const between = gram[a * k + b]! / (sizes[a]! * sizes[b]!)
        if (between >= best) {
          best = between
          bestA = a
          bestB = b
        }
      }
    }
    if (bestA < 0) break
    const a = bestA
    const b = bestB
    const aa = gram[a * k + a]! + 2 * gram[a * k + b]! + gram[b * k + b]!
    for (let c = 0; c < k; c++) {
      gram[a * k + c]! += gram[b * k + c]!
      gram[c * k + a] = gram[a * k + c]!
    }
    gram[a * k + a] = aa
    sizes[a]! += sizes[b]!
    alive[b] = 0
    into[b] = a
  }
  const root = (c: number): number => (into[c] === c ? c : root(into[c]!))
  return numbers.map((x) => (x < 0 ? x : ids[root(index.get(x)!)]!))
}

/**
 * Spherical 2-means of some unit vectors (deterministic: seeded by the member least like the mean and
 * the member least like that one), 20 rounds at most: a side (0 or 1) per vector.
 */
function twoMeans(vs: readonly Vector[]): number[] {
  const d = vs[0]!.length
  const mean = new Float64Array(d)
  for (const v of vs) for (let t = 0; t < d; t++) mean[t]! += v[t]!
  const farthest = (from: ArrayLike<number>) => {
    let best = 0
    let bestS = Number.POSITIVE_INFINITY
    vs.forEach((v, i) => {
      let s = 0
      for (let t = 0; t < d; t++) s += v[t]! * from[t]!
      if (s < bestS) [best, bestS] = [i, s]
    })
    return best
  }
  const a = farthest(mean)
  const b = farthest(vs[a]!)
  let centres = [Float64Array.from(vs[a]!), Float64Array.from(vs[b]!)]
  let sides = vs.map(() => 0)
  for (let round = 0; round < 20; round++) {
    const next = vs.map((v) => {
      let s0 = 0
      let s1 = 0
      for (let t = 0; t < d; t++) {
        s0 += v[t]! * centres[0]![t]!
        s1 += v[t]! * centres[1]![t]!
      }
      return s1 > s0 ? 1 : 0
    })
    const same = next.every((x, i) => x === sides[i])
    sides = next
    if (same && round > 0) break
    centres = [0, 1].map((side) => {
      const c = new Float64Array(d)
      vs.forEach((v, i) => {
        if (sides[i] === side) for (let t = 0; t < d; t++) c[t]! += v[t]!
      })
      return c
    })
  }
  return sides
}

/**
 * A cluster looser than the window's typical topic (its members' mean similarity under the median over
 * the clusters) split in two by 2-means when both halves are at least as tight as that median (and of
 * at least minClusterSize), again for each half.
 */
function resplit(numbers: readonly number[], vectors: readonly Vector[], quantile = 0.5): number[] {
  const out = [...numbers]
  const groups = new Map<number, number[]>()
  out.forEach((x, i) => {
    if (x >= 0) groups.set(x, [...(groups.get(x) ?? []), i])
  })
  const d = vectors[0]!.length
  const within = (members: readonly number[]) => {
    const s = new Float64Array(d)
    for (const i of members) for (let t = 0; t < d; t++) s[t]! += vectors[i]![t]!
    return withinOf(s, members.length)
  }
  const sorted = [...groups.values()].map(within).sort((a, b) => a - b)
  const bar = quantile === 0.5 ? median(sorted) : sorted[Math.floor(quantile * (sorted.length - 1))]!
  let next = Math.max(-1, ...out) + 1
  const stack = [...groups.values()]
  while (stack.length > 0) {
    const members = stack.pop()!
    if (members.length < 2 * MCS || within(members) >= bar) continue
    const sides = twoMeans(members.map((i) => vectors[i]!))
    const halves = [0, 1].map((side) => members.filter((_, j) => sides[j] === side))
    if (halves.some((h) => h.length < MCS || within(h) < bar)) continue
    const id = next++
    for (const i of halves[1]!) out[i] = id
    stack.push(halves[0]!, halves[1]!)
  }
  return out
}

/**
 * A cluster split in two by 2-means when that raises its members' mean simplified silhouette (cosine,
 * to the centroids: own against the nearest other, the other half included), halves of at least
 * minClusterSize; again for each half. `loose`: only clusters looser than the window's median.
 */
function silhouetteSplit(numbers: readonly number[], vectors: readonly Vector[], loose: boolean): number[] {
  const out = [...numbers]
  const groups = new Map<number, number[]>()
  out.forEach((x, i) => {
    if (x >= 0) groups.set(x, [...(groups.get(x) ?? []), i])
  })
  const d = vectors[0]!.length
  const centroidOf = (members: readonly number[]) => {
    const s = new Float32Array(d)
    for (const i of members) for (let t = 0; t < d; t++) s[t]! += vectors[i]![t]!
    return normalized(s)
  }
  const within = (members: readonly number[]) => {
    const s = new Float64Array(d)
    for (const i of members) for (let t = 0; t < d; t++) s[t]! += vectors[i]![t]!
    return withinOf(s, members.length)
  }
  const bar = median([...groups.values()].map(within))
  const centroids = new Map([...groups].map(([c, m]) => [c, centroidOf(m)]))
  let next = Math.max(-1, ...out) + 1
  const stack = [...groups.keys()]
  while (stack.length > 0) {
    const c = stack.pop()!
    const members = groups.get(c)!
    if (members.length < 2 * MCS || (loose && within(members) >= bar)) continue
    const others = [...centroids].filter(([o]) => o !== c).map(([, v]) => v)
    const otherBest = members.map((i) => Math.max(...others.map((v) => dot(vectors[i]!, v))))
    const own = centroids.get(c)!
    const sil = (a: number, b: number) => (b - a) / Math.max(a, b, 1e-9)
    const before = members.reduce((t, i, j) => t + sil(1 - dot(vectors[i]!, own), 1 - otherBest[j]!), 0)
    const sides = twoMeans(members.map((i) => vectors[i]!))
    const halves = [0, 1].map((side) => members.filter((_, j) => sides[j] === side))
    if (halves.some((h) => h.length < MCS)) continue
    const hc = halves.map(centroidOf)
    const after = members.reduce((t, i, j) => {
      const side = sides[j]!
      const a = 1 - dot(vectors[i]!, hc[side]!)
      const b = 1 - Math.max(otherBest[j]!, dot(vectors[i]!, hc[1 - side]!))
      return t + sil(a, b)
    }, 0)
    if (after <= before) continue
    const id = next++
    groups.set(c, halves[0]!)
    groups.set(id, halves[1]!)
    centroids.set(c, hc[0]!)
    centroids.set(id, hc[1]!)
    for (const i of halves[1]!) out[i] = id
    stack.push(c, id)
  }
  return out
}

/** min_samples chosen per window among `options` by the exact cosine silhouette (window-clusters.ts). */
function byCosineSilhouette(c: Context, options: readonly number[]): number[] {
  const clusterings = options.map((minSamples) => noiseToNearest(base(c, { minSamples }), c.vectors))
  if (process.env.SHOW_VALIDITY)
    for (const [i, numbers] of clusterings.entries())
      console.error(
        `    min_samples ${options[i]}: silhouette ${cosineSilhouette(numbers, c.vectors).toFixed(4)}`,
      )
  return chooseBySilhouette(clusterings, c.vectors)
}

/** The tree's EOM clusters at a min_samples, loose ones split (splitLoose, 'within' at the median) or not, noise placed. */
function splitAt(c: Context, minSamples: number, doSplit: boolean): number[] {
  const n = c.umap.length
  const tree = condensedTree(c.umap, { minClusterSize: MCS, minSamples })
  const eom = selectClusters(tree, n)
  const selected = doSplit ? splitLoose(tree, eom, c.vectors) : eom
  return noiseToNearest(labelPoints(tree, selected, n), c.vectors)
}

/** EOM's clusters, a loose one replaced by its children (splitLoose), noise then placed. */
function split(c: Context, rule: SplitRule, quantile = 0.5): number[] {
  const n = c.umap.length
  const tree = condensedTree(c.umap, { minClusterSize: MCS })
  const selected = splitLooseBy(tree, selectClusters(tree, n), c.vectors, rule, quantile)
  return noiseToNearest(labelPoints(tree, selected, n), c.vectors)
}

const CANDIDATES: Candidate[] = [
  {
    name: 'chosen: min_samples 8 or 15 by the cosine silhouette, then loose clusters split (windowClusters)',
    cluster: (c) => {
      const options = minSamplesChoices(WINDOW_CLUSTERING)
      const unsplit = options.map((m) => splitAt(c, m, false))
      const chosen = unsplit.indexOf(chooseBySilhouette(unsplit, c.vectors))
      return splitAt(c, options[chosen]!, true)
    },
  },
  {
    name: 'each min_samples with loose clusters split, chosen by the cosine silhouette',
    cluster: (c) =>
      chooseBySilhouette(
        minSamplesChoices(WINDOW_CLUSTERING).map((m) => splitAt(c, m, true)),
        c.vectors,
      ),
  },
  {
    name: 'min_samples 8 or 15 by the cosine silhouette, noise placed (aa67534)',
    cluster: (c) => byCosineSilhouette(c, minSamplesChoices(WINDOW_CLUSTERING)),
  },
  {
    name: 'min_samples 4, 8 or 15 by the cosine silhouette, noise placed',
    cluster: (c) => byCosineSilhouette(c, [4, 8, 15]),
  },
  {
    name: 'mergeq: between ≥ q10',
    cluster: (c) => mergeTight(noiseToNearest(base(c), c.vectors), c.vectors, 0.1),
  },
  {
    name: 'mergeq: between ≥ q25',
    cluster: (c) => mergeTight(noiseToNearest(base(c), c.vectors), c.vectors, 0.25),
  },
  {
    name: 'mergeq: between ≥ min',
    cluster: (c) => mergeTight(noiseToNearest(base(c), c.vectors), c.vectors, 0),
  },
  {
    name: 'silsplit: any cluster, 2-means when the silhouette rises',
    cluster: (c) => silhouetteSplit(noiseToNearest(base(c), c.vectors), c.vectors, false),
  },
  {
    name: 'silsplit: loose clusters, 2-means when the silhouette rises',
    cluster: (c) => silhouetteSplit(noiseToNearest(base(c), c.vectors), c.vectors, true),
  },
  {
    name: 'resplit: 2-means halves as tight as the median',
    cluster: (c) => resplit(noiseToNearest(base(c), c.vectors), c.vectors),
  },
  {
    name: 'resplit: 2-means halves as tight as q25',
    cluster: (c) => resplit(noiseToNearest(base(c), c.vectors), c.vectors, 0.25),
  },
  { name: 'split: within < median', cluster: (c) => split(c, 'within') },
  { name: 'split: between < median', cluster: (c) => split(c, 'between') },
  { name: 'split: within < q25', cluster: (c) => split(c, 'within', 0.25) },
  { name: 'split: between < q25', cluster: (c) => split(c, 'between', 0.25) },
  {
    name: 'merge: between ≥ median',
    cluster: (c) => mergeTight(noiseToNearest(base(c), c.vectors), c.vectors),
  },
  { name: 'split within + merge', cluster: (c) => mergeTight(split(c, 'within'), c.vectors) },
  { name: 'split between + merge', cluster: (c) => mergeTight(split(c, 'between'), c.vectors) },
  {
    name: 'min_samples 4, 8 or 15 by the cosine centroid silhouette, noise placed',
    cluster: (c) => byCentroidSilhouette(c, [4, 8, 15]),
  },
  {
    name: 'min_samples 4, 8 or 15 by relative validity (DBCV), noise placed',
    cluster: (c) => noiseToNearest(byValidity(c, [4, 8, 15]), c.vectors),
  },
  { name: 'before: eom, min_cluster_size 8, noise waits', cluster: (c) => base(c) },
  { name: 'leaf', cluster: (c) => base(c, { selection: 'leaf' }) },
  { name: 'eom, min_samples 1', cluster: (c) => base(c, { minSamples: 1 }) },
  { name: 'eom, min_samples 4', cluster: (c) => base(c, { minSamples: 4 }) },
  { name: 'eom, min_samples 15', cluster: (c) => base(c, { minSamples: 15 }) },
  {
    name: 'before: eom + noise to nearest centroid (min_samples 8)',
    cluster: (c) => noiseToNearest(base(c), c.vectors),
  },
  {
    name: 'eom + noise by neighbours (15, cosine)',
    cluster: (c) => noiseByNeighbours(base(c), c.neighbours()),
  },
  {
    name: 'leaf + noise to nearest centroid',
    cluster: (c) => noiseToNearest(base(c, { selection: 'leaf' }), c.vectors),
  },
  {
    name: 'leaf + noise by neighbours (15, cosine)',
    cluster: (c) => noiseByNeighbours(base(c, { selection: 'leaf' }), c.neighbours()),
  },
  {
    name: 'min_samples 4 + noise to nearest centroid',
    cluster: (c) => noiseToNearest(base(c, { minSamples: 4 }), c.vectors),
  },
  { name: 'eom + noise within its cluster range', cluster: (c) => noiseInRange(base(c), c.vectors) },
  { name: 'eom + noise within 2 sd', cluster: (c) => noiseInRange(base(c), c.vectors, 2) },
  {
    name: 'min_samples by UMAP silhouette (4, 8, 15)',
    cluster: (c) => bySilhouette(c, [4, 8, 15]),
  },
  {
    name: 'min_samples by UMAP silhouette (4, 8, 15) + noise to nearest',
    cluster: (c) => noiseToNearest(bySilhouette(c, [4, 8, 15]), c.vectors),
  },
  { name: 'eom + merge: between ≥ min within', cluster: (c) => mergeClose(base(c), c.vectors, 'min') },
  { name: 'eom + merge: between ≥ mean within', cluster: (c) => mergeClose(base(c), c.vectors, 'mean') },
  { name: 'eom + merge: between ≥ max within', cluster: (c) => mergeClose(base(c), c.vectors, 'max') },
  { name: 'eom + BERTopic auto reduction', cluster: (c) => bertopicAuto(base(c), c.vectors) },
  {
    name: 'leaf + merge: between ≥ min within',
    cluster: (c) => mergeClose(base(c, { selection: 'leaf' }), c.vectors, 'min'),
  },
  {
    name: 'leaf + BERTopic auto reduction',
    cluster: (c) => bertopicAuto(base(c, { selection: 'leaf' }), c.vectors),
  },
]

function order(data: readonly Embedded[], seed: number): number[] {
  const random = seededRandom(seed)
  const out = data.map((_, i) => i)
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** The window's UMAP embedding for a seed, cached by the vectors' hash. */
function cachedUmap(set: SetName, vectors: readonly Vector[], seed: number): number[][] {
  const hash = createHash('sha256')
  for (const v of vectors) hash.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
  const file = path.join(CACHE, `umap-${set}-${hash.digest('hex').slice(0, 12)}-${seed}.json`)
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as number[][]
  const started = performance.now()
  const umap = umapEmbedding(vectors, { ...WINDOW_CLUSTERING, seed })
  console.error(`  UMAP ${set} seed ${seed}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  mkdirSync(CACHE, { recursive: true })
  writeFileSync(file, JSON.stringify(umap))
  return umap
}

async function main() {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', multiple: true },
      'umap-seed': { type: 'string', default: '31,32,33' },
      only: { type: 'string' },
      anchors: { type: 'boolean', default: false },
    },
  })
  const sets = (values.set ?? ['clinc150-val', 'clinc150-test', 'dstc11']) as SetName[]
  for (const s of sets) if (!SETS.includes(s)) throw new Error(`--set: one of ${SETS.join(', ')}`)
  const seeds = values['umap-seed']!.split(',').map(Number)
  const only = values.only?.split(',')
  const candidates = only ? CANDIDATES.filter((c) => only.some((o) => c.name.includes(o))) : CANDIDATES
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`
  for (const set of sets) {
    const data = await embedded(set)
    const shuffled = order(data, 31)
    const { points } = clusteringInput(emptyTopicState('bench'), windowOf(data, shuffled))
    const vectors = points.map((p) => p.embedding)
    const umaps = seeds.map((seed) => cachedUmap(set, vectors, seed))
    let knn: number[][] | undefined
    const neighbours = () => {
      knn ??= nearestNeighbours(vectors, WINDOW_CLUSTERING.neighbours).indices
      return knn
    }
    const intents = data.map((d) => d.intent)
    console.log(
      `\n${set}: ${data.length} requests (${vectors.length} embedded), UMAP seeds ${seeds.join(' / ')}`,
    )
    console.log(
      '| candidate | NMI | ACC | mean | ARI | topics (intents) | largest (intent) | noise | other |',
    )
    console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|')
    if (values.anchors) {
      const withVectors = data.filter((r) => r.embedding)
      const anchors = computeAnchors(
        withVectors.map((r) => r.text),
        withVectors.map((r) => r.intent),
        withVectors.map((r) => r.embedding!),
        31,
      )
      for (const a of [anchors.tfidf, anchors.embeddingsToldK, anchors.silhouette])
        console.log(
          `| ${a.name} | ${a.score.nmi.toFixed(3)} | ${a.score.acc.toFixed(3)} | | ${a.score.ari.toFixed(3)} | | | |`,
        )
    }
    for (const candidate of candidates) {
      const scores = umaps.map((umap) => {
        const numbers = candidate.cluster({ umap, vectors, neighbours })
        const noise = numbers.filter((x) => x < 0).length / data.length
        return { ...score(intents, runWindow(data, shuffled, () => numbers).clusters), noise }
      })
      const mean = (f: (s: (typeof scores)[number]) => number) =>
        scores.reduce((a, s) => a + f(s), 0) / scores.length
      const first = scores[0]!
      console.log(
        `| ${candidate.name} | ${scores.map((s) => s.nmi.toFixed(3)).join(' / ')} | ${scores.map((s) => s.acc.toFixed(3)).join(' / ')} | ${((mean((s) => s.nmi) + mean((s) => s.acc)) / 2).toFixed(3)} | ${mean((s) => s.ari).toFixed(3)} | ${scores.map((s) => s.topics).join(' / ')} (${first.intents}) | ${pct(Math.max(...scores.map((s) => s.largest)))} (${pct(first.largestIntent)}) | ${pct(mean((s) => s.noise))} | ${pct(mean((s) => s.other))} |`,
      )
    }
  }
}

await main()
