import { UMAP } from 'umap-js'
import { seededRandom } from '../seeded-random.ts'
import { poolClusters } from './agglomerative.ts'
import { type CondensedEdge, condensedTree, labelPoints, selectClusters } from './hdbscan.ts'
import { addInto, dot, normalized, type Vector } from './vectors.ts'

/**
 * How a re-clustering's window is clustered (issue 31; bench/FINDINGS.md "Issue 31: choosing topic
 * granularity from the data"): UMAP to 5 dimensions (15 neighbours, min_dist 0, cosine: BERTopic's
 * settings, not tuned here), then HDBSCAN with excess-of-mass selection (hdbscan.ts), its noise then
 * placed in the nearest cluster (noiseToNearest). The one constant
 * that sets how coarse the topics are, minClusterSize = 8 (the fewest requests that may make a topic),
 * was chosen on CLINC150 validation and confirmed on DSTC11 development and CLINC150 test; a window of
 * under 375 requests tries a fiftieth of them too (minClusterSizeChoices); the seed only makes a run
 * repeatable. HDBSCAN's min_samples (how many neighbours make a point's density) is chosen
 * per window between minClusterSize and UMAP's neighbours, by the silhouette of each clustering in the
 * model's own space (chooseBySilhouette): no constant decides it. Then a cluster looser than the
 * window's median topic is split into its children in HDBSCAN's tree (splitLoose). A window of 175–2,499
 * requests of many domains whose intents each hold few requests (manyDomainWindow) compares every
 * min_cluster_size 8 … 3 after the split instead.
 */
export interface WindowClusterOptions {
  readonly neighbours: number
  readonly components: number
  readonly minDist: number
  readonly minClusterSize: number
  /**
   * A small window tries this share of its requests (rounded, at least SMALLEST_CLUSTER) as
   * min_cluster_size too, when that is under minClusterSize (minClusterSizeChoices).
   */
  readonly smallWindowShare: number
  /**
   * The min_cluster_sizes to try, in this order (ties to the first), in place of minClusterSizeChoices:
   * for the bench's candidates (bench/topics-small-candidates.ts); the service leaves it unset.
   */
  readonly minClusterSizes?: readonly number[]
  /**
   * A small window whose requests' mean pairwise cosine (meanPairwiseCosine) is under this tries every
   * min_cluster_size from minClusterSize down to SMALLEST_CLUSTER, each compared after splitLoose
   * (manyDomainWindow): 0.13, in the model's space (all-MiniLM-L6-v2).
   */
  readonly manyDomainCosine: number
  /**
   * …and whose requests' mean similarity to their (minClusterSize − 1)th nearest other request
   * (groupSimilarity: how closely a group of minClusterSize gathers around each) is under this: 0.56, in
   * the model's space. Dense windows, whose intents each hold many requests, keep the default path.
   */
  readonly manyDomainGroupSimilarity: number
  /**
   * The fewest requests a window takes the many-domain path at (manyDomainWindow, manyDomainSized).
   */
  readonly manyDomainFrom: number
  /**
   * The window takes the many-domain path only under this many requests (manyDomainSized): 2,500, a bound
   * on its cost (twelve HDBSCAN runs where the default makes two); what decides below it is the two
   * readings (manyDomainWindow). Measured to 3,600 (bench/FINDINGS.md, "a ceiling the density decides").
   */
  readonly manyDomainBelow: number
  readonly seed: number
  /** UMAP's epochs; unset: umap-js's own choice (400 at 2,500–5,000 points). */
  readonly epochs?: number
}

export const WINDOW_CLUSTERING: WindowClusterOptions = {
  neighbours: 15,
  components: 5,
  minDist: 0,
  minClusterSize: 8,
  smallWindowShare: 1 / 50,
  manyDomainCosine: 0.13,
  manyDomainGroupSimilarity: 0.56,
  manyDomainFrom: 175,
  manyDomainBelow: 2500,
  seed: 31,
}

/** The fewest requests a small window's HDBSCAN may make a cluster of: the topic model's minTopicSize. */
export const SMALLEST_CLUSTER = 3

