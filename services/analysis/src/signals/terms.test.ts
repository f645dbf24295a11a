import { describe, expect, it } from 'vitest'
import { termsOf } from './terms.ts'

describe("a message's content words (signals-v45)", () => {
  it('keeps the content words, not the function words, each once, whatever the case', () => {
    expect(termsOf('what time do you open on saturday?', 1000)).toHaveLength(3) // time, open, saturday
    expect(termsOf('And what is it then?', 1000)).toEqual([])
    expect(termsOf('Open, OPEN, open.', 1000)).toEqual(termsOf('open', 1000))
  })

  it('gives a plural and its singular, and a possessive, the same fingerprint', () => {
    expect(termsOf('Saturdays', 1000)).toEqual(termsOf('saturday', 1000))
    expect(termsOf('batteries', 1000)).toEqual(termsOf('battery', 1000))
    expect(termsOf("the hotel's pool", 1000)).toEqual(termsOf('hotel pool', 1000))
    expect(termsOf('glass', 1000)).not.toEqual(termsOf('glas', 1000))
  })

  it('reads only the first characters it is given', () => {
    expect(termsOf('parking refund', 7)).toEqual(termsOf('parking', 1000))
  })
})
