/**
 * npm run bench:frustration-agreement (issue 32, helper agree1): how far two readers agree on frustration. Joins the
 * second reader's labels (bench/data/signals/agreement/frustration-second-reader.json, 150 conversations of the
 * development sets, labelled blind) with the sets' original labels, and prints agreement and Cohen's κ overall, by
 * half and by the second reader's sureness; the detector's precision / recall against each reader and where both
 * agree (the 150 scored with the model of ../shared/models as bench/quality/signals.ts scores them, at this
 * checkout's signals version, about half a minute); and the disagreements as a Markdown table. Never a blind set.
 */
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { embedSignalAnchors } from '../services/analysis/src/signals/cues.ts'
import { SIGNALS_VERSION } from '../services/analysis/src/signals/detect.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import {
  agreement,
  type JoinedReading,
  joinReadings,
  precisionRecall,
  type SecondReading,
} from './quality/frustration-agreement.ts'
import {
  type LabelledConversation,
  loadSignalsSet,
  OTHER_SIGNALS_SETS,
  scoreConversation,
  signalsFound,
} from './quality/signals.ts'

const DATA = path.resolve(import.meta.dirname, 'data/signals')
const readings: SecondReading[] = JSON.parse(
  readFileSync(path.join(DATA, 'agreement/frustration-second-reader.json'), 'utf8'),
)
const blind = new Set(OTHER_SIGNALS_SETS.filter((s) => s.blind).map((s) => path.basename(s.file, '.json')))
const sets = new Map<string, Map<string, LabelledConversation>>()
function conversation(set: string, id: string): LabelledConversation | undefined {
  if (blind.has(set)) throw new Error(`${set} is a blind set: never read here`)
  if (!sets.has(set))
    sets.set(set, new Map(loadSignalsSet(path.join(DATA, `${set}.json`)).map((c) => [c.id, c])))
  return sets.get(set)!.get(id)
}
const joined = joinReadings(readings, (set, id) => conversation(set, id)?.signals)

const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
const cpu = process.cpuUsage()
const detected = new Map<JoinedReading, boolean>()
for (const r of joined) {
  const c = conversation(r.set, r.id)!
  const scored = await scoreConversation(analyzer, anchors, c)
  detected.set(
    r,
    signalsFound(
      c.messages.map(([role]) => role),
      scored,
    ).has('frustration'),
  )
}
const { user, system } = process.cpuUsage(cpu)

const f = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(2))
const yes = (rs: readonly JoinedReading[], pick: (r: JoinedReading) => boolean) => rs.filter(pick).length
function agreementLine(name: string, rs: readonly JoinedReading[]) {
  const a = agreement(rs.map((r) => [r.original, r.frustration]))
  return `| ${name} | ${a.n} | ${yes(rs, (r) => r.original)} | ${yes(rs, (r) => r.frustration)} | ${a.agree} (${f(a.share)}) | ${f(a.kappa)} ± ${f(1.96 * a.se)} |`
}
function detectorLine(name: string, rs: readonly JoinedReading[], truth: (r: JoinedReading) => boolean) {
  const p = precisionRecall(rs.map((r) => [truth(r), detected.get(r)!]))
  const k = agreement(rs.map((r) => [truth(r), detected.get(r)!])).kappa
  return `| ${name} | ${rs.length} | ${p.tp} | ${p.fp} | ${p.fn} | ${f(p.precision)} | ${f(p.recall)} | ${f(k)} |`
}
const half = (h: string) => joined.filter((r) => r.half === h)
const both = joined.filter((r) => r.original === r.frustration)

console.log(
  `${joined.length} conversations of ${new Set(joined.map((r) => r.set)).size} sets; detector at signals-v${SIGNALS_VERSION}, ` +
    `scoring ${((user + system) / 1e6).toFixed(1)} s CPU\n`,
)
console.log(
  '| conversations | n | original yes | second yes | agree | κ ± 1.96 se |\n| --- | --: | --: | --: | --: | --: |',
)
for (const [name, rs] of [
  ['all', joined],
  ['older half', half('older')],
  ['newer half', half('newer')],
  ['second reader sure', joined.filter((r) => r.sure === 'sure')],
  ['second reader unsure', joined.filter((r) => r.sure === 'unsure')],
] as const)
  console.log(agreementLine(name, rs))

console.log(
  '\n| labels | n | tp | fp | fn | P | R | κ with detector |\n| --- | --: | --: | --: | --: | --: | --: | --: |',
)
for (const [name, rs] of [
  ['', joined],
  [' older', half('older')],
  [' newer', half('newer')],
] as const) {
  console.log(detectorLine(`original${name}`, rs, (r) => r.original))
  console.log(detectorLine(`second reader${name}`, rs, (r) => r.frustration))
  console.log(
    detectorLine(
      `both agree${name}`,
      both.filter((r) => rs.includes(r)),
      (r) => r.original,
    ),
  )
}
// One reader taken as a detector against the other: the ceiling the labels themselves allow.
const cross = precisionRecall(joined.map((r) => [r.frustration, r.original]))
console.log(
  `\noriginal labels read against the second reader's: P ${f(cross.precision)} R ${f(cross.recall)}; ` +
    `the reverse: P ${f(cross.recall)} R ${f(cross.precision)}`,
)

console.log(
  '\n| key | set / id | original | second | sure | detector | why |\n| --- | --- | --- | --- | --- | --- | --- |',
)
const word = (b: boolean) => (b ? 'frustration' : 'none')
for (const r of joined.filter((r) => r.original !== r.frustration))
  console.log(
    `| ${r.key} | ${r.set} ${r.id} | ${word(r.original)} | ${word(r.frustration)} | ${r.sure} | ${word(detected.get(r)!)} | ${r.why} |`,
  )
console.log('\nthe detector wrong where both readers agree:')
for (const r of both.filter((r) => detected.get(r) !== r.original))
  console.log(`${r.original ? 'fn' : 'fp'} ${r.key} ${r.half} ${r.set} ${r.id} ${r.sure}: ${r.why}`)
process.exit(0)
