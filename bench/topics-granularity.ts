/**
 * How a small window chooses its granularity from its own data (issue 31, items 1 and 2; helper topics12).
 * Every candidate here clusters a window of 64–374 requests by every min_cluster_size 8 … 3 at both
 * min_samples (minSamplesChoices), each run carried through splitLoose and noiseToNearest as the landed
 * window does, and keeps one run by a measure that needs no bar on the window's spread:
 *
 * - `stability ari`: each run's clustering recomputed on seeded subsamples of 80 % of the window (the same
 *   UMAP points, the same sizes), the mean adjusted Rand index between the run and its subsample runs on
 *   the shared points: an over-split of one domain's close requests moves when a fifth of them goes;
 * - `stability jaccard`: the same subsamples, each of the run's clusters' best Jaccard match among the
 *   subsample run's clusters (Hennig 2007's clusterwise stability), averaged over the run's clusters;
 * - `sil x ari`, `sil x jaccard`: the run's silhouette after the split (the model's cosine space, as
 *   `split then choose 3-8`) times its stability: the finest run that still persists;
 * - `dbcv`: density-based clustering validation (Moulavi et al. 2014) in UMAP's space, of the clusters
 *   after the split with HDBSCAN's noise counted as noise (it weighs each cluster by its share of the
 *   window, so noise lowers it);
 * - `tree stability`: the condensed tree's excess of mass summed over the selected clusters, per request;
 * - `sil noise counted`: the silhouette after the split with HDBSCAN's noise left out of every cluster
 *   (scoring 0), before noiseToNearest.
 *
 * Windows under 64 requests are the pool's average linkage, windows of 375 or more windowClusters, as
 * landed. `GRANULARITY_TRACE=1` prints every run's scores per window (stderr).
 */
import { poolClusters } from '../services/analysis/src/topics/agglomerative.ts'
import {
  type CondensedEdge,
  condensedTree,
  labelPoints,
  mutualReachabilityTree,
  selectClusters,
} from '../services/analysis/src/topics/hdbscan.ts'
import type { Vector } from '../services/analysis/src/topics/vectors.ts'
import {
  cosineSilhouette,
  manyDomainSized,
  minSamplesChoices,
  noiseToNearest,
  splitLoose,
  umapEmbedding,
  WINDOW_CLUSTERING,
  windowClusters,
} from '../services/analysis/src/topics/window-clusters.ts'
import { seededRandom } from './support/random.ts'

type Clusterer = (vectors: readonly Vector[], references: readonly Vector[]) => number[]

const SIZES = [8, 7, 6, 5, 4, 3]
/** Subsamples per run and their share of the window. */
const DRAWS = 5
const SHARE = 0.8

interface Run {
  readonly minClusterSize: number
  readonly minSamples: number
  readonly tree: CondensedEdge[]
  readonly selected: number[]
  /** HDBSCAN's noise before the split, a share of the window. */
  readonly noise: number
  /** After splitLoose, HDBSCAN's noise −1. */
  readonly labels: number[]
  /** After splitLoose and noiseToNearest. */
  readonly numbers: number[]
}

export function clusterRun(
  umap: readonly number[][],
  vectors: readonly Vector[],
  minClusterSize: number,
  minSamples: number,
): Run {
  const n = vectors.length
  const tree = condensedTree(umap, { minClusterSize, minSamples })
  const selected = selectClusters(tree, n)
  const noise = labelPoints(tree, selected, n).filter((x) => x < 0).length / n
  const labels = labelPoints(tree, splitLoose(tree, selected, vectors), n)
  return {
    minClusterSize,
    minSamples,
    tree,
    selected,
    noise,
    labels,
    numbers: noiseToNearest(labels, vectors),
  }
}

export function runsOf(umap: readonly number[][], vectors: readonly Vector[]): Run[] {
  return SIZES.flatMap((minClusterSize) =>
    minSamplesChoices({ ...WINDOW_CLUSTERING, minClusterSize }).map((minSamples) =>
      clusterRun(umap, vectors, minClusterSize, minSamples),
    ),
  )
}

