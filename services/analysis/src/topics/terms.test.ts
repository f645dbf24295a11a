import { describe, expect, it } from 'vitest'
import { createTermExtractor } from './terms.ts'

const extractor = createTermExtractor()
const words = (terms: readonly string[]) => terms.flatMap((t) => t.split(' '))

describe('terms', () => {
  it('takes content words by their lemma, and pairs of adjacent ones', () => {
    expect(extractor.terms('I want to reset my password')).toEqual(['reset', 'password', 'reset password'])
    expect(extractor.terms('cancelling my order')).toEqual(['cancel', 'order', 'cancel order'])
  })

  it('never takes a pronoun fused with its auxiliary, with or without its apostrophe', () => {
    // Regression: winkNLP reads "i'm" as one proper noun and "im" as a noun, neither a stop word; "I'm
    // waiting to pay" gave the terms "i'm" and "i'm wait", and a theme was labelled "Pay, i'm".
    for (const text of [
      "I'm waiting to pay",
      'i’m waiting to pay',
      'im waiting to pay',
      "Pay, i'm waiting",
    ]) {
      const terms = extractor.terms(text)
      expect(terms, text).toContain('pay')
      expect(terms, text).toContain('wait')
      expect(
        words(terms).filter((w) => /^i['’]?m$/.test(w)),
        text,
      ).toEqual([])
    }
    // The contractions winkNLP splits were never terms.
    for (const text of ["it's not working", "don't charge me", "you're useless"])
      expect(
        words(extractor.terms(text)).filter((w) => /['’]|^(it|do|not|you|are|is)$/.test(w)),
        text,
      ).toEqual([])
  })

  it('keeps a word with an apostrophe whose first part is a content word', () => {
    expect(extractor.contentTerms("yes ma'am, the rock'n'roll tickets")).toEqual(
      expect.arrayContaining(["ma'am", "rock'n'roll"]),
    )
  })

  it('names a text without a content word by its first words', () => {
    expect(extractor.terms('who are you')).toEqual(['who are you'])
    expect(extractor.contentTerms('who are you')).toEqual([])
    expect(extractor.terms('12345')).toEqual([])
  })

  it('names a request whose every word is a stop word by its noun or verb, not its first words', () => {
    // Regression (issue 31 item 5): winkNLP flags every word of "is there someone I can call?" as a stop
    // word, "call" too, so the topic was named by its first four words, "is there someone i".
    expect(extractor.terms('is there someone I can call?')).toEqual(['call'])
    expect(extractor.contentTerms('is there someone I can call?')).toEqual([])
    // Nouns and adjectives first, as for the words NOT_TOPICAL passes over.
    expect(extractor.terms('what is your name')).toEqual(['name'])
    // Still no pronoun or auxiliary: such a text keeps its first words.
    expect(extractor.terms('is anyone there?')).toEqual(['is anyone there'])
  })
})
