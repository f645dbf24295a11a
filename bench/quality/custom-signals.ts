/**
 * A chatbot's own signals (issue 32) on the sets of bench/data/signals/custom*.json: each signal's
 * paraphrases of its examples (positives) and other messages of its chatbot's domain (negatives), each
 * message alone, scored as the service scores them (cues.ts's customMargin) and, in the same run, by two
 * earlier rules as baselines from the same unit embeddings: the nearest example's margin over the nearest
 * social or request anchor (signals-v3), and the 2 nearest's (signals-v4 to v42). Precision and recall at
 * the threshold (THRESHOLDS.custom, 0 for all three), and the AUC of each rule over a set's positives × negatives.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { customSignalName } from '@cas/settings'
import type { SemanticAnalyzer } from '../../services/analysis/src/providers/semantic.ts'
import {
  cuesFrom,
  embedCustomSignal,
  embedSignalAnchors,
  nearestMean,
  unitsOf,
} from '../../services/analysis/src/signals/cues.ts'
import { customSignalsFiring, THRESHOLDS } from '../../services/analysis/src/signals/detect.ts'
import type { Vector } from '../../services/analysis/src/topics/vectors.ts'

export interface CustomSignalCase {
  readonly label: string
  readonly examples: readonly string[]
  readonly positives: readonly string[]
  readonly negatives: readonly string[]
}

/** The sets, in the order reported; `development` sets chose the rule, the others only report (README there). */
export const CUSTOM_SETS = [
  { file: 'custom.json', name: 'development', development: true },
  { file: 'custom-heldout.json', name: 'held out', development: false },
  { file: 'custom-dev2.json', name: 'development 2', development: true },
  { file: 'custom-confirm2.json', name: 'confirmation 2', development: false },
] as const

export function loadCustomSet(file: string): CustomSignalCase[] {
  return JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../data/signals', file), 'utf8'))
}

interface Scored {
  readonly tp: number
  readonly fp: number
  readonly positives: number
  readonly pos: readonly number[]
  readonly neg: readonly number[]
}

export interface CustomSignalScore extends Scored {
  readonly label: string
}

export interface CustomSetReport {
  readonly name: string
  readonly development: boolean
  readonly signals: readonly CustomSignalScore[]
  /**
   * The set read as one chatbot carrying all its signals: every message scored against every signal, each
   * firing on its own margin (signals-v43) or only the nearest of those passing (signals-v82, the service's).
   */
  readonly chatbot: { readonly each: Firings; readonly nearest: Firings }
  /** The same messages by the earlier rules, pooled over the set's signals. */
  readonly baselines: readonly { readonly rule: string; readonly scored: Scored }[]
}

const BASELINES = [
  { rule: 'nearest example − nearest social or request anchor (signals-v3)', k: 1 },
  { rule: '2 nearest examples − 2 nearest social or request anchors (signals-v4 … v42)', k: 2 },
] as const

/** Firings of a set read as one chatbot: its own signal's on positives and negatives, and other signals' anywhere. */
export interface Firings {
  tp: number
  fp: number
  /** Another signal than the message's own (its set's signals are of different businesses). */
  other: number
  positives: number
}
const emptyFirings = (): Firings => ({ tp: 0, fp: 0, other: 0, positives: 0 })

/** Counts what one message fired: `own` its signal, `positive` whether it is a paraphrase of it. */
export function countFirings(
  into: Firings,
  fired: readonly { readonly name: string }[],
  own: string,
  positive: boolean,
): void {
  const hit = fired.some((f) => f.name === own)
  if (positive) into.positives++
  if (hit && positive) into.tp++
  if (hit && !positive) into.fp++
  into.other += fired.filter((f) => f.name !== own).length
}

function scoredOf(margins: readonly number[], positives: number): Scored {
  const pos = margins.slice(0, positives)
  const neg = margins.slice(positives)
  return {
    tp: pos.filter((m) => m >= THRESHOLDS.custom).length,
    fp: neg.filter((m) => m >= THRESHOLDS.custom).length,
    positives,
    pos,
    neg,
  }
}

