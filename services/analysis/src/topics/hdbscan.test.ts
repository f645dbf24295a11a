import { describe, expect, it } from 'vitest'
import { seededRandom } from '../seeded-random.ts'
import { type CondensedEdge, hdbscan, labelPoints, leafClusters, selectClusters } from './hdbscan.ts'

/** `count` points around `centre`, normally spread with `sd` (Box–Muller on a seeded generator). */
function blob(random: () => number, centre: readonly number[], sd: number, count: number): number[][] {
  return Array.from({ length: count }, () =>
    centre.map((c) => {
      const u = 1 - random()
      const v = random()
      return c + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    }),
  )
}

describe('HDBSCAN (issue 31: the window clustering)', () => {
  it('finds three blobs of different density and marks the scattered outliers as noise', () => {
    const random = seededRandom(7)
    const blobs = [
      blob(random, [0, 0], 0.5, 40),
      blob(random, [10, 0], 0.3, 30),
      blob(random, [0, 10], 1, 50),
    ]
    const outliers = [
      [30, 30],
      [-25, 12],
      [18, -22],
      [-15, -30],
      [25, 8],
    ]
    const labels = hdbscan([...blobs.flat(), ...outliers], { minClusterSize: 8 })
    let at = 0
    const found = blobs.map((b) => {
      const part = labels.slice(at, at + b.length)
      at += b.length
      // Nearly every member in one cluster: the blob's own (a blob's stragglers may be noise).
      const [cluster, members] = [...countBy(part)].sort((x, y) => y[1] - x[1])[0]!
      expect(cluster).toBeGreaterThanOrEqual(0)
      expect(members / b.length).toBeGreaterThanOrEqual(0.9)
      return cluster
    })
    expect(new Set(found).size).toBe(3)
    expect(Math.max(...labels)).toBe(2)
    expect(labels.slice(at)).toEqual([-1, -1, -1, -1, -1])
  })

  it('makes one cluster of a set no split of which leaves two clusters of minClusterSize', () => {
    const random = seededRandom(3)
    expect(hdbscan(blob(random, [0, 0], 1, 12), { minClusterSize: 8 })).toEqual(Array(12).fill(0))
  })

  it('gives the same clusters for the same points, and numbers them in order of first member', () => {
    const random = seededRandom(11)
    const points = [...blob(random, [5, 5], 0.4, 20), ...blob(random, [-5, 5], 0.4, 20)]
    const once = hdbscan(points, { minClusterSize: 5 })
    expect(hdbscan(points, { minClusterSize: 5 })).toEqual(once)
    expect(once[0]).toBe(0)
    expect(once[20]).toBe(1)
  })
})

describe('excess-of-mass selection on a hand-checked condensed tree', () => {
  // Ten points; the root is 10. At λ = 1 it splits into 11 (points 0–5) and 12 (points 6–9); at λ = 2,
  // 11 splits into 13 (0–2) and 14 (3–5). Stabilities, Σ (λ left − λ born) over what leaves:
  //   12: four points leave at λ = 5: 4 · (5 − 1) = 16;
  //   11: its two children leave at λ = 2, three points each: 3 · (2 − 1) + 3 · (2 − 1) = 6;
  //   14: three points leave at λ = 3: 3 · (3 − 2) = 3;
  //   13: three points leave at λ = `dense`: 3 · (dense − 2).
  function tree(dense: number): CondensedEdge[] {
    const leave = (parent: number, points: number[], lambda: number) =>
      points.map((child) => ({ parent, child, lambda, size: 1 }))
    return [
      { parent: 10, child: 11, lambda: 1, size: 6 },
      { parent: 10, child: 12, lambda: 1, size: 4 },
      { parent: 11, child: 13, lambda: 2, size: 3 },
      { parent: 11, child: 14, lambda: 2, size: 3 },
      ...leave(12, [6, 7, 8, 9], 5),
      ...leave(13, [0, 1, 2], dense),
      ...leave(14, [3, 4, 5], 3),
    ]
  }

  it('keeps the children when they hold more mass than their parent: 13 + 14 = 24 + 3 > 6', () => {
    expect(selectClusters(tree(10), 10)).toEqual([12, 13, 14])
    expect(labelPoints(tree(10), [12, 13, 14], 10)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
  })

  it('keeps the parent when its children hold less: 13 + 14 = 1.5 + 3 < 6', () => {
    expect(selectClusters(tree(2.5), 10)).toEqual([11, 12])
    expect(labelPoints(tree(2.5), [11, 12], 10)).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
  })

  it('leaf selection (measured, not the default) keeps the leaves whatever the mass: 12, 13, 14', () => {
    expect(leafClusters(tree(2.5), 10)).toEqual([12, 13, 14])
    expect(leafClusters([{ parent: 10, child: 0, lambda: 1, size: 1 }], 10)).toEqual([10])
  })

  it('never selects the root while it has child clusters; points that left the root are noise', () => {
    const withNoise: CondensedEdge[] = [
      { parent: 10, child: 0, lambda: 0.5, size: 1 },
      { parent: 10, child: 1, lambda: 0.5, size: 1 },
      { parent: 10, child: 11, lambda: 1, size: 4 },
      { parent: 10, child: 12, lambda: 1, size: 4 },
      ...[2, 3, 4, 5].map((child) => ({ parent: 11, child, lambda: 1.5, size: 1 })),
      ...[6, 7, 8, 9].map((child) => ({ parent: 12, child, lambda: 1.5, size: 1 })),
    ]
    // The root's stability, 8 · (1 − 0) + 2 · 0.5 = 9, exceeds its children's, 2 + 2, yet it is not chosen.
    expect(selectClusters(withNoise, 10)).toEqual([11, 12])
    expect(labelPoints(withNoise, [11, 12], 10)).toEqual([-1, -1, 0, 0, 0, 0, 1, 1, 1, 1])
  })
})

function countBy(values: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  return counts
}
