/**
 * npx tsx bench/frustration-loso-extra.ts (issue 32, helper frustcue; measure only): learn1's leave-one-set-out
 * (bench/quality/frustration-loso.ts, variants top and tree) with two more message features from
 * bench/frustration-cues.ts and frustration-clauses.ts: the sentiment head's positive share in a reply to a failed
 * turn (irony), and the displeasure heads' highest clause (an emotion named politely). Errors all / older / newer /
 * fresh14-17, and how many of the 75 shared errors stay wrong, beside the same run without them. Never a blind set.
 */
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { createSentimentScorer } from '../services/analysis/src/providers/sentiment.ts'
import m from '../services/analysis/src/providers/sentiment-model.json' with { type: 'json' }
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { type Bag, bagsOf, leaveOneSetOut, sum } from './quality/frustration-loso.ts'
import {
  developmentTexts,
  loadReplayStore,
  OLDER_HALF,
  type ScoredConversation,
} from './quality/signals-replay.ts'

const store = loadReplayStore()
const texts = developmentTexts()
const src = readFileSync(path.resolve(import.meta.dirname, 'frustration-cues.ts'), 'utf8')
const shared = new Set([...src.matchAll(/'([^']+ [^']+)': '([^']+)'/g)].map((x) => x[1]))
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}
const lex = createSentimentScorer()
const pos = (v: readonly number[], l: number) => {
  const z = m.sentiment.weights.map((r, j) => dot(v, r) + r[384]! * l + m.sentiment.bias[j]!)
  const e = z.map((x) => Math.exp(x - Math.max(...z)))
  return e[2]! / (e[0]! + e[1]! + e[2]!)
}
const heads = ['anger', 'annoyance', 'disappointment'].map((l) => m.emotions.labels.indexOf(l))
const disp = (v: ArrayLike<number>) =>
  Math.max(...heads.map((k) => 1 / (1 + Math.exp(-(dot(m.emotions.weights[k]!, v) + m.emotions.bias[k]!)))))
const split = (t: string) =>
  t
    .split(/[.!?;,:\n]+|\s[-–—]\s|\bwhich\b|\bbut\b/i)
    .map((x) => x.trim())
    .filter((x) => /\p{L}/u.test(x))
const an = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const allClauses = [
  ...new Set(
    store.conversations.flatMap((c) =>
      texts
        .get(`${c.set} ${c.id}`)!
        .filter(([r]) => r === 'user')
        .flatMap(([, t]) => split(t)),
    ),
  ),
]
const vec = await an.semantic.embedTexts(allClauses)
const clauseD = new Map(allClauses.map((t, i) => [t, disp(vec[i]!)]))
const extra = (c: ScoredConversation) => {
  const t = texts.get(`${c.set} ${c.id}`)!
  const rows: [number, number][] = []
  c.messages.forEach((msg, k) => {
    if (msg.role !== 'user' || msg.cues === undefined) return
    const p = c.messages.slice(0, k).findLastIndex((x) => x.role === 'assistant')
    const pc = p < 0 ? undefined : c.messages[p]!
    const said =
      p >= 0 &&
      c.messages
        .slice(0, p)
        .some((x) => x.role === 'assistant' && x.vector && pc!.vector && dot(x.vector, pc!.vector) >= 0.9)
    const failed = pc !== undefined && ((pc.cues?.failure ?? -1) >= 0 || pc.cues?.inability === true || said)
    const irony = failed && msg.vector ? pos(msg.vector, lex.score(t[k]![1])) : 0
    const cl = Math.max(0, ...split(t[k]![1]).map((x) => clauseD.get(x)!))
    rows.push([irony, cl])
  })
  return rows
}
const base = bagsOf(store.conversations, 'message')
const extras = store.conversations.map(extra)
const aug = (which: number[]): Bag[] =>
  base.map((b, i) => ({
    ...b,
    instances: b.instances.map((x, j) => Float64Array.from([...x, ...which.map((w) => extras[i]![j]![w]!)])),
  }))
for (const [name, bags] of [
  ['base', base],
  ['+irony', aug([0])],
  ['+clause', aug([1])],
  ['+both', aug([0, 1])],
] as const) {
  for (const [v, opts] of [
    ['top', { instances: 'top' as const }],
    ['tree', { instances: 'top' as const, learner: 'trees' as const }],
  ] as const) {
    const h = leaveOneSetOut(bags, opts)
    const by = (f: (s: string) => boolean) => {
      const c = sum(h.filter((x) => f(x.sets[0]!)).map((x) => x.counts[x.sets[0]!]!))
      return `${c.fp + c.fn} (${c.fp}/${c.fn})`
    }
    const wrong = h.flatMap((x) => x.wrong)
    console.log(
      `${name.padEnd(8)} ${v.padEnd(4)} all ${by(() => true)} older ${by((s) => OLDER_HALF.has(s))} newer ${by((s) => !OLDER_HALF.has(s))} fresh14-17 ${by((s) => ['fresh14', 'fresh15', 'fresh16', 'fresh17'].includes(s))}; of the 75 shared still wrong ${wrong.filter((w) => shared.has(w)).length}`,
    )
  }
}
