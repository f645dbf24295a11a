import { describe, expect, it } from 'vitest'
import { formatAverageSentiment, SENTIMENT_SCALE } from './format.ts'

describe('an average sentiment', () => {
  it('comes with its word, by the thresholds the API labels messages with', () => {
    // Regression: the figure read "0.00", with neither the scale nor what the number means.
    expect(formatAverageSentiment(0)).toBe('0.00 (neutral)')
    expect(formatAverageSentiment(0.62)).toBe('+0.62 (positive)')
    expect(formatAverageSentiment(-0.4)).toBe('\u22120.40 (negative)')
    // services/analysis/src/analyzer.ts labelFor: ≥ 0.05 positive, ≤ −0.05 negative, neutral between.
    expect(formatAverageSentiment(0.05)).toBe('+0.05 (positive)')
    expect(formatAverageSentiment(0.04)).toBe('+0.04 (neutral)')
    expect(formatAverageSentiment(-0.05)).toBe('\u22120.05 (negative)')
    expect(formatAverageSentiment(null)).toBe('\u2014')
  })

  it('is shown with its scale', () => {
    expect(SENTIMENT_SCALE).toBe('on a scale from \u22121 (negative) to +1 (positive)')
  })
})
