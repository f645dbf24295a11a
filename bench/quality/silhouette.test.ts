import { describe, expect, it } from 'vitest'
import { seededRandom } from '../support/random.ts'
import {
  candidateKs,
  kmeansBySilhouette,
  meanSilhouette,
  sampledSilhouette,
  sampleSimilarities,
  sweepBound,
} from './silhouette.ts'

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
    // Items 0 and 1 score the first value, items 2 and 3 the second: the standard error of their mean.
    const items = [s0((chord(90) + chord(100)) / 2), s0((chord(80) + chord(90)) / 2)]
    const sd = Math.abs(items[0]! - items[1]!) * Math.sqrt(4 / 4 / 3) // sample sd of [x, x, y, y]
    expect(sampledSilhouette(sims, [0, 0, 1, 1]).standardError).toBeCloseTo(sd / 2, 6)
  })
})

/** n unit vectors in `groups` tight groups around random centres (16 dimensions). */
function grouped(n: number, groups: number, seed: number): Float32Array[] {
  const random = seededRandom(seed)
  const centres = Array.from({ length: groups }, () => Array.from({ length: 16 }, () => random() - 0.5))
  return Array.from({ length: n }, (_, i) =>
    unit(centres[i % groups]!.map((x) => x + (random() - 0.5) * 0.05)),
  )
}

describe('kmeansBySilhouette', () => {
  it('finds the number of well separated groups without being told it', () => {
    const choice = kmeansBySilhouette(grouped(200, 5, 3), { seed: 2 })
    expect(choice.k).toBe(5)
    expect(candidateKs(200)).toContain(5)
    expect(choice.extended).toEqual([])
    expect(choice.atBound).toBe(false)
    expect(choice.nearBest).toContain(5)
  })

  it('goes on past n / 10 while the best is the last k tried, and finds a maximum there', () => {
    // 30 groups in 200 items: candidateKs(200) ends at 20, where the curve still rises.
    const choice = kmeansBySilhouette(grouped(200, 30, 4), { seed: 2 })
    expect(Math.max(...candidateKs(200))).toBeLessThan(30)
    expect(choice.extended[0]).toBeGreaterThan(Math.max(...candidateKs(200)))
    expect(Math.max(...choice.extended)).toBeGreaterThan(30)
    expect(choice.k).toBe(30)
    expect(choice.atBound).toBe(false)
    expect(choice.nearBest).toContain(30)
    expect(choice.nearBestLabels.get(30)).toHaveLength(200)
  })

  it('says so when the best k is where the sweep stopped, at its bound', () => {
    // 50 pairs in 100 items: the curve rises up to the bound, n / 5 = 20.
    const choice = kmeansBySilhouette(grouped(100, 50, 5), { seed: 2 })
    expect(sweepBound(100)).toBe(20)
    expect(choice.k).toBe(20)
    expect(Math.max(...choice.scores.map((s) => s.k))).toBe(20)
    expect(choice.atBound).toBe(true)
  })

  it('draws its candidates from the number of items only', () => {
    expect(candidateKs(913).at(-1)).toBeLessThanOrEqual(91)
    expect(candidateKs(4500).at(-1)).toBeLessThanOrEqual(450)
    expect(candidateKs(4500).at(-1)).toBeGreaterThan(300)
  })
})
