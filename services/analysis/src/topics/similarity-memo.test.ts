import { describe, expect, it } from 'vitest'
import { seededRandom } from '../seeded-random.ts'
import { similarities } from './agglomerative.ts'
import { SimilarityMemo } from './similarity-memo.ts'
import { clusterCentroids, groupThemes, type ThemeTopic } from './themes.ts'
import { normalized } from './vectors.ts'

const DIMENSIONS = 10

/** Coarse coordinates (0, ±1, ±2): many vectors coincide or tie in similarity, as ties must be kept. */
function coarse(random: () => number): Float32Array {
  const v = Float32Array.from({ length: DIMENSIONS }, () => Math.round(random() * 4) - 2)
  if (v.every((x) => x === 0)) v[0] = 1
  return normalized(v)
}

const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

/**
 * A chatbot's topics between groupings: some centroids replaced by new objects (members joined), some
 * topics gone or new, one centroid written in place (no code does so, but the memo must not trust that)
 * and one object listed twice.
 */
function* rounds(seed: number, count: number): Generator<Float32Array[]> {
  const random = seededRandom(seed)
  let vectors = Array.from({ length: 8 + Math.floor(random() * 30) }, () => coarse(random))
  for (let r = 0; r < count; r++) {
    yield vectors
    vectors = vectors
      .filter(() => random() > 0.1)
      .map((v) => (random() < 0.3 ? coarse(random) : v))
      .concat(Array.from({ length: Math.floor(random() * 4) }, () => coarse(random)))
    if (vectors.length > 0 && random() < 0.5)
      vectors[Math.floor(random() * vectors.length)]!.set(coarse(random))
    if (vectors.length > 1 && random() < 0.3) vectors.push(vectors[0]!)
    vectors.sort(() => random() - 0.5)
  }
}

describe('the similarity memo of theme grouping', () => {
  it('gives the matrix similarities() computes, bit for bit, across changing calls with ties', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const memo = new SimilarityMemo()
      for (const vectors of rounds(seed, 12)) {
        expect(bytes(memo.similarities(vectors)).equals(bytes(similarities(vectors)))).toBe(true)
      }
      expect(memo.reused).toBeGreaterThan(0)
    }
  })

  it('reuses no entry of a vector written in place since the last call', () => {
    const random = seededRandom(7)
    const vectors = Array.from({ length: 6 }, () => coarse(random))
    const memo = new SimilarityMemo()
    memo.similarities(vectors)
    vectors[2]!.set(normalized(Float32Array.from({ length: DIMENSIONS }, (_, i) => i + 1)))
    const before = memo.reused
    const sim = memo.similarities(vectors)
    // Of the 15 pairs, the 5 with vector 2 are computed anew.
    expect(memo.reused - before).toBe(10)
    expect(bytes(sim).equals(bytes(similarities(vectors)))).toBe(true)
  })

  it('leaves the themes as they are without it', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const memo = new SimilarityMemo()
      for (const vectors of rounds(100 + seed, 8)) {
        expect(clusterCentroids(vectors, memo)).toEqual(clusterCentroids(vectors))
        const topics: ThemeTopic[] = vectors.map((centroid, i) => ({
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          label: `word${i % 5} other${i % 3}`,
          keywords: [`word${i % 5}`],
          terms: new Map([[`word${i % 5}`, 1 + (i % 4)]]),
          centroid,
          size: 1 + (i % 7),
        }))
        expect(groupThemes(topics, [], memo)).toEqual(groupThemes(topics))
      }
    }
  })
})
