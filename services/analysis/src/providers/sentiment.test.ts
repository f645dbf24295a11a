import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { labelFor } from '../analyzer.ts'
import { createSentimentScorer, MAX_SCORED_CHARS, SENTIMENT_VERSION } from './sentiment.ts'

const scorer = createSentimentScorer()
const vaderAlone = createSentimentScorer({ rules: 'vader' })
const label = (text: string) => labelFor(scorer.score(text))

const ISSUE_COMPLAINTS = [
  'the app crashes when I upload a photo',
  'my order is late again',
  'still not working',
  'this is useless',
]

describe('sentiment: support complaints read negative', () => {
  it.each(ISSUE_COMPLAINTS)('scores %j negative', (text) => {
    expect(label(text)).toBe('negative')
  })

  it('reads negative what VADER alone scored 0: three of the issue’s four complaints (issue 15)', () => {
    expect(ISSUE_COMPLAINTS.map((text) => vaderAlone.score(text))).toEqual([0, 0, 0, expect.any(Number)])
    expect(ISSUE_COMPLAINTS.map(label)).toEqual(['negative', 'negative', 'negative', 'negative'])
  })

  it.each([
    "I can't log in",
    'Why can’t I even log in?',
    'the page won’t load',
    "it doesn't work",
    'the transfer still hasn’t arrived',
    'I never received my order',
    'I was charged twice for the same purchase',
    'the app keeps logging me out',
    "I've been on hold for 45 minutes",
    "it's been 3 weeks",
    'this bank is a joke',
    'the export button is greyed out',
    'IT DOES NOT WORK',
  ])('scores the support phrase in %j negative', (text) => {
    expect(label(text)).toBe('negative')
  })

  it('keeps VADER’s rules working on the support words: negation, boosters, capitals, "but", "again"', () => {
    const score = scorer.score
    expect(score('still not working')).toBeLessThan(score('not working'))
    expect(score('the app keeps crashing')).toBeLessThan(score('the app is crashing'))
    expect(score('the app CRASHES on start')).toBeLessThan(score('the app crashes on start'))
    expect(score('my order is late again')).toBeLessThan(score('my order is late'))
    expect(score('the app is fast but it crashes')).toBeLessThan(0)
    expect(score('it crashed once but support fixed it, thanks')).toBeGreaterThan(0)
  })
})

describe('sentiment: changes nobody announced, and leaving (issue 32)', () => {
  it.each([
    "That's a pretty big increase without warning",
    'the price went up without any notice',
    'you changed my plan without asking me',
    'they closed my account without my permission',
    "I'm thinking of shopping elsewhere",
    'I will take my business elsewhere',
  ])('scores %j negative', (text) => {
    expect(label(text)).toBe('negative')
  })

  it('keeps "without" a negation elsewhere, and a price increase asked for neutral', () => {
    expect(scorer.score('it works without problems')).toBeGreaterThan(0)
    expect(scorer.score('can you increase my spending limit?')).toBe(0)
  })
})

describe('sentiment: what is not a complaint', () => {
  it.each([
    'it is not broken',
    'no errors anymore',
    "Awesome, it's not crashing anymore",
    'No more crashes! Thank you',
    'the app does not crash since the update',
  ])('does not score the negated complaint %j negative', (text) => {
    expect(scorer.score(text)).toBeGreaterThanOrEqual(0)
  })

  it.each([
    'how do I reset my password?',
    'I want to change my plan',
    'can I pay by card?',
    'Can I cancel my order?',
    'How do I freeze my card temporarily?',
    'How do I log out on all devices?',
    'Please update my shipping address',
    'what happens if a payment fails?',
    'What should I do if my package arrives damaged?',
    'Where is my order?',
  ])('scores the request %j neutral', (text) => {
    expect(scorer.score(text)).toBe(0)
  })
})

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

  it('versions itself by the libraries and the support rules', () => {
    expect(SENTIMENT_VERSION).toMatch(
      /^vader-sentiment@\d+\.\d+\.\d+\+wink-nlp@\d+\.\d+\.\d+\+wink-eng-lite-web-model@\d+\.\d+\.\d+\+support-v\d+$/,
    )
  })
})