export async function measureCustomSignalSets(analyzer: SemanticAnalyzer): Promise<CustomSetReport[]> {
  const embed = analyzer.semantic.embedTexts
  const anchors = await embedSignalAnchors(embed)
  const generic = [...anchors.social, ...anchors.request]
  const out: CustomSetReport[] = []
  for (const set of CUSTOM_SETS) {
    const signals: CustomSignalScore[] = []
    const baselineMargins: number[][][] = BASELINES.map(() => [])
    const cases = loadCustomSet(set.file)
    const defined = cases.map((c) => ({
      name: customSignalName(c.label),
      label: c.label,
      examples: c.examples,
    }))
    const all = await Promise.all(defined.map((d) => embedCustomSignal(embed, d, anchors)))
    const chatbot = { each: emptyFirings(), nearest: emptyFirings() }
    for (const [i, c] of cases.entries()) {
      const name = defined[i]!.name
      const messages = [...c.positives, ...c.negatives].map((content) => ({ role: 'user' as const, content }))
      const units = messages.map(unitsOf)
      const vectors = await embed(units.flat())
      const scored = cuesFrom(messages, units, vectors, anchors, all)
      signals.push({
        label: c.label,
        ...scoredOf(
          scored.map((s) => s?.cues.custom?.[name] ?? -1),
          c.positives.length,
        ),
      })
      for (const [m, s] of scored.entries()) {
        const margins = s?.cues.custom
        const each = defined.filter((d) => (margins?.[d.name] ?? -1) >= THRESHOLDS.custom)
        countFirings(chatbot.each, each, name, m < c.positives.length)
        countFirings(chatbot.nearest, customSignalsFiring(margins, defined), name, m < c.positives.length)
      }
      const examples = await embed(c.examples)
      const unitVectors: Vector[][] = []
      for (const u of units)
        unitVectors.push(vectors.slice(unitVectors.flat().length, unitVectors.flat().length + u.length))
      for (const [b, { k }] of BASELINES.entries()) {
        baselineMargins[b]!.push(
          unitVectors.map((vs) =>
            Math.max(...vs.map((v) => nearestMean(v, examples, k) - nearestMean(v, generic, k))),
          ),
        )
      }
    }
    const pooled = (per: readonly number[][]) => {
      const parts = per.map((margins, i) => scoredOf(margins, cases[i]!.positives.length))
      return pool(parts)
    }
    out.push({
      name: set.name,
      development: set.development,
      signals,
      chatbot,
      baselines: BASELINES.map(({ rule }, b) => ({ rule, scored: pooled(baselineMargins[b]!) })),
    })
  }
  return out
}

function pool(parts: readonly Scored[]): Scored {
  return {
    tp: parts.reduce((n, p) => n + p.tp, 0),
    fp: parts.reduce((n, p) => n + p.fp, 0),
    positives: parts.reduce((n, p) => n + p.positives, 0),
    pos: parts.flatMap((p) => p.pos),
    neg: parts.flatMap((p) => p.neg),
  }
}

/** The share of (positive, negative) pairs the margin orders rightly, ties counting half. */
export function auc(pos: readonly number[], neg: readonly number[]): number {
  let won = 0
  for (const p of pos) for (const n of neg) won += p > n ? 1 : p === n ? 0.5 : 0
  return pos.length * neg.length === 0 ? Number.NaN : won / (pos.length * neg.length)
}

const f = (x: number) => x.toFixed(2)
const precision = (s: Scored) => (s.tp + s.fp === 0 ? 1 : s.tp / (s.tp + s.fp))
const recall = (s: Scored) => (s.positives === 0 ? 1 : s.tp / s.positives)

const firingsRow = (rule: string, set: string, x: Firings) =>
  `| ${rule} | ${set} | ${f(x.tp + x.fp + x.other === 0 ? 1 : x.tp / (x.tp + x.fp + x.other))} | ${f(x.positives === 0 ? 1 : x.tp / x.positives)} | ${x.fp} | ${x.other} | ${x.fp + x.other + x.positives - x.tp} |`

/** The custom signals' part of the signals' report, in Markdown. */
export function customSignalsReport(sets: readonly CustomSetReport[]): string[] {
  const row = (rule: string, set: string, s: Scored) =>
    `| ${rule} | ${set} | ${f(precision(s))} | ${f(recall(s))} | ${auc(s.pos, s.neg).toFixed(3)} |`
  return [
    `A chatbot's own signals, each message alone (bench/data/signals/custom*.json; README there): ${sets
      .map((s) => `${s.name} ${s.signals.length} signals`)
      .join(
        ', ',
      )}; the development sets chose the rule, the others only report. Per set, pooled over its signals, with the earlier rules on the same embeddings:`,
    '',
    '| rule | set | precision | recall | AUC |',
    '|---|---|--:|--:|--:|',
    ...sets.flatMap((s) => [
      row(
        '**signals-v43 (the margin, as v82): centre of examples and label − 3 nearest of the wider background**',
        s.name,
        pool(s.signals),
      ),
      ...s.baselines.map((b) => row(b.rule, s.name, b.scored)),
    ]),
    '',
    "Each set read as one chatbot carrying all its signals (every message against every signal; the set's signals are of different businesses, so a firing of another signal than the message's own counts as false). Precision over all firings:",
    '',
    '| rule | set | precision | recall | own signal on its other messages | other signals fired | errors |',
    '|---|---|--:|--:|--:|--:|--:|',
    ...sets.flatMap((s) => [
      firingsRow('signals-v43: every signal whose margin passes', s.name, s.chatbot.each),
      firingsRow('**signals-v82: only the nearest of those passing**', s.name, s.chatbot.nearest),
    ]),
    '',
    'Per signal, the current rule (its own messages, its own margin):',
    '',
    '| custom signal | set | precision | recall | AUC | lowest positive margin | highest negative margin |',
    '|---|---|--:|--:|--:|--:|--:|',
    ...sets.flatMap((s) =>
      s.signals.map(
        (c) =>
          `| ${c.label} | ${s.name} | ${f(precision(c))} | ${f(recall(c))} | ${auc(c.pos, c.neg).toFixed(3)} | ${Math.min(...c.pos).toFixed(3)} | ${Math.max(...c.neg).toFixed(3)} |`,
      ),
    ),
    '',
  ]
}