/** Adjusted Rand index of two labellings of the same points (Hubert and Arabie 1985). */
export function adjustedRand(a: readonly number[], b: readonly number[]): number {
  const n = a.length
  const pairs = (x: number) => (x * (x - 1)) / 2
  const joint = new Map<string, number>()
  const rows = new Map<number, number>()
  const cols = new Map<number, number>()
  for (let i = 0; i < n; i++) {
    const key = `${a[i]} ${b[i]}`
    joint.set(key, (joint.get(key) ?? 0) + 1)
    rows.set(a[i]!, (rows.get(a[i]!) ?? 0) + 1)
    cols.set(b[i]!, (cols.get(b[i]!) ?? 0) + 1)
  }
  let index = 0
  for (const c of joint.values()) index += pairs(c)
  let sa = 0
  for (const c of rows.values()) sa += pairs(c)
  let sb = 0
  for (const c of cols.values()) sb += pairs(c)
  const expected = (sa * sb) / pairs(n)
  const max = (sa + sb) / 2
  return max === expected ? 1 : (index - expected) / (max - expected)
}

/** Each cluster of `a`'s best Jaccard among `b`'s clusters (on the same points), averaged over a's clusters. */
export function clusterwiseJaccard(a: readonly number[], b: readonly number[]): number {
  const membersA = new Map<number, Set<number>>()
  const membersB = new Map<number, Set<number>>()
  a.forEach((c, i) => {
    membersA.set(c, (membersA.get(c) ?? new Set()).add(i))
  })
  b.forEach((c, i) => {
    membersB.set(c, (membersB.get(c) ?? new Set()).add(i))
  })
  let total = 0
  for (const ma of membersA.values()) {
    let best = 0
    const seen = new Set<number>()
    for (const i of ma) {
      const c = b[i]!
      if (seen.has(c)) continue
      seen.add(c)
      const mb = membersB.get(c)!
      let inter = 0
      for (const j of mb) if (ma.has(j)) inter++
      best = Math.max(best, inter / (ma.size + mb.size - inter))
    }
    total += best
  }
  return membersA.size === 0 ? 0 : total / membersA.size
}

/** A run's mean ARI and clusterwise Jaccard against its reruns on DRAWS seeded subsamples of SHARE. */
function stability(run: Run, umap: readonly number[][], vectors: readonly Vector[], seed: number) {
  const n = vectors.length
  const random = seededRandom(seed)
  let ari = 0
  let jaccard = 0
  for (let d = 0; d < DRAWS; d++) {
    const order = [...Array(n).keys()]
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    const kept = order.slice(0, Math.round(n * SHARE)).sort((x, y) => x - y)
    const sub = clusterRun(
      kept.map((i) => umap[i]!),
      kept.map((i) => vectors[i]!),
      run.minClusterSize,
      run.minSamples,
    )
    const full = kept.map((i) => run.numbers[i]!)
    ari += adjustedRand(full, sub.numbers)
    jaccard += clusterwiseJaccard(full, sub.numbers)
  }
  return { ari: ari / DRAWS, jaccard: jaccard / DRAWS }
}

/**
 * DBCV (Moulavi, Jaskowiak, Campello, Zimek and Sander 2014) of a labelling of points in `d` dimensions,
 * noise (−1) counted in the weights: each cluster's validity (separation − sparseness) / max of them,
 * weighted by its size over all points. All-points core distances, mutual reachability, each cluster's
 * minimum spanning tree; its sparseness the largest internal edge (an edge between two internal nodes,
 * degree ≥ 2; the largest edge when none), its separation the least mutual reachability between its
 * internal nodes and another cluster's. O(n² · d).
 */
