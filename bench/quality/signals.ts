/**
 * Conversation signals measured on the labelled conversations of bench/data/signals (issue 32): each
 * conversation's messages are scored by the analyzer's language model and its signals decided as the
 * service decides them (services/analysis/src/signals), as of one minute after the quiet period, and
 * compared with the labels. Precision and recall per built-in signal; with --dump, every message's cues.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { SemanticAnalyzer } from '../../services/analysis/src/providers/semantic.ts'
import {
  cuesOf,
  embedSignalAnchors,
  type ScoredMessage,
  type SignalAnchors,
  withEmotions,
} from '../../services/analysis/src/signals/cues.ts'
import {
  BUILTIN_SIGNALS,
  type ConversationMessage,
  DEFAULT_QUIET_PERIOD_MS,
  detectSignals,
  SIGNALS_VERSION,
} from '../../services/analysis/src/signals/detect.ts'
import { type CustomSetReport, customSignalsReport } from './custom-signals.ts'

export interface LabelledConversation {
  readonly id: string
  readonly domain: string
  readonly signals: readonly string[]
  readonly messages: readonly (readonly ['user' | 'assistant', string])[]
}

export const SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/conversations.json')
/** Written after the signals were tuned on SIGNALS_SET; a development set since signals-v7 (README there). */
export const HELD_OUT_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/heldout.json')
/** Written by a third session before it changed anything; a development set since signals-v6 (README there). */
export const CONFIRM_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/confirm.json')
/** Written by a fourth session before it changed anything; a development set since signals-v7 (README there). */
export const FRESH_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh.json')
/** Written blind (without reading the anchors, cues or thresholds) by a fifth session; a development set since signals-v10 (README there). */
export const FRESH2_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh2.json')
/** Written blind by a sixth session (helper fresh3); a development set since signals-v11 (README there). */
export const FRESH3_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh3.json')
/** Written blind by a seventh session (helper fresh4); a development set since signals-v13 (README there). */
export const FRESH4_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh4.json')
/** Written blind by an eighth session (helper fresh5); a development set since signals-v17 (README there). */
export const FRESH5_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh5.json')
/** Written blind by a ninth session (helper fresh6); a development set since signals-v21 (README there). */
export const FRESH6_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh6.json')
/** Written blind by a tenth session (helper fresh7); a development set since signals-v24 (README there). */
export const FRESH7_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh7.json')
/** Written blind by an eleventh session (helper fresh8); a development set since signals-v25 (README there). */
export const FRESH8_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh8.json')
/** Written blind by a twelfth session (helper fresh9); read blind at signals-v25 and v27 to v30, a development set since 2026-11-30 (README there). */
export const FRESH9_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh9.json')
/** Written blind by a thirteenth session (helper fresh10); read blind at signals-v30, v32 and v33, a development set since (README there). */
export const FRESH10_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh10.json')
/** Written blind by a fourteenth session (helper fresh11); read blind at signals-v33 and v36, a development set since 2026-11-30, 13:40 UTC (README there). */
export const FRESH11_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh11.json')
/** Written blind by a fifteenth session (helper fresh12); read blind at signals-v36/v37, v40 and v41, a development set since 2026-11-30, 17:35 UTC (README there). */
export const FRESH12_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh12.json')
/** Written blind by a sixteenth session (helper fresh13); read blind at signals-v40, v41 and v42 (twice), a development set since 2026-11-30, 20:30 UTC (README there). */
export const FRESH13_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh13.json')
/** Written blind by a seventeenth session (helper fresh14); read blind at signals-v42 and v48, a development set since 2026-11-30, 23:15 UTC (README there). */
export const FRESH14_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh14.json')
/** Written blind by an eighteenth session (helper fresh15); read blind at signals-v48, v52 and v54, a development set since 2026-12-01, 00:10 UTC (README there). */
export const FRESH15_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh15.json')
/** Written blind by a nineteenth session (helper fresh16); read blind at signals-v54 and v56 (twice more for two candidates), a development set since 2026-12-01, 02:25 UTC (README there). */
export const FRESH16_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh16.json')
/** Written blind by a twentieth session (helper fresh17); read blind at signals-v56 and v59 and for one candidate (adopted as v60), a development set since 2026-12-01, 02:50 UTC (README there). */
export const FRESH17_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh17.json')
/** Written blind by a twenty-first session (helper fresh18); read blind at signals-v56, v60, v61 and v62 and for two candidates, a development set since 2026-12-01, 05:35 UTC (README there). */
export const FRESH18_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh18.json')
/** Written blind by a twenty-second session (helper fresh19); read blind at signals-v62 to v66 and for three candidates, a development set since 2026-12-01, 08:30 UTC (README there). */
export const FRESH19_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh19.json')
/** Written blind by a twenty-third session (helper fresh20); read blind at signals-v62 to v70 and for several candidates, a development set since 2026-12-01, 11:45 UTC (README there). */
export const FRESH20_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh20.json')
/** Written blind by a twenty-fourth session (helper fresh21); read blind at signals-v66 to v72 and for several candidates, a development set since 2026-12-01, 14:15 UTC (README there). */
export const FRESH21_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh21.json')
/** Written blind by a twenty-fifth session (helper fresh22); read blind at signals-v70 to v75 and for several candidates, a development set since 2026-12-01, 16:30 UTC (README there). */
export const FRESH22_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh22.json')
/** Written blind by a twenty-sixth session (helper fresh23); read blind at signals-v72 to v78 and for several candidates, a development set since 2026-12-01, 20:05 UTC (README there). */
export const FRESH23_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh23.json')
/** Written blind by a twenty-seventh session (helper fresh24); read blind at signals-v75 to v82 and for several candidates, a development set since 2026-12-01, 23:40 UTC (README there). */
export const FRESH24_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh24.json')
/** Written blind by a twenty-eighth session (helper fresh25); read blind at signals-v78 to v87 and for several candidates, a development set since 2026-12-02, 04:05 UTC (README there). */
export const FRESH25_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh25.json')
/** Written blind by a twenty-ninth session (helper fresh26); read blind at signals-v82 to v87 and for several candidates, a development set since 2026-12-02, 06:30 UTC (README there). */
export const FRESH26_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh26.json')
/** Written blind by a thirtieth session (helper fresh27); read blind at signals-v86 to v89 and for several candidates, a development set since 2026-12-02, 09:25 UTC (README there). */
export const FRESH27_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh27.json')
/** Written blind by a thirty-first session (helper fresh28); read blind at signals-v87 to v92 and for several candidates, a development set since 2026-12-02, 12:35 UTC (README there). */
export const FRESH28_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh28.json')
/** Written blind by a thirty-second session (helper fresh29); read blind at signals-v89 to v95 and for several candidates, a development set since 2026-12-02, 15:35 UTC (README there). */
export const FRESH29_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh29.json')
/** Written blind by a thirty-third session (helper fresh30); read blind at signals-v91 to v100 and for several candidates, a development set since 2026-12-02, 19:05 UTC (README there). */
export const FRESH30_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh30.json')
/** Written blind by a thirty-fourth session (helper fresh31) while others changed the detector; kept blind (README there). */
export const FRESH31_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh31.json')
/** Written blind by a thirty-fifth session (helper fresh32) while others changed the detector; kept blind (README there). */
export const FRESH32_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh32.json')
/** Written blind by a thirty-sixth session (helper fresh33) while others changed the detector; kept blind (README there). */
export const FRESH33_SIGNALS_SET = path.resolve(import.meta.dirname, '../data/signals/fresh33.json')

