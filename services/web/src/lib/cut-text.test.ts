import { describe, expect, it } from 'vitest'
import { countCharacters, cutText, MESSAGE_LIMITS, METADATA_LIMITS, shortText } from './cut-text.ts'

/** True when `text` has a surrogate half without its other half. */
const hasLoneSurrogate = (text: string) =>
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

const graphemesOf = (text: string) =>
  Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text), (s) => s.segment)

describe('cutting a long value for display', () => {
  it('leaves a value within the limits whole', () => {
    expect(cutText('Ada Lovelace', METADATA_LIMITS)).toEqual({
      shown: 'Ada Lovelace',
      cut: false,
      characters: 12,
    })
    expect(cutText('', METADATA_LIMITS)).toEqual({ shown: '', cut: false, characters: 0 })
    const exactly = 'x'.repeat(200)
    expect(cutText(exactly, METADATA_LIMITS)).toEqual({ shown: exactly, cut: false, characters: 200 })
    // 200 emoji are 400 code units but 200 characters: within the limit.
    const emoji = '😀'.repeat(200)
    expect(cutText(emoji, METADATA_LIMITS)).toEqual({ shown: emoji, cut: false, characters: 200 })
  })

  it('shows the first 200 characters of a 1,024-character name, and counts them all', () => {
    // Regression (issue 30): the whole value was shown, however long.
    const name = 'N'.repeat(1_024)
    expect(cutText(name, METADATA_LIMITS)).toEqual({ shown: 'N'.repeat(200), cut: true, characters: 1_024 })
  })

  it('shows the first 2,000 characters of a 30,000-character message', () => {
    const content = 'x'.repeat(30_000)
    const cut = cutText(content, MESSAGE_LIMITS)
    expect(cut.cut).toBe(true)
    expect(cut.shown).toBe('x'.repeat(2_000))
    expect(cut.characters).toBe(30_000)
  })

  it('cuts a message of many short lines after 30 of them', () => {
    const content = Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join('\n')
    const cut = cutText(content, MESSAGE_LIMITS)
    expect(cut.cut).toBe(true)
    expect(cut.shown.split('\n')).toHaveLength(30)
    expect(cut.shown.endsWith('line 30')).toBe(true)
    // Thirty lines exactly are not cut.
    const thirty = content.split('\n').slice(0, 30).join('\n')
    expect(cutText(thirty, MESSAGE_LIMITS)).toEqual({ shown: thirty, cut: false, characters: thirty.length })
  })

  it('does not cut when only whitespace would be left out', () => {
    const text = `${'y'.repeat(200)}   \n\n  `
    expect(cutText(text, METADATA_LIMITS).cut).toBe(false)
  })

  it('cuts between words when a word boundary is near the limit, and ends without whitespace', () => {
    const words = 'lorem ipsum dolor sit amet '.repeat(20)
    const cut = cutText(words, METADATA_LIMITS)
    expect(cut.cut).toBe(true)
    expect(words.startsWith(cut.shown)).toBe(true)
    expect(cut.shown).toMatch(/\S$/)
    expect(words[cut.shown.length]).toMatch(/\s/)
    expect(cut.shown.length).toBeGreaterThan(160)
    expect(cut.shown.length).toBeLessThanOrEqual(200)
  })

  it('cuts a long word where the limit is when no word boundary is near', () => {
    const text = `short ${'z'.repeat(500)}`
    expect(cutText(text, METADATA_LIMITS).shown).toBe(`short ${'z'.repeat(194)}`)
  })

  it('never splits a surrogate pair', () => {
    // Each emoji is two UTF-16 code units: cutting at 200 code units would be cutting at 100 characters,
    // and an odd offset would leave a lone surrogate (which issue 30's item 1 shows is poison).
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const text = `${prefix}${'😀'.repeat(600)}`
      const cut = cutText(text, METADATA_LIMITS)
      expect(cut.cut).toBe(true)
      expect(hasLoneSurrogate(cut.shown), `after ${JSON.stringify(prefix)}`).toBe(false)
      expect(countCharacters(cut.shown)).toBe(200)
      expect(cut.characters).toBe(prefix.length + 600)
    }
  })

  it('never splits a grapheme: an emoji with its skin tone, a family, a flag, accents', () => {
    const clusters = ['👍🏽', '👨‍👩‍👧‍👦', '🇫🇷', 'e\u0301\u0302', '🏳️‍🌈']
    for (const cluster of clusters) {
      for (let offset = 0; offset < 8; offset++) {
        const text = 'a'.repeat(offset) + cluster.repeat(300)
        const cut = cutText(text, METADATA_LIMITS)
        expect(cut.cut).toBe(true)
        expect(text.startsWith(cut.shown)).toBe(true)
        // What is shown is whole graphemes of the text: the last one is a whole cluster.
        const shownGraphemes = graphemesOf(cut.shown)
        expect(shownGraphemes.slice(offset), `${cluster} after ${offset}`).toEqual(
          Array(shownGraphemes.length - offset).fill(cluster),
        )
        expect(countCharacters(cut.shown)).toBeLessThanOrEqual(200)
        expect(countCharacters(cut.shown)).toBeGreaterThan(200 - countCharacters(cluster))
      }
    }
  })

  it('counts a lone surrogate as one character and keeps it as it is', () => {
    expect(countCharacters('\ud800x')).toBe(2)
    expect(countCharacters('x\udc00')).toBe(2)
    expect(countCharacters('😀\ud800😀')).toBe(3)
    const cut = cutText(`${'\ud800'.repeat(300)}`, METADATA_LIMITS)
    expect(cut.shown).toBe('\ud800'.repeat(200))
    expect(cut.characters).toBe(300)
  })

  it('leaves leading whitespace out rather than show nothing', () => {
    const text = `${'\n'.repeat(40)}${'hello '.repeat(600)}`
    const cut = cutText(text, MESSAGE_LIMITS)
    expect(cut.cut).toBe(true)
    expect(cut.shown.startsWith('hello')).toBe(true)
    // One grapheme longer than the limit: its start, by code points.
    const stacked = `e${'\u0301'.repeat(400)}`
    expect(cutText(stacked, METADATA_LIMITS).shown).toBe(stacked.slice(0, 200))
  })

  it('cuts a megabyte in a few milliseconds', () => {
    // Older data: before capture refused them, a 1 MB user.name was stored.
    const huge = 'é👍🏽 word '.repeat(100_000)
    const started = performance.now()
    const cut = cutText(huge, METADATA_LIMITS)
    expect(cut.cut).toBe(true)
    expect(cut.characters).toBe(900_000)
    expect(performance.now() - started).toBeLessThan(200)
  })
})

describe('a short form of a value, where the page links to the whole', () => {
  it('is the value when it fits, else its start with an ellipsis', () => {
    expect(shortText('Ada Lovelace', 80)).toBe('Ada Lovelace')
    expect(shortText('A'.repeat(1_024), 80)).toBe(`${'A'.repeat(80)}…`)
    expect(shortText(`Ada ${'👍🏽'.repeat(100)}`, 80)).toBe(`Ada ${'👍🏽'.repeat(38)}…`)
  })
})
