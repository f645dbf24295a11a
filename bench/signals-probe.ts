/**
 * npx tsx bench/signals-probe.ts [FILE]: a probe set of bench/data/signals (default probe-next-question.json),
 * scored as bench:signals scores a set, reported on repetition alone: each conversation's label and reading, with
 * the cosine of each later end-user request to the earlier one and to the assistant's message between (whole
 * messages, as detect.ts compares them). The probes are labelled for repetition only.
 */

import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { dot } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSignalsSet, measureSignals } from './quality/signals.ts'

const file = path.resolve(
  process.argv[2] ?? path.join(import.meta.dirname, 'data/signals/probe-next-question.json'),
)
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const set = loadSignalsSet(file)
const report = await measureSignals(analyzer, set)
const wrong = new Set(report.errors.filter((e) => e.signal === 'repetition').map((e) => e.id))
for (const c of set) {
  const vectors = await analyzer.semantic.embedTexts(c.messages.map(([, text]) => text))
  const at = (role: string) => c.messages.flatMap(([r], i) => (r === role ? [i] : []))
  const users = at('user')
  const said = at('assistant')
  const cosines = users.slice(1).map((j) => {
    const e = users[0]!
    const a = said.filter((k) => k > e && k < j).at(-1)
    const toAnswer = a === undefined ? '' : ` answer ${dot(vectors[a]!, vectors[j]!).toFixed(3)}`
    return `earlier ${dot(vectors[e]!, vectors[j]!).toFixed(3)}${toAnswer}`
  })
  const labelled = c.signals.includes('repetition')
  console.log(
    `${wrong.has(c.id) ? 'WRONG' : 'ok   '} ${c.id.padEnd(36)} labelled ${labelled ? 'rep ' : 'none'} ${cosines.join('; ')}`,
  )
}
const rep = report.scores.find((s) => s.signal === 'repetition')!
console.log(
  `repetition: ${rep.tp} of ${rep.positives} re-asks read, ${rep.fp} of ${set.length - rep.positives} next questions read as repetition`,
)
await analyzer.close?.()