/** A set measured beside the development set: its name, file, and how it was made. */
export interface SignalsSetEntry {
  readonly name: string
  readonly file: string
  readonly described: string
  /**
   * Kept blind from the sessions that tune the signals: its errors are counted per signal, not named, and
   * --dump leaves its messages out (README there).
   */
  readonly blind?: boolean
}

/** The sets measured beside the development set, in the report's order. */
export const OTHER_SIGNALS_SETS: readonly SignalsSetEntry[] = [
  {
    name: 'held out',
    file: HELD_OUT_SIGNALS_SET,
    described: 'written later, tuned on since signals-v7 (held out, development)',
  },
  {
    name: 'confirmation',
    file: CONFIRM_SIGNALS_SET,
    described:
      'written by a third session before its changes, tuned on since signals-v6 (confirmation, development)',
  },
  {
    name: 'fresh',
    file: FRESH_SIGNALS_SET,
    described:
      'written by a fourth session before its changes, tuned on since signals-v7 (fresh, development)',
  },
  {
    name: 'fresh2',
    file: FRESH2_SIGNALS_SET,
    described:
      'written blind by a fifth session, measured blind for signals-v7 to v9, tuned on since signals-v10 (fresh2, development)',
  },
  {
    name: 'fresh3',
    file: FRESH3_SIGNALS_SET,
    described:
      'written blind by a sixth session, measured blind for signals-v9 and v10, tuned on since signals-v11 (fresh3, development)',
  },
  {
    name: 'fresh4',
    file: FRESH4_SIGNALS_SET,
    described:
      'written blind by a seventh session, measured blind for signals-v10 and v12, tuned on since signals-v13 (fresh4, development)',
  },
  {
    name: 'fresh5',
    file: FRESH5_SIGNALS_SET,
    described:
      'written blind by an eighth session, measured blind for signals-v12 and v16, tuned on since signals-v17 (fresh5, development)',
  },
  {
    name: 'fresh6',
    file: FRESH6_SIGNALS_SET,
    described:
      'written blind by a ninth session, measured blind for signals-v16 and v20, tuned on since signals-v21 (fresh6, development)',
  },
  {
    name: 'fresh7',
    file: FRESH7_SIGNALS_SET,
    described:
      'written blind by a tenth session, measured blind for signals-v20 and v23, tuned on since signals-v24 (fresh7, development)',
  },
  {
    name: 'fresh8',
    file: FRESH8_SIGNALS_SET,
    described:
      'written blind by an eleventh session, measured blind for signals-v20, v23 and v24, a development set since signals-v25 (fresh8, development)',
  },
  {
    name: 'fresh9',
    file: FRESH9_SIGNALS_SET,
    described:
      'written blind by a twelfth session, measured blind for signals-v25 and v27 to v30, a development set since (fresh9, development)',
  },
  {
    name: 'fresh10',
    file: FRESH10_SIGNALS_SET,
    described:
      'written blind by a thirteenth session, measured blind for signals-v30, v32 and v33, a development set since (fresh10, development)',
  },
  {
    name: 'fresh11',
    file: FRESH11_SIGNALS_SET,
    described:
      'written blind by a fourteenth session, measured blind for signals-v33 and v36, a development set since (fresh11, development)',
  },
  {
    name: 'fresh12',
    file: FRESH12_SIGNALS_SET,
    described:
      'written blind by a fifteenth session, measured blind for signals-v36, v37, v40 and v41, a development set since (fresh12, development)',
  },
  {
    name: 'fresh13',
    file: FRESH13_SIGNALS_SET,
    described:
      'written blind by a sixteenth session, measured blind for signals-v40, v41 and v42, a development set since (fresh13, development)',
  },
  {
    name: 'fresh14',
    file: FRESH14_SIGNALS_SET,
    described:
      'written blind by a seventeenth session, measured blind for signals-v42 and v48, a development set since (fresh14, development)',
  },
  {
    name: 'fresh15',
    file: FRESH15_SIGNALS_SET,
    described:
      'written blind by an eighteenth session, measured blind for signals-v48, v52 and v54, a development set since (fresh15, development)',
  },
  {
    name: 'fresh16',
    file: FRESH16_SIGNALS_SET,
    described:
      'written blind by a nineteenth session, measured blind for signals-v54 and v56, a development set since (fresh16, development)',
  },
  {
    name: 'fresh17',
    file: FRESH17_SIGNALS_SET,
    described:
      'written blind by a twentieth session, measured blind for signals-v56, v59 and v60, a development set since (fresh17, development)',
  },
  {
    name: 'fresh18',
    file: FRESH18_SIGNALS_SET,
    described:
      'written blind by a twenty-first session, measured blind for signals-v56, v60, v61 and v62, a development set since (fresh18, development)',
  },
  {
    name: 'fresh19',
    file: FRESH19_SIGNALS_SET,
    described:
      'written blind by a twenty-second session, measured blind for signals-v62 to v66, a development set since (fresh19, development)',
  },
  {
    name: 'fresh20',
    file: FRESH20_SIGNALS_SET,
    described:
      'written blind by a twenty-third session, measured blind for signals-v62 to v70, a development set since (fresh20, development)',
  },
  {
    name: 'fresh21',
    file: FRESH21_SIGNALS_SET,
    described:
      'written blind by a twenty-fourth session, measured blind for signals-v66 to v72, a development set since (fresh21, development)',
  },
  {
    name: 'fresh22',
    file: FRESH22_SIGNALS_SET,
    described:
      'written blind by a twenty-fifth session, measured blind for signals-v70 to v75, a development set since (fresh22, development)',
  },
  {
    name: 'fresh23',
    file: FRESH23_SIGNALS_SET,
    described:
      'written blind by a twenty-sixth session, measured blind for signals-v72 to v78, a development set since (fresh23, development)',
  },
  {
    name: 'fresh24',
    file: FRESH24_SIGNALS_SET,
    described:
      'written blind by a twenty-seventh session, measured blind for signals-v75 to v82, a development set since (fresh24, development)',
  },
  {
    name: 'fresh25',
    file: FRESH25_SIGNALS_SET,
    described:
      'written blind by a twenty-eighth session, measured blind for signals-v78 to v87, a development set since (fresh25, development)',
  },
  {
    name: 'fresh26',
    file: FRESH26_SIGNALS_SET,
    described:
      'written blind by a twenty-ninth session, measured blind for signals-v82 to v87, a development set since (fresh26, development)',
  },
  {
    name: 'fresh27',
    file: FRESH27_SIGNALS_SET,
    described:
      'written blind by a thirtieth session, measured blind for signals-v86 to v89, a development set since (fresh27, development)',
  },
  {
    name: 'fresh28',
    file: FRESH28_SIGNALS_SET,
    described:
      'written blind by a thirty-first session, measured blind for signals-v87 to v92, a development set since (fresh28, development)',
  },
  {
    name: 'fresh29',
    file: FRESH29_SIGNALS_SET,
    described:
      'written blind by a thirty-second session, measured blind for signals-v89 to v95, a development set since (fresh29, development)',
  },
  {
    name: 'fresh30',
    file: FRESH30_SIGNALS_SET,
    described:
      'written blind by a thirty-third session, measured blind for signals-v91 to v100, a development set since (fresh30, development)',
  },
  {
    name: 'fresh31',
    file: FRESH31_SIGNALS_SET,
    described:
      'written blind by a thirty-fourth session while others changed the detector, never tuned on (fresh31, blind)',
    blind: true,
  },
  {
    name: 'fresh32',
    file: FRESH32_SIGNALS_SET,
    described:
      'written blind by a thirty-fifth session while others changed the detector, never tuned on (fresh32, blind)',
    blind: true,
  },
  {
    name: 'fresh33',
    file: FRESH33_SIGNALS_SET,
    described:
      'written blind by a thirty-sixth session while others changed the detector, never tuned on (fresh33, blind)',
    blind: true,
  },
]

