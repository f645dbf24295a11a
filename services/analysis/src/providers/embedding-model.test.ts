import { mean_pooling, Tensor } from '@huggingface/transformers'
import { describe, expect, it } from 'vitest'
import { seededRandom } from '../seeded-random.ts'
import { meanPooledNormalized, meanPooledNormalizedAlone } from './embedding-model.ts'

describe('the sentence embeddings of a batch (mean pooling, then L2 norm)', () => {
  it('are bit for bit those of Transformers.js, padded texts included', () => {
    const random = seededRandom(7)
    const [batch, tokens, dim] = [5, 13, 384]
    const hidden = Float32Array.from({ length: batch * tokens * dim }, () => (random() - 0.5) * 4)
    // Texts of 13, 9, 4, 1 and 11 tokens, padded at the end as the tokenizer pads them.
    const lengths = [13, 9, 4, 1, 11]
    const mask = BigInt64Array.from({ length: batch * tokens }, (_, i) =>
      i % tokens < lengths[Math.floor(i / tokens)]! ? 1n : 0n,
    )
    const expected = mean_pooling(
      new Tensor('float32', hidden, [batch, tokens, dim]),
      new Tensor('int64', mask, [batch, tokens]),
    ).normalize(2, -1).data as Float32Array
    const pooled = meanPooledNormalized(
      { data: hidden, dims: [batch, tokens, dim] },
      { data: mask, dims: [batch, tokens] },
    )
    expect(pooled).toHaveLength(batch)
    for (const [row, vector] of pooled.entries()) {
      expect(vector).toEqual(expected.slice(row * dim, (row + 1) * dim))
      // Not merely close: the same float32 values.
      expect(vector.every((x, k) => Object.is(x, expected[row * dim + k]))).toBe(true)
    }
  })
})

describe('the sentence embedding of one text run alone (no padding, no mask read)', () => {
  it('is bit for bit that of Transformers.js and of the batch pooling with a mask of ones', () => {
    const random = seededRandom(11)
    const dim = 384
    for (const tokens of [1, 2, 7, 31, 128]) {
      const hidden = Float32Array.from({ length: tokens * dim }, () => (random() - 0.5) * 6)
      const mask = new BigInt64Array(tokens).fill(1n)
      const expected = mean_pooling(
        new Tensor('float32', hidden, [1, tokens, dim]),
        new Tensor('int64', mask, [1, tokens]),
      ).normalize(2, -1).data as Float32Array
      const batched = meanPooledNormalized(
        { data: hidden, dims: [1, tokens, dim] },
        { data: mask, dims: [1, tokens] },
      )[0]!
      const alone = meanPooledNormalizedAlone({ data: hidden, dims: [1, tokens, dim] })
      expect(alone.every((x, k) => Object.is(x, expected[k]))).toBe(true)
      expect(alone.every((x, k) => Object.is(x, batched[k]))).toBe(true)
    }
  })

  it('refuses the states of more than one text', () => {
    expect(() => meanPooledNormalizedAlone({ data: new Float32Array(2 * 3 * 4), dims: [2, 3, 4] })).toThrow(
      /one text/,
    )
  })
})
