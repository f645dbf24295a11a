import { createRequire } from 'node:module'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compound, vaderRules, valenceSum } from './vader.ts'

const require = createRequire(import.meta.url)
const vaderPackage = (
  require('vader-sentiment') as {
    SentimentIntensityAnalyzer: { polarity_scores(text: string): { compound: number } }
  }
).SentimentIntensityAnalyzer
const rules = vaderRules()
const port = (text: string) => compound(valenceSum(text, rules))
const original = (text: string) => vaderPackage.polarity_scores(text).compound

describe('the VADER port with VADER’s own rules', () => {
  it('reads the whole lexicon of the package', () => {
    expect(rules.lexicon.size).toBeGreaterThan(7_000)
    for (const word of rules.lexicon.keys()) expect(port(word), word).toBe(original(word))
  })

  it('scores exactly as the vader-sentiment package, whatever the mix of its rules', () => {
    const lexiconWords = [...rules.lexicon.keys()]
    const word = fc.oneof(
      fc.constantFrom(...lexiconWords),
      // Negations, boosters and dampeners, idioms, "but", "least", "never so", capitals, contractions.
      fc.constantFrom(
        'not',
        "isn't",
        'never',
        'NEVER',
        'no',
        'very',
        'VERY',
        'kind',
        'of',
        'sort',
        'but',
        'BUT',
        'least',
        'at',
        'so',
        'this',
        'the',
        'shit',
        'bomb',
        'yeah',
        'right',
        'cut',
        'mustard',
        'it',
        'was',
        'GOOD',
        'BAD',
        'without',
        'despite',
        'nothing',
        'hardly',
        'just',
        'enough',
      ),
      fc.string({ unit: 'grapheme-ascii', maxLength: 6 }),
    )
    const punctuation = fc.constantFrom(
      '',
      '',
      '',
      '.',
      '!',
      '!!',
      '?',
      '??',
      '???',
      ',',
      ':',
      "'",
      '...',
      ' :)',
    )
    const text = fc
      .array(fc.tuple(word, punctuation), { maxLength: 14 })
      .map((parts) => parts.map(([w, p]) => w + p).join(' '))
    fc.assert(
      fc.property(text, (t) => port(t) === original(t)),
      { numRuns: 3_000, seed: 15 },
    )
  })

  it('gives text without words 0, as the package does', () => {
    for (const text of ['', ' ', '!!!', 'a b c', '\n\t']) expect(port(text)).toBe(original(text))
    expect(port('')).toBe(0)
  })
})

describe('the VADER port’s extension points', () => {
  const score = (text: string, extra: Partial<Parameters<typeof valenceSum>[1]>) =>
    compound(valenceSum(text, { ...rules, ...extra }))

  it('reads "no" before a sentiment word as its negation when asked to (vaderSentiment 3.3)', () => {
    expect(port('no errors')).toBeLessThan(0)
    expect(score('no errors', { negatingNo: true })).toBeGreaterThan(0)
    expect(score('no problems or errors', { negatingNo: true })).toBeGreaterThan(0)
    expect(score('no, that is wrong', { negatingNo: true })).toBeLessThan(0)
  })

  it('lets a word after a sentiment word intensify it, in its direction', () => {
    const afterBoosters = new Map([['again', 0.293]])
    expect(score('it failed again', { afterBoosters })).toBeLessThan(port('it failed again'))
    expect(score('thanks again', { afterBoosters })).toBeGreaterThan(port('thanks again'))
    expect(score('again', { afterBoosters })).toBe(0)
  })

  it('drops the sentiment of the 4 tokens after a hypothetical opener, not the rest', () => {
    const hypothetical = new Set(['if'])
    expect(score('what happens if my card is stolen?', { hypothetical })).toBe(0)
    expect(score('if I restart the phone the app is still terrible', { hypothetical })).toBeLessThan(0)
  })

  it('scores tokens a rewrite merged as one lexicon entry, with VADER’s negation and capitals', () => {
    const lexicon = new Map([...rules.lexicon, ['late_again', -2]])
    const rewrite = (tokens: string[]) => {
      const i = tokens.findIndex(
        (t, j) => t.toLowerCase() === 'late' && tokens[j + 1]?.toLowerCase() === 'again',
      )
      if (i === -1) return tokens
      const key = tokens[i] === 'LATE' ? 'LATE_AGAIN' : 'late_again'
      return [...tokens.slice(0, i), key, ...tokens.slice(i + 2)]
    }
    const merged = (text: string) => score(text, { lexicon, rewrite })
    expect(merged('the order is late again')).toBeLessThan(0)
    expect(merged('the order is not late again')).toBeGreaterThan(0)
    expect(merged('the order is LATE AGAIN')).toBeLessThan(merged('the order is late again'))
  })
})
