import { describe, expect, it } from 'vitest'
import { normalizedMutualInformation } from './metrics.ts'

describe('normalizedMutualInformation', () => {
  it('is 1 for the same partition under other names, 0 for independent ones', () => {
    expect(normalizedMutualInformation(['a', 'a', 'b', 'b'], ['x', 'x', 'y', 'y'])).toBeCloseTo(1, 12)
    expect(normalizedMutualInformation(['a', 'a', 'b', 'b'], ['x', 'y', 'x', 'y'])).toBeCloseTo(0, 12)
  })

  it("matches scikit-learn's value on an uneven example", () => {
    // sklearn.metrics.normalized_mutual_info_score([0,0,0,1,1,2], [0,0,1,1,2,2]) = 0.5206652463984818
    const value = normalizedMutualInformation(['0', '0', '0', '1', '1', '2'], ['0', '0', '1', '1', '2', '2'])
    expect(value).toBeCloseTo(0.5206652463984818, 10)
  })
})
