/**
 * npx tsx bench/frustration-shared-errors.ts [--json FILE] (issue 32, helper frustcue): the conversations whose
 * frustration the rules (detect.ts, replayed on bench/.cache/signals-replay.json) and both learned variants
 * `tree` and `unit` of bench:frustration-loso, each fitted without the conversation's set, all decide wrongly.
 * Prints each with its end-user messages, their text and the cues a reader would check (the frustration head on
 * the whole and its strongest unit, the anchors' margin, displeasure, sadness). Never reads a blind set: the
 * store holds none and the texts are read from the development sets only. --json writes the same as data for a
 * classification by hand.
 */
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { bagsOf, leaveOneSetOut } from './quality/frustration-loso.ts'
import { developmentTexts, loadReplayStore, OLDER_HALF, replaySignals } from './quality/signals-replay.ts'

const { values } = parseArgs({ options: { json: { type: 'string' } } })

const store = loadReplayStore()
const texts = developmentTexts()

const rulesWrong = new Map(
  replaySignals(store.conversations)
    .errors.filter((e) => e.signal === 'frustration')
    .map((e) => [`${e.set} ${e.id}`, e.kind] as const),
)
const wrongOf = (granularity: 'message' | 'unit', learner?: 'trees') =>
  new Set(
    leaveOneSetOut(bagsOf(store.conversations, granularity), {
      instances: 'top',
      ...(learner ? { learner } : {}),
    }).flatMap((h) => h.wrong),
  )
const tree = wrongOf('message', 'trees')
const unit = wrongOf('unit')
const shared = [...rulesWrong.keys()].filter((k) => tree.has(k) && unit.has(k))
console.log(
  `store v${store.version}: rules ${rulesWrong.size} frustration errors, tree ${tree.size}, unit ${unit.size}; shared by all three ${shared.length}`,
)
const out = []
for (const key of shared) {
  const c = store.conversations.find((x) => `${x.set} ${x.id}` === key)!
  const msgs = texts.get(key)!
  const kind = rulesWrong.get(key)!
  const half = OLDER_HALF.has(c.set) ? 'older' : 'newer'
  console.log(`\n=== ${half} ${key} ${kind} [${c.labels.join(', ')}]`)
  const messages = c.messages.map((m, i) => {
    const cues = m.cues
    const units = cues?.frustrationUnits ?? []
    const row = {
      role: m.role,
      text: msgs[i]![1],
      head: cues?.emotionFrustration,
      headMax: units.length > 0 ? Math.max(...units.map((u) => u.head)) : undefined,
      margin: cues?.frustration,
      displeasure: cues?.displeasure,
      sadness: cues?.sadness,
    }
    const f = (x: number | undefined) => (x === undefined ? '  -  ' : x.toFixed(2).padStart(5))
    console.log(
      m.role === 'user'
        ? `  U h${f(row.head)} hx${f(row.headMax)} m${f(row.margin)} d${f(row.displeasure)} s${f(row.sadness)} | ${row.text}`
        : `  A ${row.text.slice(0, 160)}`,
    )
    return row
  })
  out.push({ key, set: c.set, id: c.id, half, kind, labels: c.labels, messages })
}
if (values.json) writeFileSync(values.json, JSON.stringify(out, null, 1))
