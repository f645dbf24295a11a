import { describe, expect, it } from 'vitest'
import { seededRandom } from '../seeded-random.ts'
import { type CondensedEdge, condensedTree, labelPoints, selectClusters } from './hdbscan.ts'
import { dot, normalized } from './vectors.ts'
import {
  chooseBySilhouette,
  cosineSilhouette,
  groupSimilarity,
  manyDomainSized,
  manyDomainWindow,
  meanPairwiseCosine,
  minClusterSizeChoices,
  minSamplesChoices,
  nearestNeighbours,
  noiseToNearest,
  splitLoose,
  umapEmbedding,
  WINDOW_CLUSTERING,
  windowClusters,
} from './window-clusters.ts'

// Synthetic requests: each a direction of its own in 32 dimensions, its paraphrases that direction plus
// seeded noise; unit vectors, as the model's embeddings are.
const DIM = 32

function requests(random: () => number, k: number, count: number, noise = 0.15): Float32Array[] {
  return Array.from({ length: count }, () => {
    const v = new Float32Array(DIM)
    for (let i = 0; i < DIM; i++) v[i] = (random() - 0.5) * noise
    v[k]! += 1
    return normalized(v)
  })
}

describe('the window clustering: UMAP + HDBSCAN (issue 31)', () => {
  it('finds the requests of a window; lone messages make no topic of their own, they join the nearest', () => {
    const random = seededRandom(5)
    const groups = [0, 4, 8, 12].map((k, i) => requests(random, k, 20 + 5 * i))
    // Lone messages, each a request of its own (directions no group has).
    const lone = [20, 23, 26, 29].map((k) => requests(random, k, 1)[0]!)
    const labels = windowClusters([...groups.flat(), ...lone])
    let at = 0
    const found = groups.map((g) => {
      const part = labels.slice(at, at + g.length)
      at += g.length
      expect(new Set(part).size, `group of ${g.length}`).toBe(1)
      return part[0]!
    })
    expect(found).toEqual([0, 1, 2, 3])
    // A lone message is no cluster of its own: HDBSCAN's noise or not, it ends in one of the groups.
    for (const label of labels.slice(at)) expect(found).toContain(label)
  })

  it('is deterministic for a seed', () => {
    const random = seededRandom(9)
    const window = [0, 3, 6, 9, 12, 15].flatMap((k) => requests(random, k, 15, 0.6))
    expect(window.length).toBeGreaterThanOrEqual(WINDOW_CLUSTERING.minClusterSize ** 2)
    const once = windowClusters(window)
    expect(windowClusters(window)).toEqual(once)
    expect(windowClusters(window, [], { ...WINDOW_CLUSTERING })).toEqual(once)
  })

  it("cuts a young chatbot's window (under minClusterSize² requests) by average linkage: two requests of five", () => {
    const random = seededRandom(2)
    const window = [...requests(random, 1, 5), ...requests(random, 7, 5)]
    expect(windowClusters(window)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
  })

  it("places HDBSCAN's noise in the cluster whose centroid is most similar, in the model's space", () => {
    const v = (...xs: number[]) => normalized(Float32Array.from(xs))
    const vectors = [
      v(1, 0, 0),
      v(1, 0.1, 0),
      v(0, 1, 0),
      v(0.1, 1, 0),
      // Noise: nearer the second cluster's centroid, then nearer the first's, then equally near both.
      v(0.3, 1, 1),
      v(1, 0.3, 1),
      v(1, 1, 0),
    ]
    const numbers = noiseToNearest([0, 0, 1, 1, -1, -1, -1], vectors)
    expect(numbers).toEqual([0, 0, 1, 1, 1, 0, 0])
    // Clusters and their members stay as they are; with no cluster at all, noise stays noise.
    expect(noiseToNearest([3, 3, 5, 5], vectors.slice(0, 4))).toEqual([3, 3, 5, 5])
    expect(noiseToNearest([-1, -1], vectors.slice(0, 2))).toEqual([-1, -1])
  })

  it("leaves no request of a window in noise: HDBSCAN's noise joins its nearest cluster", () => {
    // Four loose requests: HDBSCAN leaves some of their paraphrases as noise.
    const random = seededRandom(2)
    const window = [0, 6, 12, 18].flatMap((k) => requests(random, k, 25, 1))
    const umap = umapEmbedding(window, WINDOW_CLUSTERING)
    const n = window.length
    const runs = minClusterSizeChoices(n, WINDOW_CLUSTERING).flatMap((minClusterSize) =>
      minSamplesChoices({ ...WINDOW_CLUSTERING, minClusterSize }).map((minSamples) => {
        const tree = condensedTree(umap, { minClusterSize, minSamples })
        const selected = selectClusters(tree, n)
        const density = labelPoints(tree, selected, n)
        return { tree, selected, density, placed: noiseToNearest(density, window) }
      }),
    )
    const chosen = chooseBySilhouette(
      runs.map((r) => r.placed),
      window,
    )
    const { tree, selected, density } = runs.find((r) => r.placed === chosen)!
    const noise = density.flatMap((x, i) => (x < 0 ? [i] : []))
    expect(noise.length).toBeGreaterThan(0)
    const labels = windowClusters(window)
    expect(labels).not.toContain(-1)
    expect(labels).toEqual(noiseToNearest(labelPoints(tree, splitLoose(tree, selected, window), n), window))
    for (const i of noise) expect(labels[i]).toBeGreaterThanOrEqual(0)
  })

  it('tries a fiftieth of a small window as min_cluster_size beside 8, and 8 alone from 375 requests', () => {
    expect(minClusterSizeChoices(64, WINDOW_CLUSTERING)).toEqual([8, 3])
    expect(minClusterSizeChoices(100, WINDOW_CLUSTERING)).toEqual([8, 3])
    expect(minClusterSizeChoices(200, WINDOW_CLUSTERING)).toEqual([8, 4])
    expect(minClusterSizeChoices(300, WINDOW_CLUSTERING)).toEqual([8, 6])
    expect(minClusterSizeChoices(375, WINDOW_CLUSTERING)).toEqual([8])
    expect(minClusterSizeChoices(5000, WINDOW_CLUSTERING)).toEqual([8])
  })

  it("tries the min_cluster_sizes it is given instead, in order (the bench's candidates); unset, minClusterSizeChoices", () => {
    // Sixteen requests of five paraphrases each (80): too few for min_cluster_size 8, enough for 3.
    const random = seededRandom(4)
    const window = Array.from({ length: 16 }, (_, k) => requests(random, 2 * k, 5, 0.3)).flat()
    const n = window.length
    const landed = windowClusters(window)
    const alone8 = windowClusters(window, [], { ...WINDOW_CLUSTERING, smallWindowShare: 1 })
    expect(alone8).not.toEqual(landed)
    expect(windowClusters(window, [], { ...WINDOW_CLUSTERING, minClusterSizes: [8] })).toEqual(alone8)
    const choices = minClusterSizeChoices(n, WINDOW_CLUSTERING)
    expect(windowClusters(window, [], { ...WINDOW_CLUSTERING, minClusterSizes: choices })).toEqual(landed)
    expect(windowClusters(window, [], { ...WINDOW_CLUSTERING, minClusterSizes: [8, 8, ...choices] })).toEqual(
      landed,
    )
  })

  it('takes the many-domain path only in a window whose mean pairwise cosine is under 0.13 and whose groups of 8 lie loose (under 0.56)', () => {
    expect(WINDOW_CLUSTERING.manyDomainCosine).toBe(0.13)
    expect(WINDOW_CLUSTERING.manyDomainGroupSimilarity).toBe(0.56)
    expect(manyDomainWindow(300, 0.129, 0.4, WINDOW_CLUSTERING)).toBe(true)
    expect(manyDomainWindow(300, 0.13, 0.4, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainWindow(300, 0.3, 0.4, WINDOW_CLUSTERING)).toBe(false)
    // Many domains whose intents each hold many requests (groups of 20: 0.50-0.64) keep the default path.
    expect(manyDomainWindow(300, 0.1, 0.559, WINDOW_CLUSTERING)).toBe(true)
    expect(manyDomainWindow(300, 0.1, 0.56, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainWindow(1200, 0.1, 0.6, WINDOW_CLUSTERING)).toBe(false)
    // To 2,499 requests, however spread; from 2,500 never (the path's cost: twelve HDBSCAN runs).
    expect(manyDomainWindow(500, 0.1, 0.4, WINDOW_CLUSTERING)).toBe(true)
    expect(manyDomainWindow(2499, 0.1, 0.5, WINDOW_CLUSTERING)).toBe(true)
    expect(manyDomainWindow(2500, 0, 0, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainWindow(5000, 0, 0, WINDOW_CLUSTERING)).toBe(false)
    // Nor below 175 requests, which try min_cluster_size 3 already.
    expect(manyDomainWindow(174, 0, 0, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainWindow(175, 0.1, 0.3, WINDOW_CLUSTERING)).toBe(true)
  })

  it('reads how closely groups of 8 gather exactly from the neighbours, the same under a jitter or another order', () => {
    const random = seededRandom(9)
    // The same 24 directions asked 4 times each (sparse) and 20 times each (dense).
    const window = (perIntent: number) =>
      Array.from({ length: 24 }, (_, k) => requests(random, k, perIntent, 0.6)).flat()
    const sparse = window(4)
    const dense = window(20)
    const read = (w: readonly Float32Array[]) =>
      groupSimilarity(nearestNeighbours(w, WINDOW_CLUSTERING.neighbours).distances, WINDOW_CLUSTERING)
    for (const w of [sparse, dense]) {
      // Each request's 7th most similar other request, by brute force.
      let total = 0
      for (let i = 0; i < w.length; i++) {
        const sims = w.flatMap((v, j) => (j === i ? [] : [dot(w[i]!, v)])).sort((x, y) => y - x)
        total += sims[6]!
      }
      expect(read(w)).toBeCloseTo(total / w.length, 6)
      expect(read([...w].reverse())).toBeCloseTo(read(w), 9)
      const jittered = w.map((v) => normalized(v.map((x) => x + (random() - 0.5) * 0.002)))
      expect(Math.abs(read(jittered) - read(w))).toBeLessThan(0.001)
    }
    // Groups of 4 leave a request's 7th neighbour in another intent; groups of 20 keep it in its own.
    expect(read(dense) - read(sparse)).toBeGreaterThan(0.2)
    // A list shorter than k + 1 reads its last; no window reads 1.
    expect(groupSimilarity([[0, 0.2, 0.5]], WINDOW_CLUSTERING)).toBeCloseTo(0.5, 9)
    expect(groupSimilarity([], WINDOW_CLUSTERING)).toBe(1)
  })

  it('reads the mean pairwise cosine exactly, and the same under a jitter of the vectors or another order', () => {
    const random = seededRandom(5)
    // One domain: every request near one direction (a shared component), and many: directions apart.
    const near = (k: number) =>
      requests(random, k, 1, 0.15).map((v) => {
        const w = v.map((x, i) => x + (i === 0 ? 0.6 : 0))
        return normalized(w)
      })[0]!
    const oneDomain = Array.from({ length: 200 }, (_, i) => near(1 + (i % 10)))
    const manyDomains = Array.from({ length: 200 }, (_, i) => requests(random, i % DIM, 1, 0.15)[0]!)
    for (const window of [oneDomain, manyDomains]) {
      let pairs = 0
      for (let i = 0; i < window.length; i++)
        for (let j = 0; j < window.length; j++) if (i !== j) pairs += dot(window[i]!, window[j]!)
      expect(meanPairwiseCosine(window)).toBeCloseTo(pairs / (window.length * (window.length - 1)), 6)
      expect(meanPairwiseCosine([...window].reverse())).toBeCloseTo(meanPairwiseCosine(window), 9)
      // A CPU's rounding of the embeddings moves each component in its last digits; ±0.001 per component
      // moved the noise gate this replaced by up to 0.1, and this by under 0.001.
      const jittered = window.map((v) => normalized(v.map((x) => x + (random() - 0.5) * 0.002)))
      expect(Math.abs(meanPairwiseCosine(jittered) - meanPairwiseCosine(window))).toBeLessThan(0.001)
    }
    expect(meanPairwiseCosine(oneDomain)).toBeGreaterThan(WINDOW_CLUSTERING.manyDomainCosine)
    expect(meanPairwiseCosine(manyDomains)).toBeLessThan(WINDOW_CLUSTERING.manyDomainCosine)
    expect(meanPairwiseCosine([oneDomain[0]!])).toBe(1)
  })

  it('sizes the many-domain path at 175–2,499 requests, never the whole CLINC150 set', () => {
    expect(WINDOW_CLUSTERING.manyDomainBelow).toBe(2500)
    expect(manyDomainSized(174, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainSized(175, WINDOW_CLUSTERING)).toBe(true)
    expect(manyDomainSized(500, WINDOW_CLUSTERING)).toBe(true)
    expect(manyDomainSized(2499, WINDOW_CLUSTERING)).toBe(true)
    // bench:quality's CLINC150 set (4,332 requests) is never sized for it; DSTC11's (913) is, and its
    // mean cosine (0.30) keeps it off.
    expect(manyDomainSized(2500, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainSized(5000, WINDOW_CLUSTERING)).toBe(false)
    expect(manyDomainSized(499, { ...WINDOW_CLUSTERING, manyDomainFrom: 500 })).toBe(false)
    expect(manyDomainSized(10_000, { ...WINDOW_CLUSTERING, manyDomainFrom: 64 })).toBe(false)
    // The ceiling is its own option (manyDomainBelow): a window under it, from manyDomainFrom.
    expect(manyDomainSized(1500, { ...WINDOW_CLUSTERING, manyDomainBelow: 1501 })).toBe(true)
    expect(manyDomainSized(1501, { ...WINDOW_CLUSTERING, manyDomainBelow: 1501 })).toBe(false)
    expect(manyDomainSized(174, { ...WINDOW_CLUSTERING, manyDomainBelow: 1501 })).toBe(false)
  })

  it("chooses HDBSCAN's min_samples per window, between minClusterSize and UMAP's neighbours", () => {
    expect(minSamplesChoices(WINDOW_CLUSTERING)).toEqual([8, 15])
    expect(minSamplesChoices({ ...WINDOW_CLUSTERING, neighbours: 8 })).toEqual([8])
    // Of two clusterings, the one whose silhouette is higher; ties to the first.
    const random = seededRandom(3)
    const window = [0, 8, 16].flatMap((k) => requests(random, k, 10))
    const right = window.map((_, i) => Math.floor(i / 10))
    const lumped = window.map((_, i) => (i < 20 ? 0 : 1))
    expect(chooseBySilhouette([lumped, right], window)).toBe(right)
    expect(chooseBySilhouette([right, lumped], window)).toBe(right)
    expect(chooseBySilhouette([lumped, [...lumped]], window)).toBe(lumped)
  })

  it("splits a selected cluster looser than the window's median topic into its child clusters", () => {
    // A condensed tree of 40 points (root 40): cluster 41 (points 0–19) with children 43 (0–9) and 44
    // (10–19); leaves 42 (20–29) and 45 (30–39), under the root. EOM selected 41, 42 and 45.
    const tree: CondensedEdge[] = [
      { parent: 40, child: 41, lambda: 1, size: 20 },
      { parent: 40, child: 42, lambda: 1, size: 10 },
      { parent: 40, child: 45, lambda: 1, size: 10 },
      { parent: 41, child: 43, lambda: 2, size: 10 },
      { parent: 41, child: 44, lambda: 2, size: 10 },
      ...Array.from({ length: 40 }, (_, i) => ({
        parent: i < 10 ? 43 : i < 20 ? 44 : i < 30 ? 42 : 45,
        child: i,
        lambda: 3,
        size: 1,
      })),
    ]
    const random = seededRandom(6)
    const leaves = [...requests(random, 16, 10), ...requests(random, 24, 10)]
    // Cluster 41 of two requests: looser than the median cluster, so its two children are the topics.
    const two = [...requests(random, 0, 10, 0.05), ...requests(random, 8, 10, 0.05), ...leaves]
    expect(splitLoose(tree, [41, 42, 45], two)).toEqual([42, 43, 44, 45])
    // Cluster 41 of one request, tighter than the others: it stays whole, whatever its children.
    const one = [...requests(random, 0, 20, 0.05), ...leaves]
    expect(splitLoose(tree, [41, 42, 45], one)).toEqual([41, 42, 45])
  })

  it('measures the silhouette exactly, under cosine distance, without a distance matrix', () => {
    const random = seededRandom(4)
    const window = [0, 5, 10].flatMap((k) => requests(random, k, 6, 1))
    const numbers = window.map((_, i) => (i === 17 ? -1 : i % 4 === 0 ? 3 : Math.floor(i / 6)))
    // scikit-learn's definition, pair by pair: a point's mean distance to the other members of its
    // cluster (a), its least mean distance to another cluster's (b); (b − a) / max(a, b); noise and
    // singletons 0; averaged over every point.
    const distance = (i: number, j: number) => {
      let s = 0
      for (let t = 0; t < DIM; t++) s += window[i]![t]! * window[j]![t]!
      return 1 - s
    }
    const clusters = [...new Set(numbers.filter((x) => x >= 0))]
    let total = 0
    numbers.forEach((own, i) => {
      if (own < 0) return
      const mean = (c: number) => {
        const others = numbers.flatMap((x, j) => (x === c && j !== i ? [distance(i, j)] : []))
        return others.length === 0 ? Number.NaN : others.reduce((a, b) => a + b, 0) / others.length
      }
      const a = mean(own)
      if (Number.isNaN(a)) return
      const b = Math.min(...clusters.filter((c) => c !== own).map(mean))
      total += (b - a) / Math.max(a, b)
    })
    expect(cosineSilhouette(numbers, window)).toBeCloseTo(total / numbers.length, 5)
    expect(
      cosineSilhouette(
        window.map(() => 0),
        window,
      ),
    ).toBe(0)
  })

  it('gives UMAP each vector’s exact nearest neighbours by cosine, itself first', () => {
    const v = (x: number, y: number) => normalized(Float32Array.from([x, y]))
    const { indices, distances } = nearestNeighbours([v(1, 0), v(1, 0.1), v(0, 1), v(1, 0.5)], 3)
    expect(indices).toEqual([
      [0, 1, 3],
      [1, 0, 3],
      [2, 3, 1],
      [3, 1, 0],
    ])
    expect(distances[0]![0]).toBe(0)
    expect(distances[0]![1]).toBeCloseTo(1 - 1 / Math.sqrt(1.01), 6)
  })
})