/**
 * The min_cluster_size a window of n requests tries: minClusterSize (8, chosen on CLINC150 validation at
 * 3,000 requests) and, in a window of under 375, a fiftieth of its requests (at least SMALLEST_CLUSTER:
 * 3 at 100, 4 at 200, 6 at 300); each at both min_samples, the clustering whose silhouette is highest
 * kept, ties to 8 (tried first). A fixed 8 asks each topic of a young chatbot for 8 requests, which few
 * of its requests have yet: in samples of 100 DSTC11 requests (22 intents, 4.5 requests each) the first
 * re-clustering made 4.8 topics where placement had made 15.8, ACC 0.59 → 0.46; the smaller size alone
 * split clean requests of 20 (its condensed tree has children that splitLoose then takes), so the
 * silhouette decides (bench/FINDINGS.md, "a small single-domain chatbot"). The share was chosen on DSTC11
 * samples of 100–400 requests (1/25 to 1/80 tried) and confirmed on single CLINC150 domains; a window of
 * 375 requests or more tries 8 alone, as before.
 */
export function minClusterSizeChoices(n: number, options: WindowClusterOptions): number[] {
  const small = Math.max(SMALLEST_CLUSTER, Math.round(n * options.smallWindowShare))
  return [...new Set([options.minClusterSize, Math.min(options.minClusterSize, small)])]
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
 * umap-js's optimisation (400 epochs, O(n · neighbours) each); for each of the two min_samples (four
 * runs in a window of under 375, two min_cluster_size each),
 * HDBSCAN's core distances and Prim's tree, 2 · n² distances in 5-d, and the silhouette, n · k dot
 * products; the split, each point's vector added to its tree ancestors' sums. A many-domain window of
 * 175–2,499 requests runs twelve HDBSCANs (sizes 8 … 3), each split and its silhouette taken, and not the
 * default path's (1.11–1.13 times the default path's CPU at 375–500 requests, 1.16 at 2,000, the same peak
 * memory: bench/FINDINGS.md, topics14 and "a ceiling the density decides"); its gate, one sum of the
 * window's vectors and the neighbours UMAP is given anyway.
 * Memory O(n · (d + neighbours)): no n × n matrix. Deterministic for a seed.
 */
export function windowClusters(
  vectors: readonly Vector[],
  references: readonly Vector[] = [],
  options: WindowClusterOptions = WINDOW_CLUSTERING,
): number[] {
  if (vectors.length < options.minClusterSize ** 2) {
    return poolClusters(vectors, references, { dissolve: false })
  }
  const knn = nearestNeighbours(vectors, options.neighbours)
  const umap = umapEmbedding(vectors, options, knn)
  const n = vectors.length
  if (
    !options.minClusterSizes &&
    manyDomainWindow(n, meanPairwiseCosine(vectors), groupSimilarity(knn.distances, options), options)
  ) {
    return manyDomainClusters(umap, vectors, options)
  }
  const sizes = options.minClusterSizes ? new Set(options.minClusterSizes) : minClusterSizeChoices(n, options)
  const runs = [...sizes].flatMap((minClusterSize) =>
    minSamplesChoices({ ...options, minClusterSize }).map((minSamples) => {
      const tree = condensedTree(umap, { minClusterSize, minSamples })
      const selected = selectClusters(tree, n)
      const density = labelPoints(tree, selected, n)
      return { tree, selected, numbers: noiseToNearest(density, vectors) }
    }),
  )
  const chosen = chooseBySilhouette(
    runs.map((r) => r.numbers),
    vectors,
  )
  const { tree, selected } = runs.find((r) => r.numbers === chosen)!
  return noiseToNearest(labelPoints(tree, splitLoose(tree, selected, vectors), n), vectors)
}

/**
 * Whether a window is sized for the many-domain path: manyDomainFrom requests or more (175: below it
 * single CLINC150 validation domains of 100 lost, −0.015; from 175 n / 50 rounds to 4 or more, so the
 * window does not try SMALLEST_CLUSTER already) and under manyDomainBelow (2,500). 125–250 measured on
 * CLINC150 train and test, DSTC11 and mixed samples by helper topics13 (bench/FINDINGS.md, "many-domain
 * windows the many-domain path misses"). The ceiling was 500 while the gate read HDBSCAN's noise (at 500
 * that took a single CLINC150 train domain, which lost 0.38: "windows of 375–1,500"); with the gate's two
 * readings in the model's space it is a bound on cost: no window of 2,400 or more measured reads under
 * both bars (bench/FINDINGS.md, "a ceiling the density decides").
 */
export function manyDomainSized(n: number, options: WindowClusterOptions): boolean {
  return n >= options.manyDomainFrom && n < options.manyDomainBelow
}

