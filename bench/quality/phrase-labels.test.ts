import { describe, expect, it } from 'vitest'
import {
  distinctChoices,
  mmrPhrases,
  phraseCandidates,
  phraseLabellers,
  rankByContrast,
} from './phrase-labels.ts'

const v = (...xs: number[]) => Float32Array.from(xs)

describe('phraseCandidates', () => {
  it('takes the terms two or more members use, the most used first, ties by term', () => {
    const terms = new Map([
      ['order', 3],
      ['track order', 3],
      ['parcel', 2],
      ['yesterday', 1],
    ])
    expect(phraseCandidates(terms)).toEqual(['order', 'track order', 'parcel'])
  })

  it('takes every term when none repeats', () => {
    expect(phraseCandidates(new Map([['refund', 1]]))).toEqual(['refund'])
  })
})

describe('rankByContrast', () => {
  const vectors = new Map([
    ['track order', v(1, 0, 0)],
    ['order', v(0.8, 0.6, 0)],
    ['parcel', v(0.6, 0, 0.8)],
  ])
  it('ranks by similarity to the centroid alone when mu is 0 (KeyBERT)', () => {
    expect(rankByContrast(['parcel', 'order', 'track order'], vectors, v(1, 0, 0), [v(0, 1, 0)], 0)).toEqual([
      'track order',
      'order',
      'parcel',
    ])
  })

  it('passes over a phrase as near another topic as its own when mu is high', () => {
    expect(rankByContrast(['order', 'parcel'], vectors, v(1, 0, 0), [v(0, 1, 0)], 1)).toEqual([
      'parcel',
      'order',
    ])
  })
})

describe('mmrPhrases', () => {
  const vectors = new Map([
    ['track order', v(1, 0, 0)],
    ['trace order', v(0.99, 0.14, 0)],
    ['late parcel', v(0.7, 0, 0.71)],
    ['order', v(0.9, 0.44, 0)],
  ])
  it('takes the nearest first, then one unlike it rather than a near copy, and never a word of a phrase taken', () => {
    expect(
      mmrPhrases(['order', 'trace order', 'late parcel', 'track order'], vectors, v(1, 0, 0), 2, 0.3),
    ).toEqual(['track order', 'late parcel'])
  })

  it('takes the near copy when lambda weighs only the centroid', () => {
    expect(mmrPhrases(['trace order', 'late parcel', 'track order'], vectors, v(1, 0, 0), 2, 1)).toEqual([
      'track order',
      'trace order',
    ])
  })
})

describe('distinctChoices', () => {
  it('lets the larger topic choose first and the smaller take its next choice, or its first numbered', () => {
    const topics = [{ size: 3 }, { size: 10 }, { size: 2 }]
    const ranked = [['card', 'lost card'], ['card'], ['card']]
    expect(distinctChoices(topics, ranked)).toEqual(['lost card', 'card', 'card (2)'])
  })
})

describe('phraseLabellers', () => {
  it('gives every labeller one label a topic, the phrase · terms one ending in the topic label', () => {
    const vectors = new Map([
      ['track order', v(1, 0)],
      ['reset password', v(0, 1)],
    ])
    const topics = [
      { centroid: v(1, 0), terms: new Map([['track order', 2]]), size: 2, label: 'order, track' },
      { centroid: v(0, 1), terms: new Map([['reset password', 2]]), size: 2, label: 'password, reset' },
    ]
    const labels = phraseLabellers(topics, vectors, [0, 0.5], [0.5])
    expect(labels.get('nearest phrase')).toEqual(['track order', 'reset password'])
    expect(labels.get('nearest phrase · three terms')).toEqual([
      'track order · order, track',
      'reset password · password, reset',
    ])
    expect(labels.get('contrast phrase, mu 0.5')).toEqual(['track order', 'reset password'])
    expect(labels.get('MMR two phrases, lambda 0.5')).toEqual(['track order', 'reset password'])
  })
})
