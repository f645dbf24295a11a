/**
 * The signals decided again from conversations scored once (bench/signals-replay.ts): the rules of
 * services/analysis/src/signals/detect.ts run over stored cues and vectors, with some of THRESHOLDS set to other
 * values, so that a constant is swept in seconds instead of scoring every set with the model each time. Errors
 * are counted on the two halves a rule is chosen on and confirmed on (bench/FINDINGS.md): the older development
 * sets and the newer ones.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { MessageCues } from '../../services/analysis/src/signals/cues.ts'
import { BUILTIN_SIGNALS, THRESHOLDS } from '../../services/analysis/src/signals/detect.ts'
import { loadSignalsSet, OTHER_SIGNALS_SETS, SIGNALS_SET, signalsFound } from './signals.ts'

/** Where bench/signals-replay.ts --score keeps the development sets' scored conversations (never a blind set). */
export const REPLAY_STORE = path.resolve(import.meta.dirname, '../.cache/signals-replay.json')

/** The store REPLAY_STORE holds: the rules' version it was scored at, and the conversations. */
export interface ReplayStore {
  readonly version: number
  readonly conversations: ScoredConversation[]
}

export function loadReplayStore(): ReplayStore {
  return JSON.parse(readFileSync(REPLAY_STORE, 'utf8'))
}

/** Each development set's conversations' messages (role, text), by the store's key: `${set} ${id}`. */
export function developmentTexts(): Map<string, readonly (readonly [string, string])[]> {
  const texts = new Map<string, readonly (readonly [string, string])[]>()
  for (const set of [
    { name: 'development', file: SIGNALS_SET },
    ...OTHER_SIGNALS_SETS.filter((s) => !s.blind),
  ])
    for (const c of loadSignalsSet(set.file)) texts.set(`${set.name} ${c.id}`, c.messages)
  return texts
}

/** A labelled conversation with each message's cues and vector, as scored by bench/signals-replay.ts --score. */
export interface ScoredConversation {
  readonly set: string
  readonly id: string
  readonly labels: readonly string[]
  readonly messages: readonly {
    readonly role: 'user' | 'assistant'
    readonly cues?: MessageCues | undefined
    readonly vector?: readonly number[] | undefined
  }[]
}

/** The built-in signals the rules (at THRESHOLDS as they stand) find in a conversation of the store. */
export function storedSignalsFound(c: ScoredConversation): Set<string> {
  return signalsFound(
    c.messages.map((m) => m.role),
    c.messages.map((m) =>
      m.cues === undefined || m.vector === undefined
        ? undefined
        : { cues: m.cues, vector: Float32Array.from(m.vector) },
    ),
  )
}

/** The sets of the older half; every other set is the newer half. */
export const OLDER_HALF: ReadonlySet<string> = new Set([
  'development',
  'held out',
  'confirmation',
  'fresh',
  'fresh2',
  'fresh3',
  'fresh4',
  'fresh5',
  'fresh6',
])

export type Threshold = keyof typeof THRESHOLDS

export interface ReplayError {
  readonly half: 'older' | 'newer'
  readonly set: string
  readonly id: string
  readonly signal: string
  readonly kind: 'fp' | 'fn'
}

export interface SignalCounts {
  tp: number
  fp: number
  fn: number
}

export interface Replay {
  /** Per half, per built-in signal. */
  readonly counts: Record<'older' | 'newer', Record<string, SignalCounts>>
  readonly errors: ReplayError[]
}

/** Reads `name=value` as a threshold the rules know, or throws. */
export function parseThreshold(text: string): [Threshold, number] {
  const [name, value, ...rest] = text.split('=')
  const number = Number(value)
  if (rest.length > 0 || value === undefined || value.trim() === '' || !Number.isFinite(number))
    throw new Error(`a threshold is name=number, not '${text}'`)
  if (!Object.hasOwn(THRESHOLDS, name!)) throw new Error(`no threshold is named '${name}'`)
  return [name as Threshold, number]
}

/**
 * The built-in signals decided for each conversation with `overrides` in place of those thresholds, compared
 * with its labels. THRESHOLDS is the rules' own module constant: it is set for the replay and restored after.
 */
export function replaySignals(
  conversations: readonly ScoredConversation[],
  overrides: ReadonlyMap<Threshold, number> = new Map(),
): Replay {
  const thresholds = THRESHOLDS as Record<Threshold, number>
  const saved = new Map([...overrides.keys()].map((name) => [name, thresholds[name]]))
  const empty = () => Object.fromEntries(BUILTIN_SIGNALS.map((s) => [s, { tp: 0, fp: 0, fn: 0 }]))
  const counts: Replay['counts'] = { older: empty(), newer: empty() }
  const errors: ReplayError[] = []
  try {
    for (const [name, value] of overrides) thresholds[name] = value
    for (const c of conversations) {
      const found = storedSignalsFound(c)
      const half = OLDER_HALF.has(c.set) ? 'older' : 'newer'
      for (const signal of BUILTIN_SIGNALS) {
        const labelled = c.labels.includes(signal)
        const count = counts[half][signal]!
        if (labelled && found.has(signal)) count.tp++
        else if (found.has(signal) || labelled) {
          const kind = labelled ? 'fn' : 'fp'
          count[kind]++
          errors.push({ half, set: c.set, id: c.id, signal, kind })
        }
      }
    }
  } finally {
    for (const [name, value] of saved) thresholds[name] = value
  }
  return { counts, errors }
}
