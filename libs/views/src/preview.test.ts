import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PREVIEW_CHARS, previewOf } from './preview.ts'

const codePoints = (s: string) => [...s].length

describe('previewOf', () => {
  it('keeps a short message as it is, on one line', () => {
    expect(previewOf('My order never came')).toBe('My order never came')
    expect(previewOf('  Hello,\n\n  my   order\tnever came  ')).toBe('Hello, my order never came')
  })

  it('has no preview for whitespace only', () => {
    expect(previewOf('')).toBeUndefined()
    expect(previewOf(' \n\t ')).toBeUndefined()
  })

  it(`cuts a long message to ${PREVIEW_CHARS} characters, the last an ellipsis`, () => {
    const long = 'word '.repeat(100)
    const preview = previewOf(long)!
    expect(codePoints(preview)).toBeLessThanOrEqual(PREVIEW_CHARS)
    expect(preview.endsWith('word…') || preview.endsWith('wor…') || preview.endsWith('…')).toBe(true)
    expect(preview.startsWith('word word')).toBe(true)
    // Exactly PREVIEW_CHARS characters are not cut.
    expect(previewOf('x'.repeat(PREVIEW_CHARS))).toBe('x'.repeat(PREVIEW_CHARS))
    expect(previewOf('x'.repeat(PREVIEW_CHARS + 1))).toBe(`${'x'.repeat(PREVIEW_CHARS - 1)}…`)
  })

  it('counts characters, not UTF-16 units: never splits an emoji', () => {
    const emoji = '😀'.repeat(PREVIEW_CHARS)
    expect(previewOf(emoji)).toBe(emoji)
    const cut = previewOf('😀'.repeat(PREVIEW_CHARS + 5))!
    expect(cut).toBe(`${'😀'.repeat(PREVIEW_CHARS - 1)}…`)
  })

  it('is well-formed Unicode, at most PREVIEW_CHARS characters, and a prefix of the line', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (content) => {
        const preview = previewOf(content)
        const line = content.replace(/\s+/gu, ' ').trim()
        if (line === '') {
          expect(preview).toBeUndefined()
        } else {
          expect(preview).toBeDefined()
          expect(preview!.isWellFormed()).toBe(true)
          expect(codePoints(preview!)).toBeLessThanOrEqual(PREVIEW_CHARS)
          if (preview !== line) {
            expect(preview!.endsWith('…')).toBe(true)
            expect(line.startsWith(preview!.slice(0, -1))).toBe(true)
          }
        }
      }),
    )
  })
})
