/**
 * HDBSCAN (Campello, Moulavi and Sander 2013; McInnes, Healy and Astels 2017), as scikit-learn's
 * `HDBSCAN(min_cluster_size, metric='euclidean', cluster_selection_method='eom')` computes it, on
 * low-dimensional points (the window's UMAP embedding, window-clusters.ts):
 * 1. The core distance of a point: the Euclidean distance to its `minSamples`-th nearest neighbour, the
 *    point itself counted as the first (scikit-learn's convention; minSamples defaults to minClusterSize).
 * 2. The mutual reachability distance of two points: max(core a, core b, d(a, b)); its minimum spanning
 *    tree by Prim's algorithm on the implicit complete graph, O(n²) time and O(n) memory (no n×n matrix).
 * 3. The single-linkage tree: the tree's edges by weight, joined by union-find.
 * 4. The condensed tree: walking down from the root, a split where both sides have at least
 *    minClusterSize points makes two child clusters; a smaller side's points fall out of their cluster at
 *    that level (λ = 1 / distance).
 * 5. Excess of mass: a cluster's stability is Σ over its points (λ at which a point left − λ at which the
 *    cluster was born); bottom up, a cluster is kept when it is at least as stable as its children
 *    together, else it stands for their sum. The root is never selected while it has child clusters;
 *    when it has none, the whole set is one cluster.
 * 6. A point belongs to the selected cluster it was in when it fell out; points that fell out of the root
 *    or of a cluster above any selected one are noise (−1).
 * Deterministic: ties are broken by index.
 */
export interface HdbscanOptions {
  readonly minClusterSize: number
  /** Defaults to minClusterSize. */
  readonly minSamples?: number
  /** 'eom' (excess of mass, the default) or 'leaf' (the condensed tree's leaves). */
  readonly selection?: 'eom' | 'leaf'
}

/** A row of the condensed tree: `child` (a point < n, or a cluster ≥ n) left `parent` at `lambda`. */
export interface CondensedEdge {
  readonly parent: number
  readonly child: number
  readonly lambda: number
  readonly size: number
}

/** Cluster numbers per point (0, 1, … in order of each cluster's first point), −1 for noise. */
export function hdbscan(points: readonly ArrayLike<number>[], options: HdbscanOptions): number[] {
  const n = points.length
  if (n === 0) return []
  if (n < 2) return [0]
  const tree = condensedTree(points, options)
  const selected = options.selection === 'leaf' ? leafClusters(tree, n) : selectClusters(tree, n)
  return labelPoints(tree, selected, n)
}

/** Steps 1–4: the condensed tree of at least two points (its root n, its clusters n + 1, …). */
export function condensedTree(
  points: readonly ArrayLike<number>[],
  options: HdbscanOptions,
): CondensedEdge[] {
  const n = points.length
  const minClusterSize = Math.max(2, options.minClusterSize)
  const minSamples = Math.max(1, Math.min(n, options.minSamples ?? minClusterSize))
  const core = coreDistances(points, minSamples)
  const mst = mutualReachabilityTree(points, core)
  return condenseTree(singleLinkage(mst, n), n, minClusterSize)
}

function distance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0
  for (let k = 0; k < a.length; k++) {
    const d = a[k]! - b[k]!
    s += d * d
  }
  return Math.sqrt(s)
}

/** The distance of each point to its minSamples-th nearest neighbour, itself the first. O(n²·d). */
export function coreDistances(points: readonly ArrayLike<number>[], minSamples: number): Float64Array {
  const n = points.length
  const core = new Float64Array(n)
  const row = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) row[j] = i === j ? 0 : distance(points[i]!, points[j]!)
    core[i] = kthSmallest(row, minSamples - 1)
  }
  return core
}

