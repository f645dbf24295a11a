import { describe, expect, it } from 'vitest'
import { createLabelAgreement, intentWords } from './label-agreement.ts'

describe('intentWords', () => {
  it('splits camel case and snake case names into words', () => {
    expect(intentWords('GetQuote')).toEqual(['get', 'quote'])
    expect(intentWords('RequestProofOfInsurance')).toEqual(['request', 'proof', 'of', 'insurance'])
    expect(intentWords('card_declined')).toEqual(['card', 'declined'])
    expect(intentWords('what_is_your_name')).toEqual(['what', 'is', 'your', 'name'])
  })
})

describe('label agreement', () => {
  const agreement = createLabelAgreement()

  it("counts a topic whose label shares a stem with its majority intent's name, whatever the inflection", () => {
    const result = agreement([
      { label: 'quotes, car, insurance', memberIntents: ['GetQuote', 'GetQuote', 'FileClaim'] },
      { label: 'declining card', memberIntents: ['card_declined'] },
      { label: 'weather, rain', memberIntents: ['FileClaim', 'FileClaim', 'GetQuote'] },
    ])
    expect(result.agreeing).toBe(2)
    expect(result.share).toBeCloseTo(2 / 3, 12)
    expect(result.disagreeing).toEqual([{ label: 'weather, rain', intent: 'FileClaim' }])
  })

  it('does not count a shared stop word', () => {
    expect(agreement([{ label: 'is it raining', memberIntents: ['what_is_your_name'] }]).agreeing).toBe(0)
  })
})
