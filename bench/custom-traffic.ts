/**
 * npm run bench:custom-traffic: a chatbot's own signals against a background from its own traffic
 * (issue 32; bench/FINDINGS.md, "custom signals against the chatbot's own traffic").
 *
 * The custom sets (bench/data/signals/custom*.json) give, per signal, one business: paraphrases of the
 * examples (positives) and other messages of the same chatbot's domain (negatives). The chatbot's traffic is
 * simulated by cross-fitting: each signal's positives and negatives are split in two halves by position
 * (even, odd); one half is the "traffic" that builds the background, the other half is scored; then the
 * halves swap, and the scores are pooled. Real traffic contains the signal too, so the traffic half holds
 * positives as well as negatives: a candidate must not let them cancel the signal.
 *
 * Every rule is computed in the same run from the same unit embeddings (a message scores its best unit, the
 * whole or a sentence, as cues.ts does): the nearest example alone, signals-v3, signals-v43 (the service's
 * rule), and v43's background plus the traffic half as (a) its messages, (b) their spherical k-means
 * centroids (as the chatbot's topics would summarise it), each with and without v43's exclusion (background
 * nearer the signal's centre than its farthest example is left out), for several k (the nearest background
 * entries averaged); the traffic's mean direction taken out; exclusions that look at v43's own verdict or at
 * the scored unit; and an oracle row that reads the labels (the traffic's negatives only: not buildable, the
 * best case of any exclusion). AUC over each set's pooled positives × negatives, and precision / recall at 0.
 * The development sets (custom.json, custom-dev2.json) choose; the confirmation sets only report.
 * Without --confirm the confirmation sets are left out; --leave-one-out scores each message against every
 * other message of its signal instead of halves (bench/quality/custom-traffic.ts).
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import {
  customMargin,
  embedCustomSignal,
  embedSignalAnchors,
  nearestMean,
  unitsOf,
} from '../services/analysis/src/signals/cues.ts'
import { addInto, dot, normalized, type Vector } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { auc, loadCustomSet } from './quality/custom-signals.ts'
import { trafficFolds } from './quality/custom-traffic.ts'
import { dense, kmeans } from './quality/kmeans.ts'

const { values } = parseArgs({
  options: {
    confirm: { type: 'boolean', default: false },
    'leave-one-out': { type: 'boolean', default: false },
  },
})
const SETS = [
  { file: 'custom.json', name: 'dev', development: true },
  { file: 'custom-dev2.json', name: 'dev2', development: true },
  { file: 'custom-heldout.json', name: 'held out', development: false },
  { file: 'custom-confirm2.json', name: 'confirm2', development: false },
].filter((s) => s.development || values.confirm)

const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const embed = analyzer.semantic.embedTexts
const anchors = await embedSignalAnchors(embed)
const socialRequest = [...anchors.social, ...anchors.request]

/** The mean of the k largest values. */
function meanOfTop(values: readonly number[], k: number): number {
  const top = [...values].sort((a, b) => b - a).slice(0, k)
  return top.reduce((s, x) => s + x, 0) / top.length
}

/** Spherical k-means centroids of the vectors (c of them, at most one per vector), seeded. */
function centroidsOf(vectors: readonly Vector[], c: number): Vector[] {
  const k = Math.min(c, vectors.length)
  const labels = k === 1 ? vectors.map(() => 0) : kmeans(dense([...vectors]), k, { seed: 1, restarts: 5 })
  const sums = Array.from({ length: k }, () => new Float32Array(vectors[0]!.length))
  for (const [i, v] of vectors.entries()) addInto(sums[labels[i]!]!, v)
  return sums.filter((s) => dot(s, s) > 0).map(normalized)
}

interface Signal {
  readonly centre: Vector
  /** v43's background: social, request, and the CLINC150 medoids not excluded. */
  readonly background: readonly Vector[]
  /** The lowest similarity of an example to the centre (v43's exclusion bound). */
  readonly farthest: number
  readonly examples: readonly Vector[]
}