/** The k-th smallest (0-based) of `values` (reordered in place): quickselect. */
function kthSmallest(values: Float64Array, k: number): number {
  let lo = 0
  let hi = values.length - 1
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]!
    let i = lo
    let j = hi
    while (i <= j) {
      while (values[i]! < pivot) i++
      while (values[j]! > pivot) j--
      if (i <= j) {
        const t = values[i]!
        values[i] = values[j]!
        values[j] = t
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return values[k]!
  }
  return values[k]!
}

/** The minimum spanning tree of the mutual reachability graph: n − 1 edges [a, b, weight], Prim's. */
export function mutualReachabilityTree(
  points: readonly ArrayLike<number>[],
  core: Float64Array,
): [number, number, number][] {
  const n = points.length
  const inTree = new Uint8Array(n)
  const best = new Float64Array(n).fill(Number.POSITIVE_INFINITY)
  const from = new Int32Array(n).fill(-1)
  const edges: [number, number, number][] = []
  let current = 0
  inTree[0] = 1
  for (let added = 1; added < n; added++) {
    let next = -1
    let nextWeight = Number.POSITIVE_INFINITY
    for (let j = 0; j < n; j++) {
      if (inTree[j]) continue
      const w = Math.max(core[current]!, core[j]!, distance(points[current]!, points[j]!))
      if (w < best[j]!) {
        best[j] = w
        from[j] = current
      }
      if (best[j]! < nextWeight) {
        nextWeight = best[j]!
        next = j
      }
    }
    inTree[next] = 1
    edges.push([from[next]!, next, nextWeight])
    current = next
  }
  return edges
}

/**
 * The single-linkage dendrogram in SciPy's form: row i joins nodes left and right (points < n, row j's
 * node n + j) at `distance` into a node of `size` points.
 */
export function singleLinkage(
  edges: readonly [number, number, number][],
  n: number,
): { left: number; right: number; distance: number; size: number }[] {
  const order = edges.map((_, i) => i).sort((a, b) => edges[a]![2] - edges[b]![2] || a - b)
  const parent = new Int32Array(2 * n - 1).map((_, i) => i)
  const size = new Int32Array(2 * n - 1).fill(1)
  const find = (i: number): number => {
    let root = i
    while (parent[root] !== root) root = parent[root]!
    while (parent[i] !== root) {
      const next = parent[i]!
      parent[i] = root
      i = next
    }
    return root
  }
  return order.map((e, row) => {
    const [a, b, w] = edges[e]!
    const left = find(a)
    const right = find(b)
    const node = n + row
    parent[left] = node
    parent[right] = node
    size[node] = size[left]! + size[right]!
    return { left, right, distance: w, size: size[node]! }
  })
}

/** Below this a distance counts as this (λ = 1 / distance stays finite). */
const MIN_DISTANCE = 1e-12

/** The condensed tree (scikit-learn's `_condense_tree`): the root is cluster n, new clusters n + 1, …. */
export function condenseTree(
  hierarchy: readonly { left: number; right: number; distance: number; size: number }[],
  n: number,
  minClusterSize: number,
): CondensedEdge[] {
  const out: CondensedEdge[] = []
  if (n < 2) return out
  const root = 2 * n - 2
  const sizeOf = (node: number) => (node < n ? 1 : hierarchy[node - n]!.size)
  const relabel = new Map<number, number>([[root, n]])
  let nextLabel = n + 1
  const fallOut = (node: number, cluster: number, lambda: number) => {
    const stack = [node]
    while (stack.length > 0) {
      const x = stack.pop()!
      if (x < n) out.push({ parent: cluster, child: x, lambda, size: 1 })
      else stack.push(hierarchy[x - n]!.right, hierarchy[x - n]!.left)
    }
  }
  // Breadth first from the root: a node is visited after its parent (only nodes that stay clusters).
  const queue = [root]
  for (let q = 0; q < queue.length; q++) {
    const node = queue[q]!
    const { left, right, distance } = hierarchy[node - n]!
    const cluster = relabel.get(node)!
    // Coincident points: a finite λ, so that stabilities stay comparable (scikit-learn's is infinite).
    const lambda = 1 / Math.max(distance, MIN_DISTANCE)
    const leftCount = sizeOf(left)
    const rightCount = sizeOf(right)
    if (leftCount >= minClusterSize && rightCount >= minClusterSize) {
      for (const [child, count] of [
        [left, leftCount],
        [right, rightCount],
      ] as const) {
        relabel.set(child, nextLabel)
        out.push({ parent: cluster, child: nextLabel++, lambda, size: count })
        if (child >= n) queue.push(child)
      }
    } else {
      for (const [child, count, other] of [
        [left, leftCount, rightCount],
        [right, rightCount, leftCount],
      ] as const) {
        // The larger side (at least minClusterSize) carries the cluster on; a small side falls out.
        if (count >= minClusterSize && other < minClusterSize) {
          relabel.set(child, cluster)
          if (child >= n) queue.push(child)
        } else fallOut(child, cluster, lambda)
      }
    }
  }
  return out
}

