import { UNDETERMINED_LANGUAGE } from '@cas/events'
import { describe, expect, it } from 'vitest'
import { detectLanguage, LANGUAGE_MIN_LENGTH } from './language.ts'

describe('detectLanguage', () => {
  it('names the language of a sentence', () => {
    expect(detectLanguage('Hola, quiero cambiar la fecha de mi billete Madrid-Sevilla del viernes')).toBe(
      'es',
    )
    expect(detectLanguage('I was charged twice for my order and I want a refund please')).toBe('en')
    expect(detectLanguage('Ich möchte meine Bestellung stornieren, bitte helfen Sie mir')).toBe('de')
  })

  it('gives "und" to a text shorter than the minimum, counted in characters after trimming', () => {
    expect(detectLanguage('   muchas gracias   ')).toBe(UNDETERMINED_LANGUAGE)
    expect(detectLanguage('ok')).toBe(UNDETERMINED_LANGUAGE)
    expect(detectLanguage('')).toBe(UNDETERMINED_LANGUAGE)
    const emoji = '🙏'.repeat(LANGUAGE_MIN_LENGTH - 1)
    expect(detectLanguage(emoji)).toBe(UNDETERMINED_LANGUAGE)
  })

  it('gives "und" to a long text in no language', () => {
    expect(detectLanguage('1234567890 1234567890 1234567890')).toBe(UNDETERMINED_LANGUAGE)
  })
})
