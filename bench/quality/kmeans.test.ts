import { describe, expect, it } from 'vitest'
import { dense, kmeans, tfidf } from './kmeans.ts'
import { normalizedMutualInformation } from './metrics.ts'

describe('the k-means baselines', () => {
  it('separates texts about different things by their TF-IDF vectors', () => {
    const texts = [
      'reset my password',
      'forgot password reset link',
      'password reset please',
      'where is my parcel delivery',
      'parcel delivery late',
      'track parcel delivery',
    ]
    const labels = kmeans(tfidf(texts), 2, { seed: 7 })
    expect(normalizedMutualInformation(['p', 'p', 'p', 'd', 'd', 'd'], labels.map(String))).toBeCloseTo(1, 10)
  })

  it('clusters dense unit vectors, and the same seed gives the same clusters', () => {
    const v = (x: number, y: number) => {
      const n = Math.hypot(x, y)
      return Float32Array.from([x / n, y / n])
    }
    const data = dense([v(1, 0.1), v(1, 0), v(0.9, 0.1), v(0, 1), v(0.1, 1), v(0.1, 0.9)])
    const a = kmeans(data, 2, { seed: 3 })
    expect(new Set(a.slice(0, 3)).size).toBe(1)
    expect(new Set(a.slice(3)).size).toBe(1)
    expect(a[0]).not.toBe(a[3])
    expect(kmeans(data, 2, { seed: 3 })).toEqual(a)
  })
})
