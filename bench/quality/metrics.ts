/**
 * Clustering measures against labelled data, each as scikit-learn or DSTC11 track 2 computes it:
 * - NMI as normalized_mutual_info_score (arithmetic mean of the entropies): 1 when the clustering and the
 *   labels coincide, 0 when independent;
 * - ACC (DSTC11's primary metric): the share of items whose cluster is matched to their label by the best
 *   1:1 assignment of clusters to labels (Hungarian algorithm on the contingency matrix), so that splitting
 *   a label into two clusters or merging two labels into one cluster both cost;
 * - ARI as adjusted_rand_score: agreement of the pairs of items, 0 in expectation for a random clustering.
 */
export function normalizedMutualInformation(labels: readonly string[], clusters: readonly string[]): number {
  if (labels.length !== clusters.length) throw new Error('labels and clusters differ in length')
  const n = labels.length
  if (n === 0) return 1
  const joint = new Map<string, number>()
  const a = new Map<string, number>()
  const b = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    const key = `${labels[i]}\u0000${clusters[i]}`
    joint.set(key, (joint.get(key) ?? 0) + 1)
    a.set(labels[i]!, (a.get(labels[i]!) ?? 0) + 1)
    b.set(clusters[i]!, (b.get(clusters[i]!) ?? 0) + 1)
  }
  const entropy = (counts: Map<string, number>) =>
    -[...counts.values()].reduce((h, c) => h + (c / n) * Math.log(c / n), 0)
  const ha = entropy(a)
  const hb = entropy(b)
  // Both trivial (one label, one cluster): identical partitions.
  if (ha === 0 && hb === 0) return 1
  let mi = 0
  for (const [key, c] of joint) {
    const [la, cb] = key.split('\u0000') as [string, string]
    mi += (c / n) * Math.log((c * n) / (a.get(la)! * b.get(cb)!))
  }
  const denominator = (ha + hb) / 2
  return denominator === 0 ? 0 : Math.max(0, mi / denominator)
}

/** Counts of each (label, cluster) pair: rows are the labels, columns the clusters, in order of first appearance. */
export function contingency(
  labels: readonly string[],
  clusters: readonly string[],
): { table: number[][]; labelNames: string[]; clusterNames: string[] } {
  if (labels.length !== clusters.length) throw new Error('labels and clusters differ in length')
  const rowOf = new Map<string, number>()
  const columnOf = new Map<string, number>()
  for (let i = 0; i < labels.length; i++) {
    if (!rowOf.has(labels[i]!)) rowOf.set(labels[i]!, rowOf.size)
    if (!columnOf.has(clusters[i]!)) columnOf.set(clusters[i]!, columnOf.size)
  }
  const table = Array.from({ length: rowOf.size }, () => new Array<number>(columnOf.size).fill(0))
  for (let i = 0; i < labels.length; i++) table[rowOf.get(labels[i]!)!]![columnOf.get(clusters[i]!)!]! += 1
  return { table, labelNames: [...rowOf.keys()], clusterNames: [...columnOf.keys()] }
}

/**
 * The assignment of rows to columns of largest total weight, each row to at most one column and each
 * column to at most one row (a rectangular matrix is padded with zeros). The Hungarian algorithm with
 * potentials (Kuhn–Munkres, shortest augmenting paths), O(n³) for n the larger side. Returns, per row,
 * its column or -1.
 */
