import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSentimentScorer, MAX_SCORED_CHARS, SENTIMENT_VERSION } from './sentiment.ts'

const scorer = createSentimentScorer()

describe('sentiment: properties', () => {
  it('is 0 for empty and blank text', () => {
    for (const text of ['', ' ', '\n\t', '!!!', '?']) expect(scorer.score(text)).toBe(0)
  })

  it('stays in −1..1 and gives the same score every time, from any scorer, for any text', () => {
    const other = createSentimentScorer()
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 200 }),
          fc.string({ unit: 'binary', maxLength: 200 }),
          fc
            .array(
              fc.constantFrom('not', 'still', 'crashes', 'again', 'if', 'no', "can't", 'log', 'in', 'GREAT'),
            )
            .map((words) => words.join(' ')),
        ),
        (text) => {
          const score = scorer.score(text)
          expect(Math.abs(score)).toBeLessThanOrEqual(1)
          expect(scorer.score(text)).toBe(score)
          expect(other.score(text)).toBe(score)
        },
      ),
      { numRuns: 500, seed: 15 },
    )
  })

  it('scores long text by its first MAX_SCORED_CHARS characters', () => {
    const head = 'The refund arrived. '.repeat(MAX_SCORED_CHARS / 20)
    expect(head).toHaveLength(MAX_SCORED_CHARS)
    expect(scorer.score(`${head}This is terrible!!!`)).toBe(scorer.score(head))
  })

  it('versions itself by the libraries', () => {
    expect(SENTIMENT_VERSION).toMatch(
      /^vader-sentiment@\d+\.\d+\.\d+\+wink-nlp@\d+\.\d+\.\d+\+wink-eng-lite-web-model@\d+\.\d+\.\d+$/,
    )
  })
})