/**
 * The development set and every other set not flagged blind above: the sets a bench may read (the one
 * place that leaves the blind ones out; a bench that also leaves sets out by name filters this list).
 */
export function openSignalsSets(): { name: string; file: string }[] {
  return [
    { name: 'development', file: SIGNALS_SET },
    ...OTHER_SIGNALS_SETS.filter((s) => s.blind !== true).map((s) => ({ name: s.name, file: s.file })),
  ]
}

export interface NamedSignalsReport {
  readonly name: string
  readonly described: string
  /** Errors reported as counts per signal, and no dump: a set kept from the sight of who tunes the signals. */
  readonly blind?: boolean
  readonly report: SignalsReport
}

/**
 * Every set of OTHER_SIGNALS_SETS measured with the analyzer; the blind ones left out when `withBlind` is
 * false (a session tuning the signals: not even their counts reach its screen).
 */
export async function measureOtherSignalSets(
  analyzer: SemanticAnalyzer,
  { withBlind = true }: { withBlind?: boolean } = {},
): Promise<NamedSignalsReport[]> {
  const out: NamedSignalsReport[] = []
  for (const set of OTHER_SIGNALS_SETS.filter((s) => withBlind || s.blind !== true)) {
    const report = await measureSignals(analyzer, loadSignalsSet(set.file))
    const blind = set.blind === true
    out.push({
      name: set.name,
      described: set.described,
      blind,
      report: blind
        ? { ...report, dump: [`(${set.name} is kept blind: its messages are not dumped)`] }
        : report,
    })
  }
  return out
}

