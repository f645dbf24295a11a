/**
 * npm run bench:frustration-loso (issue 32): frustration decided by a logistic regression over the cues the
 * service computes anyway (bench/quality/frustration-loso.ts), each development set left out in turn (fit and
 * threshold on the other nineteen), and each half left out (fit on the older, decide the newer, and the
 * reverse), beside the rules' errors on the same sets in the same run (detect.ts at the store's version,
 * bench/quality/signals-replay.ts) and the rules' first blind reads of fresh14 … fresh17 (bench/FINDINGS.md).
 * Reads bench/.cache/signals-replay.json (`npx tsx bench/signals-replay.ts --score`), which never holds a blind
 * set. Counts only; CPU time of the fits printed for the record.
 * npm run bench:frustration-loso -- --decide NAME: for the lead's blind reads, the set NAME of bench/data/signals
 * (a blind one too) scored with the model of ../shared/models (about a minute), each variant fitted and thresholded
 * on every stored set but NAME, and NAME decided: counts only, no conversation named, beside the rules' counts on it.
 * The candidate named beforehand is `tree` (bench/FINDINGS.md, helper learn1).
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { embedSignalAnchors } from '../services/analysis/src/signals/cues.ts'
import { SIGNALS_VERSION } from '../services/analysis/src/signals/detect.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import {
  bagsOf,
  type Counts,
  FEATURES,
  type FitOptions,
  featuresOf,
  fitAndTest,
  fitModel,
  type Granularity,
  leaveOneSetOut,
  precision,
  recall,
  sum,
} from './quality/frustration-loso.ts'
import { loadSignalsSet, OTHER_SIGNALS_SETS, SIGNALS_SET, scoreConversation } from './quality/signals.ts'
import {
  loadReplayStore,
  OLDER_HALF,
  replaySignals,
  type ScoredConversation,
} from './quality/signals-replay.ts'

/** The rules' frustration on each set's first blind read (bench/FINDINGS.md, the lead's sections). */
const FIRST_BLIND_READS: Record<string, { version: number; fp: number; fn: number; p: number; r: number }> = {
  fresh14: { version: 42, fp: 5, fn: 7, p: 0.69, r: 0.61 },
  fresh15: { version: 48, fp: 5, fn: 3, p: 0.75, r: 0.83 },
  fresh16: { version: 54, fp: 7, fn: 8, p: 0.63, r: 0.6 },
  fresh17: { version: 56, fp: 3, fn: 5, p: 0.79, r: 0.69 },
}

const HEAD_ONLY = ['headWhole', 'headMax'].map((f) => featuresOf('message').indexOf(f))
/**
 * head: the frustration head alone (whole and strongest unit), every message of a labelled conversation positive;
 * all: every message cue, the same instances; top: every message cue, each labelled conversation's top message;
 * unit: one instance per unit (UNIT_FEATURES), each labelled conversation's top unit; tree: as top, with boosted
 * trees of depth 2 (the rules' conjunctions) in place of the logistic regression.
 */
const VARIANTS: { name: string; granularity: Granularity; opts: FitOptions }[] = [
  { name: 'head', granularity: 'message', opts: { instances: 'all', columns: HEAD_ONLY } },
  { name: 'all', granularity: 'message', opts: { instances: 'all' } },
  { name: 'top', granularity: 'message', opts: { instances: 'top' } },
  { name: 'unit', granularity: 'unit', opts: { instances: 'top' } },
  { name: 'tree', granularity: 'message', opts: { instances: 'top', learner: 'trees' } },
]

const store = loadReplayStore()
if (store.version !== SIGNALS_VERSION)
  console.log(`(store scored at signals-v${store.version}, the rules are v${SIGNALS_VERSION})`)
const bagsBy = { message: bagsOf(store.conversations, 'message'), unit: bagsOf(store.conversations, 'unit') }
const bags = bagsBy.message
const sets = [...new Set(bags.map((b) => b.set))]
const fmt = (c: Counts) => `${String(c.fp).padStart(2)}/${String(c.fn).padEnd(2)}`
const pr = (c: Counts) => `${precision(c).toFixed(2)} ${recall(c).toFixed(2)}`