/**
 * Excess-of-mass selection (scikit-learn's `_get_clusters`, allow_single_cluster off): the selected
 * clusters' ids. The root (n) only when it has no child cluster.
 */
export function selectClusters(tree: readonly CondensedEdge[], n: number): number[] {
  let maxCluster = n
  for (const e of tree) maxCluster = Math.max(maxCluster, e.parent, e.size > 1 ? e.child : 0)
  const count = maxCluster - n + 1
  const birth = new Float64Array(count)
  const children: number[][] = Array.from({ length: count }, () => [])
  for (const e of tree) {
    if (e.size > 1) {
      birth[e.child - n] = e.lambda
      children[e.parent - n]!.push(e.child)
    }
  }
  const stability = new Float64Array(count)
  for (const e of tree) stability[e.parent - n]! += (e.lambda - birth[e.parent - n]!) * e.size
  if (children[0]!.length === 0) return [n]
  const selected = new Uint8Array(count)
  // Children have larger ids than their parents: descending ids is bottom up.
  for (let c = maxCluster; c > n; c--) {
    const i = c - n
    const sub = children[i]!.reduce((s, child) => s + stability[child - n]!, 0)
    if (sub > stability[i]!) {
      stability[i] = sub
    } else {
      selected[i] = 1
      const stack = [...children[i]!]
      while (stack.length > 0) {
        const d = stack.pop()!
        selected[d - n] = 0
        stack.push(...children[d - n]!)
      }
    }
  }
  const out: number[] = []
  for (let i = 1; i < count; i++) if (selected[i]) out.push(n + i)
  return out
}

/** Leaf selection: the clusters of the condensed tree that have no child cluster (the root when none). */
export function leafClusters(tree: readonly CondensedEdge[], n: number): number[] {
  const clusters = new Set<number>()
  const parents = new Set<number>()
  for (const e of tree) {
    if (e.size > 1) {
      clusters.add(e.child)
      parents.add(e.parent)
    }
  }
  if (clusters.size === 0) return [n]
  return [...clusters].filter((c) => !parents.has(c)).sort((a, b) => a - b)
}

/** Each point's selected cluster (numbered in order of first point), or −1. */
export function labelPoints(
  tree: readonly CondensedEdge[],
  selected: readonly number[],
  n: number,
): number[] {
  const chosen = new Set(selected)
  const parentOf = new Map<number, number>()
  for (const e of tree) parentOf.set(e.child, e.parent)
  const clusterOf = (point: number): number => {
    let c = parentOf.get(point)
    while (c !== undefined && !chosen.has(c)) c = parentOf.get(c)
    return c ?? -1
  }
  const numbers = new Map<number, number>()
  return Array.from({ length: n }, (_, i) => {
    // A point the tree never mentions (n = 1) is the root's.
    const c = parentOf.has(i) ? clusterOf(i) : chosen.has(n) ? n : -1
    if (c === -1) return -1
    let k = numbers.get(c)
    if (k === undefined) {
      k = numbers.size
      numbers.set(c, k)
    }
    return k
  })
}