export function loadSignalsSet(file = SIGNALS_SET): LabelledConversation[] {
  return JSON.parse(readFileSync(file, 'utf8'))
}

export interface SignalScore {
  readonly signal: string
  readonly positives: number
  readonly tp: number
  readonly fp: number
  readonly fn: number
  readonly precision: number
  readonly recall: number
}

export interface SignalsReport {
  readonly conversations: number
  readonly scores: SignalScore[]
  readonly errors: { id: string; signal: string; kind: 'fp' | 'fn' }[]
  readonly dump: string[]
}

/** Each message of a labelled conversation scored as the service scores it: its cues (with the emotions) and vector. */
export async function scoreConversation(
  analyzer: SemanticAnalyzer,
  anchors: SignalAnchors,
  c: LabelledConversation,
): Promise<(ScoredMessage | undefined)[]> {
  const embed = analyzer.semantic.embedTexts
  const input = c.messages.map(([role, content], i) => ({ id: String(i), role, content }))
  const analysed = await analyzer.analyzeMessages(input, {})
  return (
    await cuesOf(
      input,
      anchors,
      embed,
      [],
      analyzer.semantic.frustrationOf,
      analyzer.semantic.escalationOf,
      analyzer.semantic.handoverOf,
      analyzer.semantic.displeasureOf,
      analyzer.semantic.gratitudeOf,
    )
  ).map((s, i) => withEmotions(s, analysed[i]!.emotions))
}