/** A rule: the margin of one unit given the signal and the traffic half's whole-message vectors. */
type Rule = (unit: Vector, signal: Signal, traffic: TrafficSummary) => number
interface TrafficSummary {
  readonly messages: readonly Vector[]
  /** The traffic's negatives alone: for the oracle rows only (they read the labels; no service could). */
  readonly negatives: readonly Vector[]
  /** The mean of the traffic's whole-message vectors (not normalised): the domain's common direction. */
  readonly mean: Vector
  readonly centroids: ReadonlyMap<number, readonly Vector[]>
}

const keep = (signal: Signal, vs: readonly Vector[], exclude: boolean) =>
  exclude ? vs.filter((v) => dot(v, signal.centre) < signal.farthest) : vs

/** x with β times the traffic's mean taken out, normalised. */
const centred = (x: Vector, mean: Vector, beta: number) => {
  const out = Float32Array.from(x)
  addInto(out, mean, -beta)
  return normalized(out)
}
/** v43's margin of one unit over a background. */
const v43 = (u: Vector, centre: Vector, background: readonly Vector[], k: number) =>
  dot(u, centre) -
  meanOfTop(
    background.map((b) => dot(u, b)),
    k,
  )

const RULES: { name: string; rule: Rule; threshold: boolean }[] = [
  {
    name: 'nearest example alone (similarity)',
    rule: (u, s) => nearestMean(u, s.examples, 1),
    threshold: false,
  },
  {
    name: 'nearest example − nearest social/request (v3)',
    rule: (u, s) => nearestMean(u, s.examples, 1) - nearestMean(u, socialRequest, 1),
    threshold: true,
  },
  {
    name: "signals-v43 as the service stores it (cues.ts's customMargin, rounded to 3 decimals)",
    rule: (u, s) => Math.round(customMargin(u, { name: 'x', ...s }) * 1000) / 1000,
    threshold: true,
  },
  ...[1, 2, 3, 5].map((k) => ({
    name: `v43 background, k = ${k}${k === 3 ? ' (signals-v43)' : ''}`,
    rule: ((u, s) =>
      dot(u, s.centre) -
      meanOfTop(
        s.background.map((b) => dot(u, b)),
        k,
      )) as Rule,
    threshold: true,
  })),
  ...[false, true].flatMap((exclude) =>
    [1, 2, 3, 5].map((k) => ({
      name: `v43 + traffic messages${exclude ? ', excluded' : ''}, k = ${k}`,
      rule: ((u, s, t) =>
        dot(u, s.centre) -
        meanOfTop(
          [...s.background, ...keep(s, t.messages, exclude)].map((b) => dot(u, b)),
          k,
        )) as Rule,
      threshold: true,
    })),
  ),
  ...[0.5, 1].map((beta) => ({
    name: `v43 with the traffic's mean taken out of unit, centre and background (β = ${beta}), k = 3`,
    rule: ((u, s, t) =>
      v43(
        centred(u, t.mean, beta),
        centred(s.centre, t.mean, beta),
        s.background.map((b) => centred(b, t.mean, beta)),
        3,
      )) as Rule,
    threshold: true,
  })),
  ...[1, 2, 3, 5].map((k) => ({
    name: `v43 + traffic messages v43 does not fire on, k = ${k}`,
    rule: ((u, s, t) =>
      v43(
        u,
        s.centre,
        [...s.background, ...t.messages.filter((m) => v43(m, s.centre, s.background, 3) < 0)],
        k,
      )) as Rule,
    threshold: true,
  })),
  ...[1, 2, 3, 5].map((k) => ({
    name: `v43 + traffic messages farther from the centre than the unit, k = ${k}`,
    rule: ((u, s, t) => {
      const own = dot(u, s.centre)
      return v43(u, s.centre, [...s.background, ...t.messages.filter((m) => dot(m, s.centre) < own)], k)
    }) as Rule,
    threshold: true,
  })),
  ...[1, 3, 5].map((k) => ({
    name: `oracle (reads the labels, not buildable): v43 + the traffic's negatives only, k = ${k}`,
    rule: ((u, s, t) => v43(u, s.centre, [...s.background, ...t.negatives], k)) as Rule,
    threshold: true,
  })),
  ...[1, 2, 3].flatMap((c) =>
    [false, true].flatMap((exclude) =>
      [1, 2, 3, 5].map((k) => ({
        name: `v43 + traffic centroids c = ${c}${exclude ? ', excluded' : ''}, k = ${k}`,
        rule: ((u, s, t) =>
          dot(u, s.centre) -
          meanOfTop(
            [...s.background, ...keep(s, t.centroids.get(c)!, exclude)].map((b) => dot(u, b)),
            k,
          )) as Rule,
        threshold: true,
      })),
    ),
  ),
]