export function dbcv(points: readonly number[][], labels: readonly number[]): number {
  const n = points.length
  const d = points[0]?.length ?? 1
  const ids = [...new Set(labels.filter((x) => x >= 0))]
  if (ids.length < 2) return -1
  const dist = (i: number, j: number) => {
    let s = 0
    for (let k = 0; k < d; k++) s += (points[i]![k]! - points[j]![k]!) ** 2
    return Math.sqrt(s)
  }
  const members = ids.map((c) => labels.flatMap((x, i) => (x === c ? [i] : [])))
  const core = new Float64Array(n)
  for (const m of members) {
    for (const i of m) {
      if (m.length < 2) {
        core[i] = 0
        continue
      }
      let s = 0
      for (const j of m) if (j !== i) s += (1 / Math.max(dist(i, j), 1e-12)) ** d
      core[i] = (s / (m.length - 1)) ** (-1 / d)
    }
  }
  const reach = (i: number, j: number) => Math.max(core[i]!, core[j]!, dist(i, j))
  const internal: number[][] = []
  const sparseness: number[] = []
  for (const m of members) {
    // The cluster's minimum spanning tree of mutual reachability; a node's degree tells inner from leaf.
    const edges = mutualReachabilityTree(
      m.map((i) => points[i]!),
      Float64Array.from(m, (i) => core[i]!),
    )
    const degree = new Int32Array(m.length)
    for (const [a, b] of edges) {
      degree[a]!++
      degree[b]!++
    }
    const inner = m.filter((_, j) => degree[j]! >= 2)
    internal.push(inner.length > 0 ? inner : m)
    const innerEdges = edges.filter(([a, b]) => degree[a]! >= 2 && degree[b]! >= 2)
    sparseness.push(Math.max(0, ...(innerEdges.length > 0 ? innerEdges : edges).map((e) => e[2])))
  }
  let total = 0
  for (let c = 0; c < ids.length; c++) {
    let separation = Number.POSITIVE_INFINITY
    for (let o = 0; o < ids.length; o++) {
      if (o === c) continue
      for (const i of internal[c]!)
        for (const j of internal[o]!) separation = Math.min(separation, reach(i, j))
    }
    const denominator = Math.max(separation, sparseness[c]!)
    const validity = denominator > 0 ? (separation - sparseness[c]!) / denominator : 0
    total += (members[c]!.length / n) * validity
  }
  return total
}

/** Excess of mass of the selected clusters (before the split), per point. */
function treeStability(run: Run, n: number): number {
  const birth = new Map<number, number>()
  for (const e of run.tree) if (e.size > 1) birth.set(e.child, e.lambda)
  const chosen = new Set(run.selected)
  // A selected cluster's stability: its own rows and its descendants' (everything under it left it at some λ).
  const parentOf = new Map<number, number>()
  for (const e of run.tree) if (e.size > 1) parentOf.set(e.child, e.parent)
  const selectedOf = (c: number): number | undefined => {
    for (let x: number | undefined = c; x !== undefined; x = parentOf.get(x)) if (chosen.has(x)) return x
    return undefined
  }
  let total = 0
  for (const e of run.tree) {
    const s = selectedOf(e.parent)
    if (s === undefined) continue
    total += (e.lambda - (birth.get(s) ?? 0)) * e.size * (e.parent === s ? 1 : 0)
  }
  return total / n
}

type Measure =
  | 'ari'
  | 'jaccard'
  | 'sil x ari'
  | 'sil x jaccard'
  | 'dbcv'
  | 'tree stability'
  | 'sil'
  | 'sil noise'

function chooseRun(vectors: readonly Vector[], measure: Measure): number[] {
  const umap = umapEmbedding(vectors, WINDOW_CLUSTERING)
  const runs = runsOf(umap, vectors)
  const n = vectors.length
  const trace = process.env.GRANULARITY_TRACE === '1'
  let best = runs[0]!
  let bestScore = Number.NEGATIVE_INFINITY
  for (const run of runs) {
    const sil = cosineSilhouette(run.numbers, vectors)
    const needsStability = measure.includes('ari') || measure.includes('jaccard')
    const st = needsStability ? stability(run, umap, vectors, WINDOW_CLUSTERING.seed) : undefined
    const score =
      measure === 'sil'
        ? sil
        : measure === 'sil noise'
          ? cosineSilhouette(run.labels, vectors)
          : measure === 'ari'
            ? st!.ari
            : measure === 'jaccard'
              ? st!.jaccard
              : measure === 'sil x ari'
                ? sil * st!.ari
                : measure === 'sil x jaccard'
                  ? sil * st!.jaccard
                  : measure === 'dbcv'
                    ? dbcv(umap, run.labels)
                    : treeStability(run, n)
    if (trace)
      console.error(
        `n ${n} mcs ${run.minClusterSize}/${run.minSamples}: ${new Set(run.numbers).size} clusters, sil ${sil.toFixed(3)}${st ? `, ari ${st.ari.toFixed(3)}, jaccard ${st.jaccard.toFixed(3)}` : ''}, ${measure} ${score.toFixed(4)}`,
      )
    if (score > bestScore) {
      best = run
      bestScore = score
    }
  }
  return best.numbers
}

function small(measure: Measure): Clusterer {
  return (v, r) =>
    v.length < WINDOW_CLUSTERING.minClusterSize ** 2
      ? poolClusters(v, r, { dissolve: false })
      : v.length >= 375
        ? windowClusters(v, r)
        : chooseRun(v, measure)
}

