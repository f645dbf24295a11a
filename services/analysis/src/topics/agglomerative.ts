import { dot, type Vector } from './vectors.ts'

/**
 * Average-linkage agglomerative clustering (UPGMA) of unit vectors, cut where the average cosine
 * similarity between two clusters falls below `minSimilarity`: the clusters whose members are, on
 * average, at least that similar to each other. Returns a cluster number per vector, numbered in order
 * of each cluster's first member.
 *
 * The nearest-neighbour chain algorithm: O(n²) time and one n×n matrix, exact for average linkage
 * (a reducible linkage, so the chain finds the same merges as the textbook O(n³) loop). A cluster whose
 * best similarity to any other is below the cut can never take part in a merge above it (average
 * linkage only averages similarities), so it, and the chain leading to it, are set aside at once.
 */
export function averageLinkageClusters(vectors: readonly Vector[], minSimilarity: number): number[] {
  const n = vectors.length
  const sim = new Float32Array(n * n)
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const s = dot(vectors[i]!, vectors[j]!)
      sim[i * n + j] = s
      sim[j * n + i] = s
    }
  }
  const size = new Array<number>(n).fill(1)
  const active = new Uint8Array(n).fill(1)
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!
      i = parent[i]!
    }
    return i
  }
  let remaining = n
  const chain: number[] = []
  while (remaining > 1) {
    if (chain.length === 0) {
      const start = active.indexOf(1)
      chain.push(start)
    }
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
    if (best < 0 || bestSim < minSimilarity) {
      // Nothing left in the chain can merge above the cut: each one's best pair is below it.
      for (const c of chain) active[c] = 0
      remaining -= chain.length
      chain.length = 0
      continue
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
    parent[find(best)] = find(a)
  }
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
