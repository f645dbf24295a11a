import { describe, expect, it } from 'vitest'
import { retry, retryDelayMs } from './retry.ts'

const policy = { baseMs: 100, maxMs: 1_000, jitter: 'none' } as const

describe('retryDelayMs', () => {
  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => retryDelayMs(policy, n))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ])
  })

  it('full jitter spreads a wait over [0, wait); equal jitter over [wait/2, wait)', () => {
    const full = { ...policy, jitter: 'full' } as const
    const equal = { ...policy, jitter: 'equal' } as const
    expect(retryDelayMs(full, 2, () => 0)).toBe(0)
    expect(retryDelayMs(full, 2, () => 0.5)).toBe(200)
    expect(retryDelayMs(equal, 2, () => 0)).toBe(200)
    expect(retryDelayMs(equal, 2, () => 0.5)).toBe(300)
  })
})

describe('retry', () => {
  it('tries again after each failure, waiting the policy delays, until it succeeds', async () => {
    const waits: number[] = []
    let calls = 0
    const result = await retry(
      policy,
      async (attempt) => {
        calls++
        if (attempt < 3) throw new Error(`failure ${attempt}`)
        return 'done'
      },
      { sleep: async (ms) => void waits.push(ms) },
    )
    expect(result).toBe('done')
    expect(calls).toBe(4)
    expect(waits).toEqual([100, 200, 400])
  })

  it('gives up with the last failure once its retries are spent', async () => {
    const waits: number[] = []
    let calls = 0
    await expect(
      retry(
        { ...policy, retries: 2 },
        async () => {
          throw new Error(`failure ${calls++}`)
        },
        { sleep: async (ms) => void waits.push(ms) },
      ),
    ).rejects.toThrow('failure 2')
    expect(waits).toEqual([100, 200])
  })

  it('throws a failure that is not retryable at once', async () => {
    const seen: unknown[] = []
    await expect(
      retry(
        policy,
        async () => {
          throw new Error('bad input')
        },
        { retryable: () => false, onRetry: (err) => seen.push(err), sleep: async () => {} },
      ),
    ).rejects.toThrow('bad input')
    expect(seen).toEqual([])
  })
})
