/**
 * npx tsx bench/frustration-edges.ts [FILE]: each end-user message of a probe set (default
 * probes/frustration-edges.json) scored as bench:signals scores it, with its frustration units (the whole, then
 * each sentence): the head, the anchors' margin, the emotion heads' displeasure, capitals; the message's sadness;
 * and the conversation's frustration label and reading. For reading why a plain report fires and a pushback does
 * not (helper frust14).
 */
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { embedSignalAnchors } from '../services/analysis/src/signals/cues.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSignalsSet, scoreConversation, signalsFound } from './quality/signals.ts'

const file = path.resolve(
  process.argv[2] ?? path.join(import.meta.dirname, 'data/signals/probes/frustration-edges.json'),
)
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
const f2 = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(2))
for (const c of loadSignalsSet(file)) {
  const scored = await scoreConversation(analyzer, anchors, c)
  const found = signalsFound(
    c.messages.map(([role]) => role),
    scored,
  ).has('frustration')
  const labelled = c.signals.includes('frustration')
  console.log(
    `${labelled === found ? 'ok   ' : 'WRONG'} ${c.id} label ${labelled ? 'F' : '-'} read ${found ? 'F' : '-'}`,
  )
  for (const [i, [role, text]] of c.messages.entries()) {
    if (role !== 'user' || i === 0) continue
    const cues = scored[i]?.cues
    const units = (cues?.frustrationUnits ?? [])
      .map((u) => `${f2(u.head)}/${f2(u.margin)}/d${f2(u.displeasure)}${u.shouts ? '/SH' : ''}`)
      .join(' ')
    console.log(`    [${i}] sad ${f2(cues?.sadness)} ${units}  ${JSON.stringify(text)}`)
  }
}
