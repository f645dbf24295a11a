/**
 * npx tsx bench/frustration-clauses.ts (issue 32, helper frustcue; measure only): the shipped displeasure heads
 * (GoEmotions anger, annoyance, disappointment, sentiment-model.json) read on each clause of the end users'
 * messages (split at sentence ends, commas, colons, dashes, 'which' and 'but') of the development sets, a
 * conversation scored by its highest clause; AUC and the classes of bench/frustration-cues.ts caught at a bound set
 * on the other half (the 95th percentile of its conversations labelled no frustration). Never reads a blind set.
 */
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import m from '../services/analysis/src/providers/sentiment-model.json' with { type: 'json' }
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { auc } from './quality/custom-signals.ts'
import { loadSignalsSet, OTHER_SIGNALS_SETS, SIGNALS_SET } from './quality/signals.ts'
import { OLDER_HALF } from './quality/signals-replay.ts'

const src = readFileSync(path.join(import.meta.dirname, 'frustration-cues.ts'), 'utf8')
const CLASSES = Object.fromEntries([...src.matchAll(/'([^']+ [^']+)': '([^']+)'/g)].map((x) => [x[1], x[2]]))
const an = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const heads = ['anger', 'annoyance', 'disappointment'].map((l) => m.emotions.labels.indexOf(l))
const disp = (v: ArrayLike<number>) =>
  Math.max(
    ...heads.map((k) => {
      let s = m.emotions.bias[k]!
      const w = m.emotions.weights[k]!
      for (let j = 0; j < 384; j++) s += w[j]! * v[j]!
      return 1 / (1 + Math.exp(-s))
    }),
  )
const convs: { key: string; half: string; pos: boolean; clauses: string[] }[] = []
for (const set of [{ name: 'development', file: SIGNALS_SET }, ...OTHER_SIGNALS_SETS.filter((s) => !s.blind)])
  for (const c of loadSignalsSet(set.file)) {
    const clauses = c.messages
      .filter(([r]) => r === 'user')
      .flatMap(([, t]) =>
        t
          .split(/[.!?;,:\n]+|\s[-–—]\s|\bwhich\b|\bbut\b/i)
          .map((x) => x.trim())
          .filter((x) => /\p{L}/u.test(x)),
      )
    convs.push({
      key: `${set.name} ${c.id}`,
      half: OLDER_HALF.has(set.name) ? 'older' : 'newer',
      pos: c.signals.includes('frustration'),
      clauses,
    })
  }
const all = [...new Set(convs.flatMap((c) => c.clauses))]
const t0 = process.cpuUsage()
const vecs = await an.semantic.embedTexts(all)
const score = new Map(all.map((t, i) => [t, disp(vecs[i]!)]))
const cpu = process.cpuUsage(t0)
const conv = new Map(convs.map((c) => [c.key, Math.max(0, ...c.clauses.map((x) => score.get(x)!))]))
const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(p * (s.length - 1))]!
}
console.log(`${all.length} clauses, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`)
for (const h of ['older', 'newer']) {
  const o = h === 'older' ? 'newer' : 'older'
  const neg = convs.filter((c) => c.half === h && !c.pos).map((c) => conv.get(c.key)!)
  const pos = convs.filter((c) => c.half === h && c.pos).map((c) => conv.get(c.key)!)
  const bound = q(
    convs.filter((c) => c.half === o && !c.pos).map((c) => conv.get(c.key)!),
    0.95,
  )
  console.log(
    `${h}: all labelled vs not AUC ${auc(pos, neg).toFixed(3)}; bound from ${o} ${bound.toFixed(2)}`,
  )
  for (const cls of ['U', 'I', 'F+', 'S']) {
    const mem = convs.filter((c) => c.half === h && CLASSES[c.key] === cls).map((c) => conv.get(c.key)!)
    console.log(
      `  ${cls}: AUC ${auc(mem, neg).toFixed(2)} caught ${mem.filter((x) => x >= bound).length}/${mem.length} (+${neg.filter((x) => x >= bound).length}/${neg.length}) values ${mem.map((x) => x.toFixed(2)).join(' ')}`,
    )
  }
  for (const cls of ['T', 'F-']) {
    const mem = convs.filter((c) => c.half === h && CLASSES[c.key] === cls).map((c) => conv.get(c.key)!)
    console.log(`  ${cls}: values ${mem.map((x) => x.toFixed(2)).join(' ')}`)
  }
}
for (const k of ['confirmation ec-03', 'fresh ride-01', 'fresh6 icerink-02', 'fresh11 cheese-02']) {
  const c = convs.find((x) => x.key === k)!
  const top = c.clauses.map((x) => [x, score.get(x)!] as const).sort((a, b) => b[1] - a[1])[0]!
  console.log(`  ${k}: "${top[0]}" ${top[1].toFixed(2)}`)
}
