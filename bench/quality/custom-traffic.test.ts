import { describe, expect, it } from 'vitest'
import { trafficFolds } from './custom-traffic.ts'

describe('trafficFolds', () => {
  for (const leaveOneOut of [false, true]) {
    it(`scores each message once, never against itself, with positives in the traffic (${leaveOneOut ? 'leave one out' : 'halves'})`, () => {
      const positives = ['p0', 'p1', 'p2', 'p3', 'p4']
      const negatives = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5']
      const folds = trafficFolds(positives, negatives, leaveOneOut)
      const scored = folds.flatMap((f) => f.scored.map((m) => m.item))
      expect(scored.toSorted()).toEqual([...positives, ...negatives].toSorted())
      for (const f of folds) {
        for (const m of f.scored) expect(f.traffic.map((t) => t.item)).not.toContain(m.item)
        expect(f.traffic.some((t) => t.positive)).toBe(true)
        expect(f.traffic.some((t) => !t.positive)).toBe(true)
        for (const m of [...f.scored, ...f.traffic]) expect(m.positive).toBe(m.item.startsWith('p'))
      }
    })
  }

  it('halves by position within the positives and within the negatives', () => {
    const [a, b] = trafficFolds(['p0', 'p1', 'p2'], ['n0', 'n1', 'n2', 'n3'], false)
    expect(a!.traffic.map((m) => m.item)).toEqual(['p0', 'p2', 'n0', 'n2'])
    expect(a!.scored.map((m) => m.item)).toEqual(['p1', 'n1', 'n3'])
    expect(b!.traffic.map((m) => m.item)).toEqual(['p1', 'n1', 'n3'])
  })
})