export function maximumWeightAssignment(weights: readonly (readonly number[])[]): number[] {
  const rows = weights.length
  const columns = rows === 0 ? 0 : weights[0]!.length
  const n = Math.max(rows, columns)
  if (n === 0) return []
  let max = 0
  for (const row of weights) for (const w of row) max = Math.max(max, w)
  // Minimizing max - w over the padded square matrix maximizes w.
  const cost = (i: number, j: number) => max - (i < rows && j < columns ? weights[i]![j]! : 0)
  // 1-based as in the classic formulation: column 0 is a virtual start, p[j] the row matched to column j.
  const u = new Float64Array(n + 1)
  const v = new Float64Array(n + 1)
  const p = new Int32Array(n + 1)
  const way = new Int32Array(n + 1)
  for (let i = 1; i <= n; i++) {
    p[0] = i
    let j0 = 0
    const minv = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY)
    const used = new Uint8Array(n + 1)
    do {
      used[j0] = 1
      const i0 = p[j0]!
      let delta = Number.POSITIVE_INFINITY
      let j1 = 0
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue
        const reduced = cost(i0 - 1, j - 1) - u[i0]! - v[j]!
        if (reduced < minv[j]!) {
          minv[j] = reduced
          way[j] = j0
        }
        if (minv[j]! < delta) {
          delta = minv[j]!
          j1 = j
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          u[p[j]!]! += delta
          v[j]! -= delta
        } else {
          minv[j]! -= delta
        }
      }
      j0 = j1
    } while (p[j0] !== 0)
    do {
      const j1 = way[j0]!
      p[j0] = p[j1]!
      j0 = j1
    } while (j0 !== 0)
  }
  const assignment = new Array<number>(rows).fill(-1)
  for (let j = 1; j <= n; j++) {
    const i = p[j]! - 1
    if (i < rows && j - 1 < columns) assignment[i] = j - 1
  }
  return assignment
}

/**
 * Clustering accuracy under the best 1:1 matching of clusters to labels (DSTC11 track 2's ACC): the share
 * of items in a cluster matched to their own label. Extra clusters (or labels) stay unmatched and count
 * as wrong.
 */
export function clusteringAccuracy(labels: readonly string[], clusters: readonly string[]): number {
  if (labels.length === 0) return 1
  const { table } = contingency(labels, clusters)
  const assignment = maximumWeightAssignment(table)
  let matched = 0
  for (let i = 0; i < table.length; i++) if (assignment[i]! >= 0) matched += table[i]![assignment[i]!]!
  return matched / labels.length
}

/** Adjusted Rand index as scikit-learn's adjusted_rand_score: 1 for identical partitions, ~0 for random ones. */
export function adjustedRandIndex(labels: readonly string[], clusters: readonly string[]): number {
  const n = labels.length
  const { table } = contingency(labels, clusters)
  const pairs = (x: number) => (x * (x - 1)) / 2
  let sumCells = 0
  const rowSums = new Array<number>(table.length).fill(0)
  const columnSums = new Array<number>(table[0]?.length ?? 0).fill(0)
  for (let i = 0; i < table.length; i++) {
    for (let j = 0; j < table[i]!.length; j++) {
      const c = table[i]![j]!
      sumCells += pairs(c)
      rowSums[i]! += c
      columnSums[j]! += c
    }
  }
  const sumRows = rowSums.reduce((s, x) => s + pairs(x), 0)
  const sumColumns = columnSums.reduce((s, x) => s + pairs(x), 0)
  const expected = n < 2 ? 0 : (sumRows * sumColumns) / pairs(n)
  const maximum = (sumRows + sumColumns) / 2
  // Both partitions all singletons or both one block: identical, as scikit-learn answers.
  if (maximum === expected) return 1
  return (sumCells - expected) / (maximum - expected)
}

export interface ClusteringScore {
  readonly nmi: number
  readonly acc: number
  readonly ari: number
  /** Distinct clusters. */
  readonly clusters: number
  /** The largest cluster's share of the items, beside the largest label's. */
  readonly largestShare: number
  readonly largestLabelShare: number
}

/**
 * Every measure the quality report gives a clustering, against the labels. Items in `opts.other` (what
 * waits outside every topic) count as one cluster for NMI, ACC and ARI, but are no topic: neither counted
 * among the clusters nor the largest one.
 */
export function scoreClustering(
  labels: readonly string[],
  clusters: readonly string[],
  opts: { other?: string } = {},
): ClusteringScore {
  const largest = (xs: readonly string[], total: number) => {
    const counts = new Map<string, number>()
    for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1)
    return counts.size === 0 ? 0 : Math.max(...counts.values()) / total
  }
  const topics = clusters.filter((c) => c !== opts.other)
  return {
    nmi: normalizedMutualInformation(labels, clusters),
    acc: clusteringAccuracy(labels, clusters),
    ari: adjustedRandIndex(labels, clusters),
    clusters: new Set(topics).size,
    largestShare: largest(topics, clusters.length),
    largestLabelShare: largest(labels, labels.length),
  }
}
