/**
 * How far two readers agree on frustration (issue 32, helper agree1): a second reader's labels
 * (bench/data/signals/agreement/frustration-second-reader.json) joined by set and id with the development sets'
 * original labels, and Cohen's κ between them.
 */

import path from 'node:path'
import { OTHER_SIGNALS_SETS, SIGNALS_SET } from './signals.ts'
import { OLDER_HALF } from './signals-replay.ts'

/** One conversation as the second reader labelled it, with where it comes from (a file of bench/data/signals). */
export interface SecondReading {
  readonly key: string
  readonly set: string
  readonly id: string
  readonly frustration: boolean
  /** The end-user messages that show it, 0-based indices into the conversation's messages. */
  readonly messages: readonly number[]
  readonly sure: 'sure' | 'unsure'
  readonly why: string
}

/**
 * The sets (file names) of the older half; every other development set is the newer half. Derived from
 * signals-replay's OLDER_HALF (display names) through bench:signals' listing, so the two cannot drift apart.
 */
export const OLDER_SET_FILES: ReadonlySet<string> = new Set(
  [...OLDER_HALF].map((name) => {
    const file = name === 'development' ? SIGNALS_SET : OTHER_SIGNALS_SETS.find((s) => s.name === name)?.file
    if (file === undefined) throw new Error(`the older half names ${name}, which bench:signals does not list`)
    return path.basename(file, '.json')
  }),
)

export interface JoinedReading extends SecondReading {
  readonly half: 'older' | 'newer'
  /** The original author's label: frustration among the conversation's signals. */
  readonly original: boolean
}

/**
 * Each reading beside its conversation's original label. `signalsOf(set, id)` gives the original signals, or
 * undefined when the set has no such conversation, which is an error (a reading must name a real conversation).
 */
export function joinReadings(
  readings: readonly SecondReading[],
  signalsOf: (set: string, id: string) => readonly string[] | undefined,
): JoinedReading[] {
  const seen = new Set<string>()
  return readings.map((r) => {
    const where = `${r.set} ${r.id}`
    if (seen.has(where)) throw new Error(`${where} is read twice`)
    seen.add(where)
    const signals = signalsOf(r.set, r.id)
    if (signals === undefined) throw new Error(`${r.key}: no conversation ${r.id} in ${r.set}`)
    return {
      ...r,
      half: OLDER_SET_FILES.has(r.set) ? 'older' : 'newer',
      original: signals.includes('frustration'),
    }
  })
}

export interface Agreement {
  readonly n: number
  readonly agree: number
  /** Observed agreement, agree / n. */
  readonly share: number
  /** Cohen's κ: (observed − chance) / (1 − chance); NaN when chance agreement is 1 (both readers constant). */
  readonly kappa: number
  /** κ's standard error by Cohen's large-sample formula, √(p(1 − p) / (n (1 − chance)²)), p the observed share. */
  readonly se: number
}

/** Agreement and Cohen's κ of two readers' yes/no labels, given as pairs (first reader, second reader). */
export function agreement(pairs: readonly (readonly [boolean, boolean])[]): Agreement {
  const n = pairs.length
  if (n === 0) return { n, agree: 0, share: Number.NaN, kappa: Number.NaN, se: Number.NaN }
  const agree = pairs.filter(([a, b]) => a === b).length
  const share = agree / n
  const a = pairs.filter(([x]) => x).length / n
  const b = pairs.filter(([, y]) => y).length / n
  const chance = a * b + (1 - a) * (1 - b)
  if (chance === 1) return { n, agree, share, kappa: Number.NaN, se: Number.NaN }
  const kappa = (share - chance) / (1 - chance)
  return { n, agree, share, kappa, se: Math.sqrt((share * (1 - share)) / (n * (1 - chance) ** 2)) }
}

export interface PrecisionRecall {
  readonly tp: number
  readonly fp: number
  readonly fn: number
  readonly precision: number
  readonly recall: number
}

/** A detector's precision and recall against labels, given as pairs (label, detected). */
export function precisionRecall(pairs: readonly (readonly [boolean, boolean])[]): PrecisionRecall {
  const tp = pairs.filter(([l, d]) => l && d).length
  const fp = pairs.filter(([l, d]) => !l && d).length
  const fn = pairs.filter(([l, d]) => l && !d).length
  return {
    tp,
    fp,
    fn,
    precision: tp + fp === 0 ? Number.NaN : tp / (tp + fp),
    recall: tp + fn === 0 ? Number.NaN : tp / (tp + fn),
  }
}