/**
 * The built-in signals found in a scored conversation, a message a minute, as of its quiet period's end (the
 * bench's clock): what the service decides once the conversation has gone quiet.
 */
export function signalsFound(
  roles: readonly ('user' | 'assistant')[],
  scored: readonly (Pick<ScoredMessage, 'cues' | 'vector'> | undefined)[],
): Set<string> {
  const start = Date.UTC(2026, 0, 1)
  const messages: ConversationMessage[] = roles.map((role, i) => ({
    id: String(i),
    role,
    sentAt: new Date(start + i * 60_000),
    cues: scored[i]?.cues,
    vector: scored[i]?.vector,
  }))
  const now = new Date(start + roles.length * 60_000 + DEFAULT_QUIET_PERIOD_MS)
  const { signals } = detectSignals(
    messages,
    { disabled: new Set(), custom: [], quietPeriodMs: DEFAULT_QUIET_PERIOD_MS },
    now,
  )
  return new Set(signals.map((s) => s.name))
}

export async function measureSignals(
  analyzer: SemanticAnalyzer,
  set: readonly LabelledConversation[],
): Promise<SignalsReport> {
  const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
  const counts = new Map(BUILTIN_SIGNALS.map((s) => [s as string, { tp: 0, fp: 0, fn: 0, positives: 0 }]))
  const errors: SignalsReport['errors'] = []
  const dump: string[] = []
  for (const c of set) {
    const scored = await scoreConversation(analyzer, anchors, c)
    const found = signalsFound(
      c.messages.map(([role]) => role),
      scored,
    )
    dump.push(`${c.id}: labels [${c.signals.join(', ')}] found [${[...found].join(', ')}]`)
    c.messages.forEach(([role, content], i) => {
      dump.push(`   ${role.padEnd(9)} ${JSON.stringify(scored[i]?.cues)} ${content}`)
    })
    for (const signal of BUILTIN_SIGNALS) {
      const count = counts.get(signal)!
      const labelled = c.signals.includes(signal)
      if (labelled) count.positives++
      if (labelled && found.has(signal)) count.tp++
      else if (found.has(signal)) {
        count.fp++
        errors.push({ id: c.id, signal, kind: 'fp' })
      } else if (labelled) {
        count.fn++
        errors.push({ id: c.id, signal, kind: 'fn' })
      }
    }
  }
  const scores = [...counts].map(([signal, n]) => ({
    signal,
    ...n,
    precision: n.tp + n.fp === 0 ? 1 : n.tp / (n.tp + n.fp),
    recall: n.positives === 0 ? 1 : n.tp / n.positives,
  }))
  return { conversations: set.length, scores, errors, dump }
}

