import { describe, expect, it } from 'vitest'
import { seededRandom } from '../support/random.ts'
import { candidateKs, kmeansBySilhouette, meanSilhouette, sampleSimilarities } from './silhouette.ts'

const unit = (xs: number[]) => {
  const n = Math.hypot(...xs)
  return Float32Array.from(xs.map((x) => x / n))
}

describe('meanSilhouette', () => {
  it('matches a hand computation on four points', () => {
    // Unit vectors at 0°, 10°, 90°, 100°: within a pair distance 2 sin 5°, across 2 sin 40° or 2 sin 45° or 2 sin 50°.
    const deg = (d: number) => unit([Math.cos((d * Math.PI) / 180), Math.sin((d * Math.PI) / 180)])
    const vectors = [deg(0), deg(10), deg(90), deg(100)]
    const chord = (d: number) => 2 * Math.sin((d * Math.PI) / 360)
    const a = chord(10)
    const s0 = (b: number) => (b - a) / b
    const expected = (s0((chord(90) + chord(100)) / 2) + s0((chord(80) + chord(90)) / 2)) / 2
    const sims = sampleSimilarities(vectors, { sampleSize: 4, seed: 1 })
    expect(meanSilhouette(sims, [0, 0, 1, 1])).toBeCloseTo(expected, 6)
    expect(meanSilhouette(sims, [0, 1, 0, 1])).toBeLessThan(0)
  })
})

describe('kmeansBySilhouette', () => {
  it('finds the number of well separated groups without being told it', () => {
    const random = seededRandom(3)
    const centres = Array.from({ length: 5 }, () => Array.from({ length: 16 }, () => random() - 0.5))
    const vectors = Array.from({ length: 200 }, (_, i) =>
      unit(centres[i % 5]!.map((x) => x + (random() - 0.5) * 0.05)),
    )
    const choice = kmeansBySilhouette(vectors, { seed: 2 })
    expect(choice.k).toBe(5)
    expect(candidateKs(200)).toContain(5)
  })

  it('draws its candidates from the number of items only', () => {
    expect(candidateKs(913).at(-1)).toBeLessThanOrEqual(91)
    expect(candidateKs(4500).at(-1)).toBeLessThanOrEqual(450)
    expect(candidateKs(4500).at(-1)).toBeGreaterThan(300)
  })
})
