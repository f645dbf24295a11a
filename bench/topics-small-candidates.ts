/**
 * Window clusterings measured beside the landed one by bench/topics-small.ts (--candidate NAME): each a
 * general remedy for a small window read from the window's own data, none fitted to a set. Composed
 * from window-clusters.ts's own parts.
 */
import { poolClusters } from '../services/analysis/src/topics/agglomerative.ts'
import { condensedTree, labelPoints, selectClusters } from '../services/analysis/src/topics/hdbscan.ts'
import type { Vector } from '../services/analysis/src/topics/vectors.ts'
import {
  chooseBySilhouette,
  cosineSilhouette,
  minClusterSizeChoices,
  minSamplesChoices,
  noiseToNearest,
  splitLoose,
  umapEmbedding,
  WINDOW_CLUSTERING,
  type WindowClusterOptions,
  windowClusters,
} from '../services/analysis/src/topics/window-clusters.ts'
import { GRANULARITY_CANDIDATES } from './topics-granularity.ts'

type Clusterer = (vectors: readonly Vector[], references: readonly Vector[]) => number[]

/** The landed pipeline with its options and steps open: UMAP + HDBSCAN, min_samples by silhouette, splitLoose. */
function hdbscan(
  vectors: readonly Vector[],
  options: WindowClusterOptions,
  noise: 'nearest' | 'wait' = 'nearest',
): number[] {
  const umap = umapEmbedding(vectors, options)
  const n = vectors.length
  const runs = minSamplesChoices(options).map((minSamples) => {
    const tree = condensedTree(umap, { minClusterSize: options.minClusterSize, minSamples })
    const selected = selectClusters(tree, n)
    return { tree, selected, numbers: noiseToNearest(labelPoints(tree, selected, n), vectors) }
  })
  const chosen = chooseBySilhouette(
    runs.map((r) => r.numbers),
    vectors,
  )
  const { tree, selected } = runs.find((r) => r.numbers === chosen)!
  const labels = labelPoints(tree, splitLoose(tree, selected, vectors), n)
  return noise === 'nearest' ? noiseToNearest(labels, vectors) : labels
}

/**
 * UMAP + HDBSCAN at each of `sizes` and both min_samples, each run compared as it ends, after splitLoose
 * and noiseToNearest (helper topics11); one size: windowClusters.
 */
function splitThenChoose(vectors: readonly Vector[], sizes: readonly number[]): number[] {
  const n = vectors.length
  const choices = [...new Set(sizes)]
  if (choices.length < 2) return windowClusters(vectors)
  const umap = umapEmbedding(vectors, WINDOW_CLUSTERING)
  const runs = choices.flatMap((minClusterSize) =>
    minSamplesChoices({ ...WINDOW_CLUSTERING, minClusterSize }).map((minSamples) => {
      const tree = condensedTree(umap, { minClusterSize, minSamples })
      const selected = selectClusters(tree, n)
      return noiseToNearest(labelPoints(tree, splitLoose(tree, selected, vectors), n), vectors)
    }),
  )
  return chooseBySilhouette(runs, vectors)
}

const averageLinkage: Clusterer = (v, r) => poolClusters(v, r, { dissolve: false })