const { values } = parseArgs({ options: { decide: { type: 'string' } } })
if (values.decide !== undefined) {
  await decide(values.decide)
  process.exit(0)
}

/** Scores the set `name` with the model and decides it with models fitted on every other stored set: counts only. */
async function decide(name: string) {
  const entry = [{ name: 'development', file: SIGNALS_SET }, ...OTHER_SIGNALS_SETS].find(
    (s) => s.name === name,
  )
  if (entry === undefined) throw new Error(`no signals set is named '${name}'`)
  const analyzer = await createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(tmpdir(), 'bench-signals-models'),
    hubUrl: UNREACHABLE_HUB,
  })
  const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
  const scored: ScoredConversation[] = []
  for (const c of loadSignalsSet(entry.file)) {
    const s = await scoreConversation(analyzer, anchors, c)
    scored.push({
      set: name,
      id: c.id,
      labels: c.signals,
      messages: c.messages.map(([role], i) => ({
        role,
        cues: s[i]?.cues,
        vector: s[i] === undefined ? undefined : Array.from(s[i]!.vector),
      })),
    })
  }
  const byRules = replaySignals(scored).counts
  const r = sum([byRules.older.frustration!, byRules.newer.frustration!])
  console.log(
    `${name}: ${scored.length} conversations, ${scored.filter((c) => c.labels.includes('frustration')).length} labelled frustration`,
  )
  console.log(`  rules v${SIGNALS_VERSION}: ${r.fp + r.fn} errors (${fmt(r)}, P R ${pr(r)})`)
  for (const v of VARIANTS) {
    const train = bagsBy[v.granularity].filter((b) => b.set !== name)
    const h = fitAndTest(train, bagsOf(scored, v.granularity), v.opts)
    const c = sum(Object.values(h.counts))
    console.log(
      `  ${v.name}: ${c.fp + c.fn} errors (${fmt(c)}, P R ${pr(c)}, threshold ${h.threshold.toFixed(2)})`,
    )
  }
}

// The rules, on the same store, in the same run.
const rules: Record<string, Counts> = Object.fromEntries(sets.map((s) => [s, { tp: 0, fp: 0, fn: 0 }]))
const { errors } = replaySignals(store.conversations)
for (const b of bags) {
  const e = errors.find((x) => x.set === b.set && x.id === b.id && x.signal === 'frustration')
  if (e) rules[b.set]![e.kind]++
  else if (b.positive) rules[b.set]!.tp++
}

const started = process.cpuUsage()
const loso = new Map(VARIANTS.map((v) => [v.name, leaveOneSetOut(bagsBy[v.granularity], v.opts)]))
const cpu = (process.cpuUsage(started).user + process.cpuUsage(started).system) / 1e6

