import { UNDETERMINED_LANGUAGE } from '@cas/events'
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

describe("terms of a message in another language than English (the message's language, language.ts)", () => {
  // trial6: winkNLP's English model tags Spanish articles as nouns, and a Spanish chatbot's topic was
  // labelled "el, la, tren" (bench/FINDINGS.md "A sixth trial").
  const spanish = 'Quiero cambiar la fecha de mi billete del tren de mañana'
  const german = 'Ich möchte meine Bestellung stornieren, die Lieferung ist nicht gekommen'

  it("leaves a Spanish message's function words out of its terms, and out of its pairs", () => {
    expect(words(extractor.terms(spanish))).toEqual(expect.arrayContaining(['la', 'mi', 'del']))
    const terms = extractor.terms(spanish, 'es')
    expect(terms).toEqual(expect.arrayContaining(['cambiar', 'fecha', 'billete', 'tren', 'mañana']))
    expect(words(terms).filter((w) => ['la', 'de', 'mi', 'del'].includes(w))).toEqual([])
  })

  it("leaves a German message's function words out of its terms", () => {
    expect(words(extractor.terms(german))).toEqual(expect.arrayContaining(['ich', 'meine', 'die', 'ist']))
    const terms = extractor.terms(german, 'de')
    expect(terms).toEqual(expect.arrayContaining(['bestellung', 'stornieren', 'lieferung']))
    expect(words(terms).filter((w) => ['ich', 'meine', 'die', 'ist', 'nicht'].includes(w))).toEqual([])
  })

  it('keeps English, an undetermined message and a language without a list as before', () => {
    for (const text of ['I want to reset my password', spanish, german]) {
      expect(extractor.terms(text, 'en'), text).toEqual(extractor.terms(text))
      expect(extractor.terms(text, UNDETERMINED_LANGUAGE), text).toEqual(extractor.terms(text))
      expect(extractor.terms(text, 'xx'), text).toEqual(extractor.terms(text))
    }
  })

  it('names a message of function words only by its first words, never by nothing', () => {
    expect(extractor.terms('¿y eso por qué?', 'es')).toEqual(['y eso por qué'])
    expect(extractor.terms('para el lunes', 'es')).toEqual(['lunes'])
  })

  it('takes the lists it is given: none leaves every word', () => {
    const englishOnly = createTermExtractor({})
    expect(englishOnly.terms(spanish, 'es')).toEqual(extractor.terms(spanish))
  })
})