/**
 * Whether a window holds many domains, each asked in few requests: one of 175–2,499 requests
 * (manyDomainSized; under 375 it tries a size under minClusterSize, and not SMALLEST_CLUSTER already: n / 50
 * rounds to 4 or more) whose requests' mean pairwise cosine is under manyDomainCosine (0.13): requests of many unrelated domains lie
 * far apart on average, those of one domain closer. Read in the model's space, not UMAP's, so it does not
 * move with UMAP's seed or the CPU's rounding of the embeddings (to the fifth digit). The noise gate it
 * replaces (HDBSCAN at 8 leaving a fifth of the window as noise) read the same windows 0.08–0.27 over seeds
 * and jitter, and took a mixed CLINC150 window in half the runs (bench/FINDINGS.md, "the many-domain gate
 * is a coin flip near its bar"). The bar was chosen on CLINC150 train as the lowest round bar that takes
 * every window of many domains there (mixed draws of 175–475: at most 0.110; 20–55 intents of 8 or 12
 * requests: at most 0.129; chatbot A of bench:topics-multiturn, 267 requests of 53 shops: 0.120); one
 * single domain of 50 (utility at 250, 0.1296, +0.004 ACC) falls under it. Confirmed on CLINC150 test
 * (mixed and 20–55-intent windows at most 0.126, all taken; single domains at least 0.139, none) and
 * DSTC11 (0.30–0.32, none): bench/FINDINGS.md, "a many-domain gate that holds". Close to the bar single
 * domains are spread ones whose intents lie apart (utility, travel: −0.003 to +0.06 ACC on the path); it
 * loses on close ones (kitchen and dining, 0.17: −0.3) and on test utility at 325 (0.146: −0.23).
 *
 * And whose groups of minClusterSize lie loose: its requests' mean similarity to their seventh nearest
 * other (groupSimilarity) under manyDomainGroupSimilarity (0.56). The cosine alone also took many domains
 * whose intents come in groups of 20 (12 of 16 windows of 200–480, ACC −0.085 to +0.18), where the path
 * gains nothing, and could not be trusted past 500 requests: the path's gain falls as a window's intents
 * fill (mixed CLINC150 train draws +0.29 at 750, +0.11 at 1,500, +0.03 at 2,000, 0 at 3,000), and this
 * reading rises with them. Chosen on CLINC150 train (the round bar with the most ACC gained over every
 * many-domain window of 175–3,600: mixed draws, 10–120 intents of 8, 12, 20 or 30 requests), confirmed on
 * CLINC150 test (under it every window gains or holds: mixed 500–3,000 0.511 → 0.707 over their family,
 * intents of 8 at 520–960 0.552 → 0.787; intents of 20 at 200–480 0.928 → 0.946) and DSTC11 (its cosine
 * keeps it off); chatbots A and B of bench:topics-multiturn read 0.33 and 0.38 (B, 728 requests of 222
 * shops, was over the old ceiling: 19 topics, now 104): bench/FINDINGS.md, "a ceiling the density decides".
 */
export function manyDomainWindow(
  n: number,
  meanCosine: number,
  groupSimilarity: number,
  options: WindowClusterOptions,
): boolean {
  return (
    manyDomainSized(n, options) &&
    meanCosine < options.manyDomainCosine &&
    groupSimilarity < options.manyDomainGroupSimilarity
  )
}

/**
 * The mean over a window's requests of each one's similarity to its kth nearest other request, k =
 * minClusterSize − 1 (7), from nearestNeighbours' distances (each list itself first, most similar next): how
 * closely a group of minClusterSize gathers around a request, HDBSCAN's core distance at min_samples
 * minClusterSize read in the model's space. It tells a window whose intents each hold few requests (mixed CLINC150 draws
 * of 175–1,500: 0.28–0.53; 20–120 intents of 8 or 12 requests: 0.40–0.54; chatbots A and B of
 * bench:topics-multiturn 0.33, 0.38) from one whose intents hold many (20 or 30 requests an intent:
 * 0.50–0.64; mixed draws of 3,000: 0.59), where the many-domain path gains nothing. A list shorter than
 * k + 1 (a window of k requests or fewer) reads its last. Exact neighbours, no seed: the CPU's rounding
 * moves it in the fourth digit at most.
 */
export function groupSimilarity(
  distances: readonly (readonly number[])[],
  options: Pick<WindowClusterOptions, 'minClusterSize'>,
): number {
  if (distances.length === 0) return 1
  const k = options.minClusterSize - 1
  let total = 0
  for (const row of distances) total += 1 - row[Math.min(k, row.length - 1)]!
  return total / distances.length
}

