import { describe, expect, it } from 'vitest'
import { NOTICE_MIN_DETECTED, NOTICE_SHARE, showsLanguageNotice } from './language-notice.ts'

const figures = (detected: number, notEnglish: number) => ({
  detected,
  notEnglish,
  notEnglishShare: detected === 0 ? null : notEnglish / detected,
  mainOther: notEnglish === 0 ? null : { language: 'es', messages: notEnglish },
})

describe('showsLanguageNotice', () => {
  it('shows from a fifth of the detected messages not in English, over enough messages', () => {
    expect(showsLanguageNotice(figures(100, 100 * NOTICE_SHARE))).toBe(true)
    expect(showsLanguageNotice(figures(NOTICE_MIN_DETECTED, NOTICE_MIN_DETECTED))).toBe(true)
  })

  it("stays quiet for an English chatbot's detector noise, too few messages, or none detected", () => {
    // CLINC150's English queries: 3.3 % read as another language.
    expect(showsLanguageNotice(figures(4169, 139))).toBe(false)
    expect(showsLanguageNotice(figures(100, 100 * NOTICE_SHARE - 1))).toBe(false)
    expect(showsLanguageNotice(figures(NOTICE_MIN_DETECTED - 1, NOTICE_MIN_DETECTED - 1))).toBe(false)
    expect(showsLanguageNotice(figures(0, 0))).toBe(false)
    expect(showsLanguageNotice(undefined)).toBe(false)
  })
})