console.log(
  `Frustration, leave one set out (${bags.length} conversations, ${bags.reduce((a, b) => a + b.instances.length, 0)} end-user messages, ${FEATURES.length} features; store v${store.version})`,
)
console.log(
  `set           pos | rules v${SIGNALS_VERSION} fp/fn  P    R   | ${VARIANTS.map((v) => `${v.name.padEnd(4)} fp/fn  P    R   thr `).join('| ')}| first blind read`,
)
for (const [i, set] of sets.entries()) {
  const pos = bags.filter((b) => b.set === set && b.positive).length
  const cells = VARIANTS.map((v) => {
    const h = loso.get(v.name)![i]!
    const c = h.counts[set]!
    return `     ${fmt(c)} ${pr(c)} ${h.threshold.toFixed(2)} `
  })
  const blind = FIRST_BLIND_READS[set]
  console.log(
    `${set.padEnd(13)} ${String(pos).padStart(3)} |        ${fmt(rules[set]!)} ${pr(rules[set]!)} | ${cells.join('| ')}| ${blind ? `v${blind.version} ${blind.fp}/${blind.fn} P ${blind.p} R ${blind.r}` : ''}`,
  )
}
for (const [label, inHalf] of [
  ['older', (s: string) => OLDER_HALF.has(s)],
  ['newer', (s: string) => !OLDER_HALF.has(s)],
  ['all', () => true],
  ['fresh14-17', (s: string) => s in FIRST_BLIND_READS],
] as const) {
  const r = sum(sets.filter(inHalf).map((s) => rules[s]!))
  const cells = VARIANTS.map((v) => {
    const c = sum(
      loso
        .get(v.name)!
        .filter((h) => inHalf(h.sets[0]!))
        .map((h) => h.counts[h.sets[0]!]!),
    )
    return `${v.name} ${c.fp + c.fn} (${fmt(c)}, ${pr(c)})`
  })
  console.log(`  ${label.padEnd(10)} rules ${r.fp + r.fn} (${fmt(r)}, ${pr(r)}) | ${cells.join(' | ')}`)
}
const rulesWrong = new Set(errors.filter((e) => e.signal === 'frustration').map((e) => `${e.set} ${e.id}`))
console.log(
  `  the rules' v${SIGNALS_VERSION} errors among each variant's: ${VARIANTS.map((v) => {
    const wrong = loso.get(v.name)!.flatMap((h) => h.wrong)
    return `${v.name} ${wrong.filter((w) => rulesWrong.has(w)).length} of ${wrong.length}`
  }).join(', ')} (the rules make ${rulesWrong.size})`,
)
const blindSum = Object.values(FIRST_BLIND_READS).reduce((a, b) => a + b.fp + b.fn, 0)
console.log(`  fresh14-17 rules at their first blind read: ${blindSum} errors`)

console.log('\nLeave one half out (fit and threshold on one half, decide the other):')
for (const [from, to, fromOlder] of [
  ['older', 'newer', true],
  ['newer', 'older', false],
] as const) {
  const r = sum(sets.filter((s) => OLDER_HALF.has(s) !== fromOlder).map((s) => rules[s]!))
  const cells = VARIANTS.map((v) => {
    const train = bagsBy[v.granularity].filter((b) => OLDER_HALF.has(b.set) === fromOlder)
    const test = bagsBy[v.granularity].filter((b) => OLDER_HALF.has(b.set) !== fromOlder)
    const h = fitAndTest(train, test, v.opts)
    const c = sum(Object.values(h.counts))
    return `${v.name} ${c.fp + c.fn} (${fmt(c)}, ${pr(c)}, thr ${h.threshold.toFixed(2)})`
  })
  console.log(`  ${from} -> ${to}: rules ${r.fp + r.fn} (${fmt(r)}, ${pr(r)}) | ${cells.join(' | ')}`)
}

console.log('\nIn-sample (fit, threshold and decide on all twenty: how far these cues separate at all):')
for (const v of VARIANTS) {
  const h = fitAndTest(bagsBy[v.granularity], bagsBy[v.granularity], v.opts)
  const c = sum(Object.values(h.counts))
  console.log(`  ${v.name}: ${c.fp + c.fn} errors (${fmt(c)}, ${pr(c)}, thr ${h.threshold.toFixed(2)})`)
}
const all = sum(sets.map((s) => rules[s]!))
console.log(`  rules v${SIGNALS_VERSION}: ${all.fp + all.fn} errors (${fmt(all)}, ${pr(all)})`)

for (const v of VARIANTS.filter((x) => x.name === 'top' || x.name === 'unit')) {
  const model = fitModel(bagsBy[v.granularity], v.opts)
  const names = featuresOf(v.granularity)
  console.log(`\nWeights of \`${v.name}\` fitted on all twenty (standardised features), largest first:`)
  console.log(
    model.columns
      .map((col, j) => [names[col]!, model.weights![j]!] as const)
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
      .map(([name, w]) => `${name} ${w.toFixed(2)}`)
      .join(', '),
  )
}
console.log(`\nCPU time of the leave-one-set-out fits: ${cpu.toFixed(1)} s`)
