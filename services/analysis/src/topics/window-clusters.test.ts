import { describe, expect, it } from 'vitest'
import { seededRandom } from '../seeded-random.ts'
import { normalized } from './vectors.ts'
import { nearestNeighbours, WINDOW_CLUSTERING, windowClusters } from './window-clusters.ts'

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
  it('finds the requests of a window; lone messages make no topic of their own', () => {
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
    // UMAP draws a lone message toward its nearest group: it is noise or that group's, never a cluster.
    for (const label of labels.slice(at)) expect([-1, ...found]).toContain(label)
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
