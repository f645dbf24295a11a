import { describe, expect, it } from 'vitest'
import { nearBestNote, sweepNote } from './anchors.ts'
import { scoreClustering } from './metrics.ts'
import type { SilhouetteChoice } from './silhouette.ts'

const choice = (over: Partial<SilhouetteChoice>): SilhouetteChoice => ({
  k: 4,
  labels: [],
  scores: [2, 3, 4, 5].map((k) => ({ k, silhouette: k / 10 })),
  extended: [],
  atBound: false,
  standardError: 0.01,
  nearBest: [4],
  nearBestLabels: new Map(),
  ...over,
})

describe('the silhouette anchor in the report', () => {
  it('says whether the chosen k is a maximum inside the sweep or where the sweep stopped', () => {
    expect(sweepNote(choice({}), 50)).toContain('the best, k = 4, lies inside it')
    const stopped = sweepNote(choice({ k: 10, atBound: true, extended: [6, 7, 8, 10] }), 50)
    expect(stopped).toContain('extended past n / 10 = 5 to 6, 7, 8, 10')
    expect(stopped).toContain('is an end of the sweep (bound n / 5 = 10)')
    expect(sweepNote(choice({ k: 2, atBound: true }), 50)).toContain('(its least k)')
  })

  it('scores the ks within two standard errors of the best, against the intents', () => {
    const intents = ['a', 'a', 'b', 'b']
    const near = choice({
      nearBest: [2, 4],
      nearBestLabels: new Map([
        [2, [0, 0, 1, 1]],
        [4, [0, 1, 2, 3]],
      ]),
    })
    const note = nearBestNote(near, (labels) => scoreClustering(intents, labels.map(String)))
    expect(note).toContain(
      '2 ks tried are within two standard errors (0.0200) of the best silhouette, k = 2, 4',
    )
    expect(note).toContain('ACC 0.500–1.000')
    expect(nearBestNote(choice({}), () => scoreClustering(intents, intents))).toBe(
      'No other k tried is within two standard errors (0.0200) of the best silhouette',
    )
  })
})
