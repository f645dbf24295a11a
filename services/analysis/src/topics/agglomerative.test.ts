import { describe, expect, it } from 'vitest'
import { labelsAfter, poolClusters, similarities, wardMerges } from './agglomerative.ts'
import { normalized } from './vectors.ts'

// Unit vectors in 12 dimensions: a group is a direction, its members that direction plus a little of
// one other (each member its own), so that members of a group are about `1 / (1 + noise²)` similar.
const DIM = 12
function member(group: number, n: number, noise = 0.2): Float32Array {
  const v = new Float32Array(DIM)
  v[group] = 1
  v[4 + ((group * 3 + n) % 8)] = noise
  return normalized(v)
}

describe('the pool cut where the silhouette is highest', () => {
  it('finds the groups without being told how many, in order of their first member', () => {
    const vectors = [0, 1, 2].flatMap((g) => [0, 1, 2].map((n) => member(g, n)))
    expect(poolClusters(vectors)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2])
  })

  it('makes one cluster of the whole pool only when there is a topic to set it against', () => {
    const group = [0, 1, 2, 3].map((n) => member(0, n))
    const alone = poolClusters(group)
    expect(new Set(alone).size).toBeGreaterThan(1)
    expect(poolClusters(group, [member(1, 0)])).toEqual([0, 0, 0, 0])
  })

  it('leaves a message nearer an existing topic than its pooled neighbours in no cluster', () => {
    // `edge` is 0.96 similar to the topic's members and about 0.8 to a group it would otherwise join.
    const topicMean = member(0, 0, 0)
    const edge = normalized(Float32Array.from(topicMean, (x, i) => x + (i === 1 ? 0.3 : 0)))
    const group = [0, 1, 2].map((n) =>
      normalized(Float32Array.from(member(1, n), (x, i) => x + (i === 0 ? 0.9 : 0))),
    )
    const others = [2, 3].flatMap((g) => [0, 1, 2].map((n) => member(g, n)))
    const labels = poolClusters([...group, edge, ...others], [topicMean])
    expect(labels.filter((l) => l === labels[3])).toHaveLength(1)
    expect(new Set(labels.slice(0, 3)).size).toBe(1)
  })

  it('is deterministic and handles an empty or one-message pool', () => {
    const vectors = [0, 1].flatMap((g) => [0, 1, 2, 3].map((n) => member(g, n)))
    expect(poolClusters(vectors)).toEqual(poolClusters(vectors))
    expect(poolClusters([])).toEqual([])
    expect(poolClusters([member(0, 0)])).toEqual([0])
  })
})

describe('the Ward dendrogram (themes)', () => {
  const arc = (angle: number) => {
    const v = new Float32Array(DIM)
    v[0] = Math.cos(angle)
    v[1] = Math.sin(angle)
    return v
  }

  it('merges the closest pairs first and cuts evenly spaced points into runs of comparable size', () => {
    // Eight points evenly spaced on an arc, no gap anywhere: the two-group cut is two runs of comparable
    // size (ties decide 4 + 4 or 5 + 3), never one end point alone as a chaining linkage may leave it.
    const points = Array.from({ length: 8 }, (_, i) => arc(0.1 * i))
    const merges = wardMerges(similarities(points), points.length)
    expect(merges).toHaveLength(7)
    const halves = labelsAfter(merges, 8, 6)
    expect(halves).toEqual([...halves].sort((a, b) => a - b))
    expect(halves.filter((l) => l === 0).length).toBeGreaterThanOrEqual(3)
    expect(halves.filter((l) => l === 1).length).toBeGreaterThanOrEqual(3)
    // Two tight pairs far apart: each pair merges before the two pairs do.
    const pairs = [arc(0), arc(0.01), arc(1), arc(1.01)]
    const pairMerges = wardMerges(similarities(pairs), 4)
    expect(labelsAfter(pairMerges, 4, 2)).toEqual([0, 0, 1, 1])
  })

  it('leaves the similarity matrix as it was', () => {
    const points = [arc(0), arc(0.3), arc(0.9)]
    const sim = similarities(points)
    const copy = Float32Array.from(sim)
    wardMerges(sim, 3)
    expect(sim).toEqual(copy)
  })
})