/** A blind set's errors, counted per signal ("frustration 2 fp, 3 fn") without naming the conversations. */
function errorCounts(errors: SignalsReport['errors']): string[] {
  return BUILTIN_SIGNALS.flatMap((signal) => {
    const fp = errors.filter((e) => e.signal === signal && e.kind === 'fp').length
    const fn = errors.filter((e) => e.signal === signal && e.kind === 'fn').length
    return fp + fn === 0 ? [] : [`${signal} ${fp} fp, ${fn} fn`]
  })
}

/** The signals' section of a report, in Markdown: the development set, and the other sets when given. */
export function signalsReport(
  report: SignalsReport,
  custom: readonly CustomSetReport[],
  sets: readonly NamedSignalsReport[] = [],
): string[] {
  const f = (x: number) => x.toFixed(2)
  const others = sets.map((o) => ({ ...o, scores: new Map(o.report.scores.map((s) => [s.signal, s])) }))
  const described = sets.map((o) => `${o.report.conversations} ${o.described}`)
  return [
    '## Conversation signals (issue 32)',
    '',
    `${report.conversations} multi-turn support conversations written and labelled for it, the signals tuned on them (development)${described.length ? `, ${described.join(', ')}` : ''} (bench/data/signals/README.md); targets: precision ≥ 0.85, recall ≥ 0.8 per built-in signal. Rules signals-v${SIGNALS_VERSION}.`,
    '',
    `| signal | labelled | precision | recall |${others.map((o) => ` ${o.name}: labelled | precision | recall |`).join('')}`,
    `|---|--:|--:|--:|${others.map(() => '--:|--:|--:|').join('')}`,
    ...report.scores.map((s) => {
      const tail = others
        .map((o) => {
          const h = o.scores.get(s.signal)
          return h ? ` ${h.positives} | ${f(h.precision)} | ${f(h.recall)} |` : ' | | |'
        })
        .join('')
      return `| ${s.signal} | ${s.positives} | ${f(s.precision)} | ${f(s.recall)} |${tail}`
    }),
    '',
    `Errors: ${report.errors.map((e) => `${e.id} ${e.kind} ${e.signal}`).join('; ') || 'none'}.`,
    ...others.flatMap((o) => [
      '',
      `${o.name[0]!.toUpperCase()}${o.name.slice(1)}: ${(o.blind ? errorCounts(o.report.errors) : o.report.errors.map((e) => `${e.id} ${e.kind} ${e.signal}`)).join('; ') || 'none'}.`,
    ]),
    '',
    ...customSignalsReport(custom),
  ]
}