/**
 * The noise gate as first measured: when HDBSCAN at min_cluster_size 8 (either min_samples) leaves at
 * least `bar` of the window as noise, the window's requests do not come in groups of 8 (a many-domain
 * window: A 31–40 %), and every size 8 … 3 is compared after the split (`split then choose 3-8`);
 * otherwise the window as it was. From 64 requests: the service's manyDomainWindow (bar 0.2; its gate
 * until 2026-12-04) applied it from 175 only (CLINC150 validation's single domains of 100 lost here).
 */
function noiseGate(bar: number): Clusterer {
  return (v, r) => {
    if (v.length < WINDOW_CLUSTERING.minClusterSize ** 2 || v.length >= 375) return small('sil')(v, r)
    const umap = umapEmbedding(v, WINDOW_CLUSTERING)
    const eight = minSamplesChoices(WINDOW_CLUSTERING).map((ms) =>
      clusterRun(umap, v, WINDOW_CLUSTERING.minClusterSize, ms),
    )
    const noise = Math.max(...eight.map((run) => run.noise))
    if (process.env.GRANULARITY_TRACE === '1')
      console.error(`n ${v.length}: noise at 8 ${eight.map((run) => run.noise.toFixed(3)).join(' / ')}`)
    return noise >= bar ? chooseRun(v, 'sil') : windowClusters(v, r, NO_MANY_DOMAIN_PATH)
  }
}

/** The window as before helper topics12: no many-domain path (a cosine bar no window reads under). */
const NO_MANY_DOMAIN_PATH = { ...WINDOW_CLUSTERING, manyDomainCosine: Number.NEGATIVE_INFINITY }

/**
 * The landed window, and in a window sized for the many-domain path (manyDomainSized) every size 8 … 3
 * compared after the split (`sil after split 3-8`) kept when it has more clusters than the landed
 * window's (helper topics13): the after-split comparison trusted only in the direction it corrects, for a
 * many-domain window whose domains each hold 8 requests or more (little noise at 8). No constant. Gained
 * on CLINC150 train's many-domain and single-domain samples; lost on CLINC150 test's single domains of
 * 200–300 (bench/FINDINGS.md, "many-domain windows the many-domain path misses"); not landed.
 */
const finerAfterSplit: Clusterer = (v, r) => {
  const own = windowClusters(v, r)
  if (!manyDomainSized(v.length, WINDOW_CLUSTERING)) return own
  const after = chooseRun(v, 'sil')
  return new Set(after).size > new Set(own).size ? after : own
}

/** The many-domain path's floor (manyDomainFrom, 175 landed) at 125 … 250 (helper topics13). */
const floorCandidates = Object.fromEntries(
  [125, 150, 175, 200, 250].map((floor) => [
    `noise floor ${floor}`,
    ((v, r) => windowClusters(v, r, { ...WINDOW_CLUSTERING, manyDomainFrom: floor })) as Clusterer,
  ]),
)

/**
 * The many-domain path (its gate, then every size 8 … 3 compared after the split) taken by
 * windows under `below` requests instead of 375 (manyDomainBelow; helper topics14): windows of 375–1,500.
 */
const ceilingCandidates = Object.fromEntries(
  [500, 750, 1000, 1501, Number.POSITIVE_INFINITY].map((below) => [
    `many-domain below ${below}`,
    ((v, r) => windowClusters(v, r, { ...WINDOW_CLUSTERING, manyDomainBelow: below })) as Clusterer,
  ]),
)

export const GRANULARITY_CANDIDATES: Readonly<Record<string, Clusterer>> = {
  /** As before helper topics12: no many-domain path (a cosine bar no window reads under). */
  'no many-domain path': (v, r) => windowClusters(v, r, NO_MANY_DOMAIN_PATH),
  'finer after split': finerAfterSplit,
  ...floorCandidates,
  ...ceilingCandidates,
  'stability ari': small('ari'),
  'stability jaccard': small('jaccard'),
  'sil x ari': small('sil x ari'),
  'sil x jaccard': small('sil x jaccard'),
  dbcv: small('dbcv'),
  'tree stability': small('tree stability'),
  'sil after split 3-8': small('sil'),
  'sil noise counted': small('sil noise'),
  ...Object.fromEntries([0.15, 0.2, 0.25].map((bar) => [`noise gate ${bar}`, noiseGate(bar)])),
}
