/**
 * npx tsx bench/signals-probe.ts [FILE] [SIGNAL,…]: a probe set of bench/data/signals (default
 * probes/next-question.json), scored as bench:signals scores a set, reported on the signals named (default
 * repetition, the signal that set is labelled for): each conversation's labels and readings of them. For
 * repetition, the cosine of each later end-user request to the earlier one and to the assistant's message between
 * (whole messages, as detect.ts compares them); for the others, the cues of the last end-user message that the
 * resolution and frustration rules read (the resolution anchors' margin, the gratitude head, the frustration
 * anchors' margin and head). The probes are labelled for the signals their README section names.
 */

import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { dot } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSignalsSet, measureSignals } from './quality/signals.ts'

const file = path.resolve(
  process.argv[2] ?? path.join(import.meta.dirname, 'data/signals/probes/next-question.json'),
)
const signals = (process.argv[3] ?? 'repetition').split(',')
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const set = loadSignalsSet(file)
const report = await measureSignals(analyzer, set)
const wrong = (signal: string) => new Set(report.errors.filter((e) => e.signal === signal).map((e) => e.id))
const found = (signal: string, id: string) => {
  const e = report.errors.find((x) => x.signal === signal && x.id === id)
  const labelled = set.find((c) => c.id === id)!.signals.includes(signal)
  return e === undefined ? labelled : !labelled
}

async function cosines(c: (typeof set)[number]): Promise<string> {
  const vectors = await analyzer.semantic.embedTexts(c.messages.map(([, text]) => text))
  const at = (role: string) => c.messages.flatMap(([r], i) => (r === role ? [i] : []))
  const users = at('user')
  const said = at('assistant')
  return users
    .slice(1)
    .map((j) => {
      const e = users[0]!
      const a = said.filter((k) => k > e && k < j).at(-1)
      const toAnswer = a === undefined ? '' : ` answer ${dot(vectors[a]!, vectors[j]!).toFixed(3)}`
      return `earlier ${dot(vectors[e]!, vectors[j]!).toFixed(3)}${toAnswer}`
    })
    .join('; ')
}

function lastWord(c: (typeof set)[number]): string {
  const k = c.messages.findLastIndex(([role]) => role === 'user')
  const line = report.dump.find((l) => l.startsWith(`${c.id}: `))!
  const cues = JSON.parse(`${report.dump[report.dump.indexOf(line) + 1 + k]!.slice(13).split('} ')[0]!}}`)
  const heads = (cues.frustrationUnits ?? []).map((u: { head: number }) => u.head.toFixed(2)).join('/')
  return `resolution ${cues.resolution} gratitude ${cues.gratitude} frustration ${cues.frustration} head ${heads}`
}

for (const c of set) {
  const bad = signals.some((s) => wrong(s).has(c.id))
  const readings = signals
    .map((s) => `${s.slice(0, 5)} ${c.signals.includes(s) ? 'L' : '-'}${found(s, c.id) ? 'F' : '-'}`)
    .join(' ')
  const detail = signals.includes('repetition') ? await cosines(c) : lastWord(c)
  console.log(`${bad ? 'WRONG' : 'ok   '} ${c.id.padEnd(36)} ${readings} ${detail}`)
}
for (const signal of signals) {
  const s = report.scores.find((x) => x.signal === signal)!
  console.log(
    `${signal}: ${s.tp} of ${s.positives} labelled read, ${s.fp} of ${set.length - s.positives} others read as ${signal}`,
  )
}
await analyzer.close?.()
