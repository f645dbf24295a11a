import { describe, expect, it } from 'vitest'
import { seededRandom } from '../support/random.ts'
import {
  adjustedRandIndex,
  clusteringAccuracy,
  maximumWeightAssignment,
  normalizedMutualInformation,
  scoreClustering,
} from './metrics.ts'

describe('normalizedMutualInformation', () => {
  it('is 1 for the same partition under other names, 0 for independent ones', () => {
    expect(normalizedMutualInformation(['a', 'a', 'b', 'b'], ['x', 'x', 'y', 'y'])).toBeCloseTo(1, 12)
    expect(normalizedMutualInformation(['a', 'a', 'b', 'b'], ['x', 'y', 'x', 'y'])).toBeCloseTo(0, 12)
  })

  it("matches scikit-learn's value on an uneven example", () => {
    // sklearn.metrics.normalized_mutual_info_score([0,0,0,1,1,2], [0,0,1,1,2,2]) = 0.5206652463984818
    const value = normalizedMutualInformation(['0', '0', '0', '1', '1', '2'], ['0', '0', '1', '1', '2', '2'])
    expect(value).toBeCloseTo(0.5206652463984818, 10)
  })
})

describe('maximumWeightAssignment', () => {
  it('finds the best matching where taking the largest cell first does not', () => {
    // Greedy takes 3 then 0 (total 3); the best is 2 + 2 = 4.
    expect(
      maximumWeightAssignment([
        [3, 2],
        [2, 0],
      ]),
    ).toEqual([1, 0])
  })

  it('leaves rows unmatched when there are more rows than columns, and matches a wide matrix', () => {
    expect(maximumWeightAssignment([[1], [5], [2]])).toEqual([-1, 0, -1])
    expect(maximumWeightAssignment([[1, 5, 2]])).toEqual([1])
    expect(maximumWeightAssignment([])).toEqual([])
  })

  it('reaches the total of the best permutation, found by trying them all, on random matrices', () => {
    const random = seededRandom(11)
    const permutations = (n: number): number[][] =>
      n === 0
        ? [[]]
        : permutations(n - 1).flatMap((p) =>
            Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]),
          )
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + Math.floor(random() * 6)
      const m = Array.from({ length: n }, () => Array.from({ length: n }, () => Math.floor(random() * 10)))
      const best = Math.max(...permutations(n).map((p) => p.reduce((s, j, i) => s + m[i]![j]!, 0)))
      const assignment = maximumWeightAssignment(m)
      expect(new Set(assignment).size).toBe(n)
      expect(assignment.reduce((s, j, i) => s + m[i]![j]!, 0)).toBe(best)
    }
  })
})

describe('clusteringAccuracy (1:1 Hungarian, DSTC11 ACC)', () => {
  it('is 1 for the same partition under other names', () => {
    expect(clusteringAccuracy(['a', 'a', 'b', 'c'], ['z', 'z', 'x', 'y'])).toBe(1)
  })

  it('counts only one cluster per label: a label split in two, or two labels merged, lose their smaller part', () => {
    // Hand-computed: a→x (2), b→y (1), c→z (1): 4 of 6; scipy's linear_sum_assignment on the
    // contingency matrix gives the same, 0.6666666666666666.
    expect(clusteringAccuracy(['0', '0', '0', '1', '1', '2'], ['0', '0', '1', '1', '2', '2'])).toBeCloseTo(
      4 / 6,
      12,
    )
    // Everything in one cluster: only the label matched to it is right.
    expect(clusteringAccuracy(['a', 'a', 'a', 'b', 'b', 'b'], ['x', 'x', 'x', 'x', 'x', 'x'])).toBe(0.5)
  })

  it('matches the value of scipy linear_sum_assignment on a larger example', () => {
    // labels [0,0,0,0,1,1,1,2,2,2,2,2,3], clusters [5,5,1,1,1,1,2,2,2,2,3,3,4]: 8/13 = 0.6153846153846154
    const labels = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3].map(String)
    const clusters = [5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4].map(String)
    expect(clusteringAccuracy(labels, clusters)).toBeCloseTo(0.6153846153846154, 12)
  })
})

describe('adjustedRandIndex', () => {
  it('is 1 for the same partition under other names, including the trivial ones', () => {
    expect(adjustedRandIndex(['a', 'a', 'b', 'b'], ['y', 'y', 'x', 'x'])).toBe(1)
    expect(adjustedRandIndex(['a', 'a', 'a'], ['x', 'x', 'x'])).toBe(1)
    expect(adjustedRandIndex(['a', 'b', 'c'], ['x', 'y', 'z'])).toBe(1)
  })

  it('matches a hand computation and scikit-learn', () => {
    // Pairs together in both: 1; by label 3+1+0 = 4; by cluster 1+1+1 = 3; of 15 pairs. Expected 4·3/15 = 0.8,
    // maximum (4+3)/2 = 3.5: (1 - 0.8) / (3.5 - 0.8) = 0.0740…; sklearn adjusted_rand_score = 0.07407407407407407.
    expect(adjustedRandIndex(['0', '0', '0', '1', '1', '2'], ['0', '0', '1', '1', '2', '2'])).toBeCloseTo(
      0.07407407407407407,
      12,
    )
    const labels = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3].map(String)
    const clusters = [5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4].map(String)
    // sklearn.metrics.adjusted_rand_score of the same = 0.2742409402546523
    expect(adjustedRandIndex(labels, clusters)).toBeCloseTo(0.2742409402546523, 12)
  })

  it('is 0 when one partition is a single block and the other is not', () => {
    expect(adjustedRandIndex(['a', 'a', 'a', 'b', 'b', 'b'], ['x', 'x', 'x', 'x', 'x', 'x'])).toBe(0)
  })
})

describe('scoreClustering', () => {
  it('counts "other" as one cluster for the measures but as no topic', () => {
    const score = scoreClustering(['a', 'a', 'a', 'b', 'b', 'c'], ['o', 'o', 'o', 'x', 'x', 'y'], {
      other: 'o',
    })
    expect(score.clusters).toBe(2)
    expect(score.largestShare).toBeCloseTo(2 / 6, 12)
    expect(score.largestLabelShare).toBeCloseTo(3 / 6, 12)
    expect(score.nmi).toBeCloseTo(1, 12)
  })
})
