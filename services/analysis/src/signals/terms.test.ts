import { describe, expect, it } from 'vitest'
import { casingOf, fingerprintOf, termsOf } from './terms.ts'

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

describe("a message's words by their case (signals-v73)", () => {
  const f = fingerprintOf
  it('keeps the words written wholly in capitals apart from those written in ordinary case, function words too', () => {
    expect(casingOf('yes i know its 72. ive paid it TWICE', 1000).capitals).toEqual([f('twice')])
    expect(casingOf('omg NO. two pizzas', 1000).capitals).toEqual([f('no')])
    expect(casingOf('LEEDS TRINITY. its literally on the order', 1000).capitals).toEqual([
      f('leeds'),
      f('trinity'),
    ])
    expect(casingOf('been charged £72 twice', 1000).cased).toContain(f('twice'))
    expect(casingOf('Leeds Trinity', 1000).cased).toEqual([f('leeds'), f('trinity')])
    expect(casingOf('Leeds Trinity', 1000).capitals).toEqual([])
  })

  it('reads no code, no single letter and no "OK" as capitals', () => {
    expect(
      casingOf('my promo code RIDE10 says expired, ref PT-4471, code IF-2291-KQ', 1000).capitals,
    ).toEqual([])
    expect(casingOf('I said A or B', 1000).capitals).toEqual([])
    expect(casingOf('OK good', 1000).capitals).toEqual([])
    expect(casingOf('OK good', 1000).cased).toContain(f('ok'))
    expect(casingOf("I DIDN'T cancel", 1000).capitals).toEqual([f("didn't")])
  })

  it('reads only the first characters it is given', () => {
    expect(casingOf('refund REFUND', 7)).toEqual({ capitals: [], cased: [f('refund')] })
  })
})