interface Pooled {
  pos: number[]
  neg: number[]
}
const results = new Map<string, Map<string, Pooled>>()

for (const set of SETS) {
  const perRule = new Map<string, Pooled>(RULES.map((r) => [r.name, { pos: [], neg: [] }]))
  results.set(set.name, perRule)
  for (const c of loadCustomSet(set.file)) {
    const custom = await embedCustomSignal(
      embed,
      { name: 'x', label: c.label, examples: c.examples },
      anchors,
    )
    const examples = await embed(c.examples)
    const signal: Signal = {
      centre: custom.centre,
      background: custom.background,
      farthest: Math.min(...examples.map((e) => dot(e, custom.centre))),
      examples,
    }
    const unitVectors = async (texts: readonly string[]) => {
      const out: Vector[][] = []
      for (const t of texts) out.push(await embed(unitsOf({ role: 'user', content: t })))
      return out
    }
    const pos = await unitVectors(c.positives)
    const neg = await unitVectors(c.negatives)
    const folds = trafficFolds(pos, neg, values['leave-one-out'])
    for (const fold of folds) {
      const trafficVectors = fold.traffic.map((m) => m.item[0]!)
      const traffic: TrafficSummary = {
        messages: trafficVectors,
        negatives: fold.traffic.filter((m) => !m.positive).map((m) => m.item[0]!),
        mean: (() => {
          const sum = new Float32Array(trafficVectors[0]!.length)
          for (const v of trafficVectors) addInto(sum, v, 1 / trafficVectors.length)
          return sum
        })(),
        centroids: new Map([1, 2, 3].map((k) => [k, centroidsOf(trafficVectors, k)])),
      }
      for (const r of RULES) {
        const p = perRule.get(r.name)!
        for (const m of fold.scored) {
          const score = Math.max(...m.item.map((u) => r.rule(u, signal, traffic)))
          ;(m.positive ? p.pos : p.neg).push(score)
        }
      }
    }
  }
}

const f2 = (x: number) => x.toFixed(2)
const cells = (r: (typeof RULES)[number], p: Pooled) => {
  const a = auc(p.pos, p.neg).toFixed(3)
  if (!r.threshold) return `${a} | – | –`
  const tp = p.pos.filter((m) => m >= 0).length
  const fp = p.neg.filter((m) => m >= 0).length
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp)
  return `${a} | ${f2(precision)} / ${f2(tp / p.pos.length)} | ${p.pos.length - tp + fp} (${fp} fp, ${p.pos.length - tp} fn)`
}
console.log(
  values['leave-one-out']
    ? `Cross-fitted custom signals, leave one out: each message scored against a traffic of every other message of its signal (positives and negatives). Sets: ${SETS.map((s) => s.name).join(', ')}.`
    : `Cross-fitted custom signals: each signal's positives and negatives halved by position, one half the traffic, the other scored, swapped, pooled. Sets: ${SETS.map((s) => s.name).join(', ')}.`,
)
console.log('')
console.log(`| rule | ${SETS.map((s) => `AUC ${s.name} | P / R ${s.name} | errors ${s.name}`).join(' | ')} |`)
console.log(`|---|${SETS.map(() => '--:|--:|--:').join('|')}|`)
for (const r of RULES) {
  console.log(`| ${r.name} | ${SETS.map((s) => cells(r, results.get(s.name)!.get(r.name)!)).join(' | ')} |`)
}