/**
 * The mean cosine of a window's requests over its n(n − 1) ordered pairs of distinct unit vectors:
 * (|Σv|² − n) / (n(n − 1)), the squared norm of the sum less each vector with itself; O(n · d), no pair
 * visited.
 */
export function meanPairwiseCosine(vectors: readonly Vector[]): number {
  const sum = new Float64Array(vectors[0]?.length ?? 0)
  for (const v of vectors) for (let i = 0; i < sum.length; i++) sum[i]! += v[i]!
  return meanSimilarityOfSum(sum, vectors.length)
}

/**
 * The mean cosine between distinct members of a group of unit vectors, from their sum and count:
 * (|S|² − n) / (n(n − 1)); 1 for fewer than two (meanPairwiseCosine, splitLoose's looseness).
 */
function meanSimilarityOfSum(sum: Float64Array, n: number): number {
  return n < 2 ? 1 : (dot64(sum, sum) - n) / (n * (n - 1))
}

/**
 * A many-domain small window's clusters: every min_cluster_size from minClusterSize down to
 * SMALLEST_CLUSTER at both min_samples, each run split (splitLoose) and its noise placed before the
 * silhouette compares them (ties to the first: 8, then the larger min_samples second). Compared before
 * the split, as a window otherwise is, excess of mass at the mid sizes selects a few halves that only the
 * split makes fine, and the coarse run wins: chatbot A 5 topics (largest theme 83 %); compared after, 40
 * (23 %). Not for every small window: a whole CLINC150 domain (~290 requests, 15 intents) compared so is
 * over-split (ACC 0.791 → 0.729). Costs min_cluster_size 7 … 3's HDBSCAN runs, splits and silhouettes
 * beside the four of a small window.
 */
function manyDomainClusters(
  umap: readonly number[][],
  vectors: readonly Vector[],
  options: WindowClusterOptions,
): number[] {
  const n = vectors.length
  const runs: number[][] = []
  for (let minClusterSize = options.minClusterSize; minClusterSize >= SMALLEST_CLUSTER; minClusterSize--) {
    for (const minSamples of minSamplesChoices({ ...options, minClusterSize })) {
      const tree = condensedTree(umap, { minClusterSize, minSamples })
      const selected = selectClusters(tree, n)
      runs.push(noiseToNearest(labelPoints(tree, splitLoose(tree, selected, vectors), n), vectors))
    }
  }
  return chooseBySilhouette(runs, vectors)
}

/**
 * The selected clusters, each looser than the window's typical topic replaced by its child clusters in
 * the condensed tree (and so on down): a cluster's looseness is its members' mean similarity to each
 * other (from their embedding sum, in the model's space: (|S|² − n) / n(n − 1)), the window's typical
 * topic the median of that over the selected clusters. A cluster with no child cluster (a leaf) stays.
 * Excess of mass keeps a parent whose children are together less stable than it, which lumps two close
 * intents (CLINC150 validation: four phone and location intents, 88 requests, in one); the bar is the
 * window's own, so a window of tight topics (one domain) and one of loose ones (ten) are each judged
 * against themselves. Chosen on CLINC150 validation, confirmed on CLINC150 test and DSTC11
 * (bench/FINDINGS.md, "Issue 31: min_samples chosen per window"). Points that fell out of a split
 * cluster above its children are noise for noiseToNearest. Returns the clusters' ids, ascending.
 */
export function splitLoose(
  tree: readonly CondensedEdge[],
  selected: readonly number[],
  vectors: readonly Vector[],
): number[] {
  const { children, sums, sizes } = treeClusters(tree, vectors)
  const within = (c: number) => {
    const sum = sums.get(c)
    return sum ? meanSimilarityOfSum(sum, sizes.get(c) ?? 0) : 1
  }
  const bar = median(selected.map(within))
  const out: number[] = []
  const stack = [...selected]
  while (stack.length > 0) {
    const c = stack.pop()!
    const kids = children.get(c) ?? []
    if (kids.length >= 2 && within(c) < bar) stack.push(...kids)
    else out.push(c)
  }
  return out.sort((a, b) => a - b)
}

