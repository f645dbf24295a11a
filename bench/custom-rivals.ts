/**
 * npm run bench:custom-rivals: candidate rules for a chatbot's own signals when it has several (issue 32;
 * bench/FINDINGS.md, "one message, one custom signal"). Each custom set (bench/data/signals/custom*.json) is
 * read as one chatbot carrying all its signals: every message (its signal's paraphrases and its domain's other
 * messages) is scored against every signal of the set; a firing of another signal than the message's own
 * counts as false (the set's signals are of different businesses). Per rule and set: the AUC of the message's
 * own signal's margin (positives × its other messages), precision / recall of the own signal, own-signal
 * errors (fp + fn), and the firings of other signals (and on how many messages), with P* the precision over
 * all firings. Margins unrounded (the service rounds them to 3 decimals, so its ties differ by a few firings:
 * bench:signals prints the service's figures for v43 and v82). dev2 chose; the others only report.
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import {
  embedCustomSignal,
  embedSignalAnchors,
  nearestMean,
  unitsOf,
} from '../services/analysis/src/signals/cues.ts'
import { dot, type Vector } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { auc, loadCustomSet } from './quality/custom-signals.ts'

const SETS = [
  { file: 'custom.json', name: 'dev' },
  { file: 'custom-dev2.json', name: 'dev2' },
  { file: 'custom-heldout.json', name: 'held out' },
  { file: 'custom-confirm2.json', name: 'confirm2' },
]
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const embed = analyzer.semantic.embedTexts
const anchors = await embedSignalAnchors(embed)
const socialRequest = [...anchors.social, ...anchors.request]
const top = (xs: number[], k: number) => {
  const t = [...xs].sort((a, b) => b - a).slice(0, k)
  return t.reduce((s, x) => s + x, 0) / t.length
}
interface Sig {
  centre: Vector
  background: Vector[]
  examples: Vector[]
  label: Vector
}
type Rule = (u: Vector, s: Sig, others: Sig[]) => number
const v43: Rule = (u, s) =>
  dot(u, s.centre) -
  top(
    s.background.map((b) => dot(u, b)),
    3,
  )
const RULES: Record<string, { rule: Rule; wholeOnly?: boolean; nearestOnly?: boolean }> = {
  v43: { rule: v43 },
  'v43 whole message only': { rule: v43, wholeOnly: true },
  'v43, fires only the nearest passing signal': { rule: v43, nearestOnly: true },
  "v43 + the chatbot's other centres in the background, k=3": {
    rule: (u, s, o) =>
      dot(u, s.centre) -
      top(
        [...s.background, ...o.map((x) => x.centre)].map((b) => dot(u, b)),
        3,
      ),
  },
  'min(v43, centre − nearest other centre)': {
    rule: (u, s, o) => Math.min(v43(u, s, o), dot(u, s.centre) - Math.max(...o.map((x) => dot(u, x.centre)))),
  },
  'min(v43, v3)': {
    rule: (u, s, o) =>
      Math.min(v43(u, s, o), nearestMean(u, s.examples, 1) - nearestMean(u, socialRequest, 1)),
  },
  'min(v43, label − 3 nearest background)': {
    rule: (u, s, o) =>
      Math.min(
        v43(u, s, o),
        dot(u, s.label) -
          top(
            s.background.map((b) => dot(u, b)),
            3,
          ),
      ),
  },
  'min(v43, 2nd nearest example − 3 nearest background)': {
    rule: (u, s, o) =>
      Math.min(
        v43(u, s, o),
        top(
          s.examples.map((e) => dot(u, e)),
          2,
        ) -
          top(
            s.background.map((b) => dot(u, b)),
            3,
          ),
      ),
  },
}
const out: Record<string, Record<string, string>> = {}
for (const set of SETS) {
  const cases = loadCustomSet(set.file)
  const sigs: Sig[] = []
  for (const c of cases) {
    const e = await embedCustomSignal(embed, { name: 'x', label: c.label, examples: c.examples }, anchors)
    const [label, ...examples] = await embed([c.label, ...c.examples])
    sigs.push({ centre: e.centre, background: [...e.background], examples, label: label! })
  }
  const msgs: { owner: number; positive: boolean; units: Vector[] }[] = []
  for (const [i, c] of cases.entries())
    for (const [texts, positive] of [
      [c.positives, true],
      [c.negatives, false],
    ] as const)
      for (const t of texts)
        msgs.push({ owner: i, positive, units: await embed(unitsOf({ role: 'user', content: t })) })
  for (const [name, r] of Object.entries(RULES)) {
    const pos: number[] = []
    const neg: number[] = []
    let cross = 0
    let crossMsgs = 0
    let tp = 0
    let fp = 0
    for (const m of msgs) {
      const units = r.wholeOnly ? m.units.slice(0, 1) : m.units
      const margins = sigs.map((s, j) =>
        Math.max(
          ...units.map((u) =>
            r.rule(
              u,
              s,
              sigs.filter((_, x) => x !== j),
            ),
          ),
        ),
      )
      let fired = margins.map((x) => x >= 0)
      if (r.nearestOnly) {
        const best = margins.indexOf(Math.max(...margins))
        fired = fired.map((f, j) => f && j === best)
      }
      ;(m.positive ? pos : neg).push(margins[m.owner]!)
      if (fired[m.owner]) m.positive ? tp++ : fp++
      const c = fired.filter((f, j) => f && j !== m.owner).length
      cross += c
      if (c > 0) crossMsgs++
    }
    const P = tp / (tp + fp + cross)
    out[name] ??= {}
    out[name]![set.name] =
      `${auc(pos, neg).toFixed(3)} | ${(tp / (tp + fp)).toFixed(2)} / ${(tp / pos.length).toFixed(2)} | ${fp}+${pos.length - tp} | ${cross} (${crossMsgs} msgs) P*=${P.toFixed(2)}`
  }
}
console.log(`| rule | ${SETS.map((s) => `${s.name}: AUC | P / R | fp+fn | cross firings`).join(' | ')} |`)
for (const [name, cells] of Object.entries(out))
  console.log(`| ${name} | ${SETS.map((s) => cells[s.name]).join(' | ')} |`)