export const WINDOW_CANDIDATES: Readonly<Record<string, Clusterer>> = {
  /** A small window's granularity by stability, DBCV and the like (helper topics12, topics-granularity.ts). */
  ...GRANULARITY_CANDIDATES,
  /** As before 2026-12-01 (helper topics10): min_cluster_size 8 at any n, no smaller size tried. */
  '8 alone': (v, r) => windowClusters(v, r, { ...WINDOW_CLUSTERING, smallWindowShare: 1 }),
  /** The pool's silhouette-cut average linkage at any n (the under-64 path everywhere). */
  'average linkage': averageLinkage,
  /** UMAP + HDBSCAN whatever n (no switch at 64). */
  'hdbscan always': (v) => hdbscan(v, WINDOW_CLUSTERING),
  /** min_cluster_size 5 (the smallest tried when 8 was chosen). */
  'mcs 5': (v, r) =>
    v.length < 64 ? averageLinkage(v, r) : hdbscan(v, { ...WINDOW_CLUSTERING, minClusterSize: 5 }),
  /** min_cluster_size √n / 2 between 3 and 8 (8 at n ≥ 256; 5 at 100). */
  'mcs sqrt': (v, r) =>
    v.length < 64
      ? averageLinkage(v, r)
      : hdbscan(v, {
          ...WINDOW_CLUSTERING,
          minClusterSize: Math.max(3, Math.min(8, Math.round(Math.sqrt(v.length) / 2))),
        }),
  ...Object.fromEntries(
    [3, 4].map((size) => [
      `mcs ${size}`,
      ((v, r) =>
        v.length < 64
          ? averageLinkage(v, r)
          : hdbscan(v, { ...WINDOW_CLUSTERING, minClusterSize: size })) as Clusterer,
    ]),
  ),
  /** min_cluster_size n / d between 3 and 8 (8 from n = 7.5 d). */
  ...Object.fromEntries(
    [25, 32, 40, 50, 64, 80].map((d) => [
      `mcs n/${d}`,
      ((v, r) =>
        v.length < 64
          ? averageLinkage(v, r)
          : hdbscan(v, {
              ...WINDOW_CLUSTERING,
              minClusterSize: Math.max(3, Math.min(8, Math.round(v.length / d))),
            })) as Clusterer,
    ]),
  ),
  /** min_cluster_size 3–8 chosen by the silhouette of the final clustering in the model's space. */
  'mcs by silhouette': (v, r) => {
    if (v.length < 64) return averageLinkage(v, r)
    return chooseBySilhouette(
      [3, 4, 5, 6, 8].map((size) => hdbscan(v, { ...WINDOW_CLUSTERING, minClusterSize: size })),
      v,
    )
  },
  /**
   * HDBSCAN at min_cluster_size n / d (3–8) and 8, each at both min_samples, the run whose silhouette
   * in the model's space is highest kept, ties to n / d (tried first), then splitLoose: windowClusters.
   */
  ...Object.fromEntries(
    [40, 50].map((d) => [
      `sil n/${d}|8`,
      ((v, r) =>
        windowClusters(v, r, {
          ...WINDOW_CLUSTERING,
          minClusterSizes: minClusterSizeChoices(v.length, {
            ...WINDOW_CLUSTERING,
            smallWindowShare: 1 / d,
          }).reverse(),
        })) as Clusterer,
    ]),
  ),
  /** As `sil n/50|8`, ties to min_cluster_size 8 (tried first): the window as topics10 landed it. */
  'sil 8|n/50': (v, r) => windowClusters(v, r),
  /** The landed runs (8 and n / 50, both min_samples) compared after splitLoose in a small window. */
  'split then choose': (v, r) =>
    v.length < 64
      ? averageLinkage(v, r)
      : splitThenChoose(v, minClusterSizeChoices(v.length, WINDOW_CLUSTERING)),
  /** As `split then choose`, min_cluster_size 3 to 8 (each) tried in a small window (not landed: whole CLINC150 domains lose). */
  'split then choose 3-8': (v, r) =>
    v.length < 64
      ? averageLinkage(v, r)
      : v.length >= 375
        ? windowClusters(v, r)
        : splitThenChoose(v, [8, 7, 6, 5, 4, 3]),
  /** min_cluster_size 3 to 8 (each) tried in a small window, compared before the split, as landed. */
  'choose 3-8': (v, r) =>
    windowClusters(
      v,
      r,
      v.length >= 375 ? WINDOW_CLUSTERING : { ...WINDOW_CLUSTERING, minClusterSizes: [8, 7, 6, 5, 4, 3] },
    ),
  /** UMAP's neighbours √n between 5 and 15 (15 at n ≥ 225). */
  'neighbours sqrt': (v, r) =>
    v.length < 64
      ? averageLinkage(v, r)
      : hdbscan(v, {
          ...WINDOW_CLUSTERING,
          neighbours: Math.max(8, Math.min(15, Math.round(Math.sqrt(v.length)))),
        }),
  /** HDBSCAN's noise waits in "other" instead of joining its nearest cluster. */
  'noise waits': (v, r) => (v.length < 64 ? averageLinkage(v, r) : hdbscan(v, WINDOW_CLUSTERING, 'wait')),
  /** The cut (HDBSCAN's or average linkage's) whose silhouette in the model's space is higher. */
  'silhouette decides': (v, r) => {
    if (v.length < 64) return averageLinkage(v, r)
    const a = hdbscan(v, WINDOW_CLUSTERING)
    const b = averageLinkage(v, r)
    return cosineSilhouette(b, v) > cosineSilhouette(a, v) ? b : a
  },
}