/** Each cluster of a condensed tree: its child clusters, and its members' embedding sum and count. */
export function treeClusters(tree: readonly CondensedEdge[], vectors: readonly Vector[]) {
  const children = new Map<number, number[]>()
  const parentOf = new Map<number, number>()
  const pointIn = new Map<number, number>()
  for (const e of tree) {
    if (e.size > 1) {
      children.set(e.parent, [...(children.get(e.parent) ?? []), e.child])
      parentOf.set(e.child, e.parent)
    } else pointIn.set(e.child, e.parent)
  }
  const sums = new Map<number, Float64Array>()
  const sizes = new Map<number, number>()
  const d = vectors[0]?.length ?? 0
  for (const [point, cluster] of pointIn) {
    const v = vectors[point]!
    for (let c: number | undefined = cluster; c !== undefined; c = parentOf.get(c)) {
      let sum = sums.get(c)
      if (!sum) {
        sum = new Float64Array(d)
        sums.set(c, sum)
      }
      for (let k = 0; k < d; k++) sum[k]! += v[k]!
      sizes.set(c, (sizes.get(c) ?? 0) + 1)
    }
  }
  return { children, sums, sizes }
}

export function dot64(a: Float64Array, b: Float64Array): number {
  let s = 0
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!
  return s
}

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NEGATIVE_INFINITY
  const sorted = [...values].sort((a, b) => a - b)
  const m = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2
}

/**
 * The min_samples a window's HDBSCAN tries: minClusterSize (HDBSCAN's default, the finer) and UMAP's
 * neighbours (the scale UMAP drew the window at, the coarser). Measured on CLINC150 validation, test and
 * DSTC11 (bench/FINDINGS.md "Issue 31: min_samples chosen per window"): the silhouette picks the finer on
 * every CLINC150 window (ten domains, whose intents lie apart) and the coarser on most DSTC11 windows (one
 * domain, each intent asked in several close ways), where it raised ACC above TF-IDF told k.
 */
export function minSamplesChoices(options: WindowClusterOptions): number[] {
  return [...new Set([options.minClusterSize, options.neighbours])]
}

/**
 * Of several clusterings of the same vectors (every point placed), the one whose mean silhouette in the
 * model's cosine space is highest (ties: the first): cosineSilhouette.
 */
export function chooseBySilhouette(clusterings: readonly number[][], vectors: readonly Vector[]): number[] {
  let best = clusterings[0]!
  let bestScore = Number.NEGATIVE_INFINITY
  for (const numbers of clusterings) {
    const score = cosineSilhouette(numbers, vectors)
    if (score > bestScore) {
      best = numbers
      bestScore = score
    }
  }
  return best
}

/**
 * The mean silhouette (Rousseeuw 1987) of a clustering of unit vectors under cosine distance, exact and
 * without a distance matrix: a point's mean similarity to a cluster's members is its dot product with
 * their sum over their count (itself left out of its own). A point alone in its cluster, or of a negative
 * number (noise), scores 0, as in scikit-learn; with one cluster, 0. O(n · k · d).
 */
export function cosineSilhouette(numbers: readonly number[], vectors: readonly Vector[]): number {
  const n = numbers.length
  if (n === 0) return 0
  const ids = [...new Set(numbers.filter((x) => x >= 0))].sort((a, b) => a - b)
  if (ids.length < 2) return 0
  const index = new Map(ids.map((c, i) => [c, i]))
  const sums = ids.map(() => new Float32Array(vectors[0]!.length))
  const sizes = new Float64Array(ids.length)
  numbers.forEach((x, i) => {
    if (x < 0) return
    const c = index.get(x)!
    addInto(sums[c]!, vectors[i]!)
    sizes[c]!++
  })
  let total = 0
  numbers.forEach((x, i) => {
    if (x < 0) return
    const own = index.get(x)!
    if (sizes[own]! < 2) return
    const a = 1 - (dot(vectors[i]!, sums[own]!) - dot(vectors[i]!, vectors[i]!)) / (sizes[own]! - 1)
    let b = Number.POSITIVE_INFINITY
    for (let c = 0; c < ids.length; c++)
      if (c !== own) b = Math.min(b, 1 - dot(vectors[i]!, sums[c]!) / sizes[c]!)
    const denominator = Math.max(a, b)
    if (denominator > 0) total += (b - a) / denominator
  })
  return total / n
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
export function umapEmbedding(
  vectors: readonly Vector[],
  options: WindowClusterOptions,
  { indices, distances } = nearestNeighbours(vectors, options.neighbours),
): number[][] {
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
