/** The benchmarks' seeded PRNG: the service's own, so that a benchmark's data and choices are the same every run. */
import { seededRandom } from '../../services/analysis/src/seeded-random.ts'

export { seededRandom }

/** A copy of `xs` in the order a Fisher–Yates shuffle with `seededRandom(seed)` gives: the same every run. */
export function seededShuffle<T>(xs: readonly T[], seed: number): T[] {
  const random = seededRandom(seed)
  const out = [...xs]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}
