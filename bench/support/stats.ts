/** Latency summary of a set of samples, in milliseconds. */
export interface Latency {
  readonly count: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly max: number
}

/** The value at quantile `q` (0..1) of ascending `sorted` samples (nearest rank); NaN when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil(q * sorted.length) - 1
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!
}

export function summarize(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
  }
}

/** Seconds `fn` took. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1e9
}

/** Milliseconds since `start` (a process.hrtime.bigint()). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
