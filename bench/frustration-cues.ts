/**
 * npx tsx bench/frustration-cues.ts (issue 32, helper frustcue): would a cue the service could compute separate
 * the frustration errors no combination of today's cues fixes (bench/frustration-shared-errors.ts: the rules',
 * `tree`'s and `unit`'s shared errors, classed by hand below)? Measure only: nothing here reaches detect.ts.
 * Each cue scores a conversation by its highest end-user message (multiple-instance, as the rules read), and is
 * compared per class and half with the cues read today, in the same run:
 * - a missed class (fn) against the conversations labelled no frustration of the same half: AUC, and how many of
 *   the class a bound catches that lets 5% of those through, the bound set on the other half;
 * - a false class (fp) against the conversations labelled frustration of the same half, the same way round
 *   (a cue separates it when it reads the labelled ones higher).
 * Candidate cues: the 27 GoEmotions emotions (heads fitted here on GoEmotions' test split, which no shipped head
 * trains on, embedded once with the analyzer's model and cached), a frustration head refitted on the other
 * half's end-user messages with the conversations' own labels, positive words after a failed turn (irony), the
 * message's cosine with the assistant's answer before it (a restated fault), and a label-noise estimate: the
 * conversation's nearest conversations of other sets by their most frustrated message, and their labels.
 * Reads bench/.cache/signals-replay.json (`npx tsx bench/signals-replay.ts --score`); never a blind set.
 */
import { createSentimentScorer } from '../services/analysis/src/providers/sentiment.ts'
import sentimentModel from '../services/analysis/src/providers/sentiment-model.json' with { type: 'json' }
import { GOEMOTIONS_LABELS, goEmotions } from '../services/analysis/train/corpora.ts'
import { embedCorpus } from '../services/analysis/train/embeddings.ts'
import { auc } from './quality/custom-signals.ts'
import { logisticRegression } from './quality/logistic-regression.ts'
import {
  developmentTexts,
  loadReplayStore,
  OLDER_HALF,
  type ScoredConversation,
} from './quality/signals-replay.ts'

/**
 * The shared errors at signals-v61 (75 of the rules' 128), classed by a reader (helper frustcue; bench/FINDINGS.md):
 * I irony or sarcasm with positive words, U understatement or an emotion named politely, F+ frustration told
 * directly (a fault, impatience, a blunt judgement) labelled frustrated, F- a fault told plainly labelled not,
 * S slang, emoji, capitals or no words, T frustration at a third party, Sad a sad subject.
 */
const CLASSES: Record<string, string> = {
  'confirmation ec-03': 'U',
  'fresh ride-01': 'U',
  'fresh scoot-01': 'S',
  'fresh2 pest-02': 'I',
  'fresh2 printing-01': 'U',
  'fresh2 ebook-01': 'I',
  'fresh2 driving-01': 'U',
  'fresh3 florist-02': 'F+',
  'fresh3 alarm-01': 'F-',
  'fresh3 nursery-01': 'U',
  'fresh3 podcast-01': 'F-',
  'fresh3 tutoring-02': 'S',
  'fresh3 artshop-02': 'S',
  'fresh3 petfood-02': 'F+',
  'fresh4 print-02': 'I',
  'fresh4 kitchen-01': 'I',
  'fresh5 groom-01': 'I',
  'fresh5 vinyl-01': 'S',
  'fresh5 house-02': 'F+',
  'fresh5 drain-02': 'T',
  'fresh5 skip-01': 'F+',
  'fresh6 observatory-01': 'S',
  'fresh6 blockmgmt-01': 'T',
  'fresh6 nails-02': 'U',
  'fresh6 icerink-02': 'U',
  'fresh6 upholstery-02': 'F-',
  'fresh7 glaze-01': 'F+',
  'fresh7 mhome-01': 'U',
  'fresh7 floor-01': 'U',
  'fresh7 jewel-01': 'I',
  'fresh7 chip-01': 'U',
  'fresh8 handyman-01': 'T',
  'fresh8 uniform-02': 'F+',
  'fresh9 drone-02': 'F+',
  'fresh9 weddingphoto-02': 'Sad',
  'fresh9 callanswer-01': 'F-',
  'fresh9 cyclescheme-01': 'F-',
  'fresh10 plumbmerch-02': 'I',
  'fresh10 comedy-02': 'I',
  'fresh11 cheese-02': 'U',
  'fresh11 chess-01': 'T',
  'fresh11 birdfood-01': 'T',
  'fresh11 fuelcard-02': 'I',
  'fresh11 hifi-01': 'F-',
  'fresh11 coding-02': 'F-',
  'fresh11 union-01': 'T',
  'fresh11 suitcase-02': 'T',
  'fresh12 sched-01': 'F-',
  'fresh12 loos-02': 'F-',
  'fresh12 compare-01': 'T',
  'fresh13 shredding-01': 'F+',
  'fresh13 milliner-02': 'U',
  'fresh13 distillery-01': 'I',
  'fresh14 mattress-01': 'F-',
  'fresh14 coffeeapp-01': 'Sad',
  'fresh14 coffeeapp-02': 'I',
  'fresh14 newbuild-01': 'U',
  'fresh14 newbuild-02': 'T',
  'fresh14 clays-02': 'I',
  'fresh14 razors-01': 'F+',
  'fresh14 sheetmusic-02': 'S',
  'fresh15 gases-01': 'F-',
  'fresh15 einvoice-01': 'F-',
  'fresh15 meals-01': 'F+',
  'fresh16 esports-02': 'I',
  'fresh16 headset-02': 'S',
  'fresh16 studentdeals-01': 'S',
  'fresh16 patienttransport-01': 'F-',
  'fresh16 probate-02': 'U',
  'fresh16 p2plending-01': 'I',
  'fresh16 debtcollect-01': 'Sad',
  'fresh16 fantasy-02': 'S',
  'fresh16 sitebuilder-02': 'F-',
  'fresh17 injuryclaim-02': 'U',
  'fresh17 taxback-02': 'F+',
}

const store = loadReplayStore()
const texts = developmentTexts()

const keyOf = (c: ScoredConversation) => `${c.set} ${c.id}`
const positive = (c: ScoredConversation) => c.labels.includes('frustration')
const halfOf = (c: ScoredConversation) => (OLDER_HALF.has(c.set) ? 'older' : 'newer')
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}
const missing = Object.keys(CLASSES).filter((k) => !store.conversations.some((c) => keyOf(c) === k))
if (missing.length > 0) throw new Error(`not in the store: ${missing.join(', ')}`)

/** A message-level cue: a number for one end-user message (index k of conversation c), NaN when it has none. */
type Cue = (c: ScoredConversation, k: number) => number
const convScore = (cue: Cue, c: ScoredConversation) =>
  Math.max(
    -Infinity,
    ...c.messages
      .flatMap((m, k) => (m.role === 'user' && m.cues !== undefined ? [cue(c, k)] : []))
      .filter((v) => !Number.isNaN(v)),
  )

// Today's cues.
const headMax: Cue = (c, k) => Math.max(...(c.messages[k]!.cues!.frustrationUnits ?? []).map((u) => u.head))
const margin: Cue = (c, k) => c.messages[k]!.cues!.frustration ?? Number.NaN
const displeasure: Cue = (c, k) => c.messages[k]!.cues!.displeasure ?? Number.NaN
const notSad: Cue = (c, k) => -(c.messages[k]!.cues!.sadness ?? Number.NaN)

// The 27 GoEmotions emotions, fitted on its test split (no shipped head trains on it), one linear head each.
const cpuStart = process.cpuUsage()
const goTest = goEmotions('test')
const goVectors = await embedCorpus(
  'goemotions-test',
  goTest.map((t) => t.text),
)
const emotionHeads = GOEMOTIONS_LABELS.map((label, e) => {
  const rows = goVectors.map((x, i) => ({ x, y: goTest[i]!.emotions!.includes(e) ? 1 : 0 }))
  const { weights, bias } = logisticRegression(rows, 1)
  return { label, weights, bias }
})
const vectorOf = (c: ScoredConversation, k: number) => c.messages[k]!.vector
const emotionCue =
  (e: number): Cue =>
  (c, k) => {
    const v = vectorOf(c, k)
    const h = emotionHeads[e]!
    return v === undefined ? Number.NaN : dot(h.weights, v) + h.bias
  }

// A frustration head refitted on one half's end-user message vectors with the conversations' labels.
const refit = (half: 'older' | 'newer') => {
  const rows = store.conversations
    .filter((c) => halfOf(c) === half)
    .flatMap((c) =>
      c.messages.flatMap((m) =>
        m.role === 'user' && m.vector !== undefined ? [{ x: m.vector, y: positive(c) ? 1 : 0 }] : [],
      ),
    )
  return logisticRegression(rows, 1)
}
const refitted = { older: refit('older'), newer: refit('newer') }
/** Read by the head fitted on the other half than the conversation's. */
const refitCue: Cue = (c, k) => {
  const v = vectorOf(c, k)
  const h = refitted[halfOf(c) === 'older' ? 'newer' : 'older']
  return v === undefined ? Number.NaN : dot(h.weights, v) + h.bias
}

// Irony: the sentiment head's positive share in a reply to a failed turn (the failure anchors' margin >= 0, a
// 'cannot', or an answer said before).
const lexicon = createSentimentScorer()
const sentimentPositive = (v: readonly number[], lexical: number) => {
  const w = sentimentModel.sentiment.weights
  const z = w.map((row, j) => dot(v, row) + row[v.length]! * lexical + sentimentModel.sentiment.bias[j]!)
  const e = z.map((x) => Math.exp(x - Math.max(...z)))
  return e[2]! / (e[0]! + e[1]! + e[2]!)
}
const prevAssistant = (c: ScoredConversation, k: number) =>
  c.messages.slice(0, k).findLastIndex((m) => m.role === 'assistant')
const failedBefore = (c: ScoredConversation, k: number) => {
  const p = prevAssistant(c, k)
  if (p < 0) return false
  const cues = c.messages[p]!.cues
  const pv = c.messages[p]!.vector
  const said = c.messages
    .slice(0, p)
    .some(
      (m) => m.role === 'assistant' && m.vector !== undefined && pv !== undefined && dot(m.vector, pv) >= 0.9,
    )
  return (cues?.failure ?? -1) >= 0 || cues?.inability === true || said
}
const ironyCue: Cue = (c, k) => {
  const v = vectorOf(c, k)
  if (v === undefined || !failedBefore(c, k)) return 0
  return sentimentPositive(v, lexicon.score(texts.get(keyOf(c))![k]![1]))
}
// Restated: the message's cosine with the assistant's answer before it.
const restatedCue: Cue = (c, k) => {
  const p = prevAssistant(c, k)
  const v = vectorOf(c, k)
  const pv = p < 0 ? undefined : vectorOf(c, p)
  return v === undefined || pv === undefined ? Number.NaN : dot(v, pv)
}

const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.floor(q * (s.length - 1))))]!
}

const classes = ['I', 'U', 'F+', 'S', 'Sad', 'F-', 'T'] as const
const members = (cls: string, half: string) =>
  store.conversations.filter((c) => CLASSES[keyOf(c)] === cls && halfOf(c) === half)
const contrast = (cls: string, half: string) => {
  const asFn = members(cls, half).some(positive)
  return { asFn, rest: store.conversations.filter((c) => halfOf(c) === half && positive(c) !== asFn) }
}

/**
 * One cue on one class: AUC per half, and at a bound set on the other half (letting 5% of the contrast through:
 * the 95th percentile of the labelled-no conversations for a missed class, the 5th of the labelled ones for a
 * false class), the members it would put right and the contrast it would put wrong.
 */
function measure(cue: Cue, cls: string) {
  const scores = new Map(store.conversations.map((c) => [keyOf(c), convScore(cue, c)]))
  const out: string[] = []
  for (const [half, other] of [
    ['older', 'newer'],
    ['newer', 'older'],
  ] as const) {
    const m = members(cls, half).map((c) => scores.get(keyOf(c))!)
    if (m.length === 0) {
      out.push(`${half} -`)
      continue
    }
    const { asFn, rest } = contrast(cls, half)
    const r = rest.map((c) => scores.get(keyOf(c))!)
    const otherRest = contrast(cls, other).rest.map((c) => scores.get(keyOf(c))!)
    const a = asFn ? auc(m, r) : auc(r, m)
    const bound = quantile(otherRest, asFn ? 0.95 : 0.05)
    const fixed = m.filter((x) => (asFn ? x >= bound : x < bound)).length
    const broken = r.filter((x) => (asFn ? x >= bound : x < bound)).length
    out.push(`${half} AUC ${a.toFixed(2)} ${fixed}/${m.length} (+${broken}/${r.length})`)
  }
  return out.join(' | ')
}

const TODAY: [string, Cue][] = [
  ['head (strongest unit)', headMax],
  ['margin', margin],
  ['displeasure', displeasure],
  ['no sadness', notSad],
]
const CANDIDATES: [string, Cue][] = [
  ['refitted head (other half, own labels)', refitCue],
  ['positive words after a failed turn', ironyCue],
  ['cosine with the answer before', restatedCue],
]
console.log('All conversations, labelled frustration against not (AUC older | newer):')
for (const [name, cue] of [...TODAY, ...CANDIDATES]) {
  const a = (['older', 'newer'] as const).map((h) => {
    const inHalf = store.conversations.filter((c) => halfOf(c) === h)
    return auc(
      inHalf.filter(positive).map((c) => convScore(cue, c)),
      inHalf.filter((c) => !positive(c)).map((c) => convScore(cue, c)),
    ).toFixed(3)
  })
  console.log(`  ${name.padEnd(40)} ${a.join(' | ')}`)
}
for (const cls of classes) {
  const n = ['older', 'newer'].map((h) => members(cls, h).length)
  console.log(`\n${cls}: older ${n[0]}, newer ${n[1]} (${contrast(cls, 'older').asFn ? 'missed' : 'false'})`)
  for (const [name, cue] of [...TODAY, ...CANDIDATES])
    console.log(`  ${name.padEnd(40)} ${measure(cue, cls)}`)
  // The GoEmotions emotion chosen on the older half (best AUC), then read on the newer.
  const byOlder = GOEMOTIONS_LABELS.map((label, e) => {
    const s = new Map(store.conversations.map((c) => [keyOf(c), convScore(emotionCue(e), c)]))
    const m = members(cls, 'older').map((c) => s.get(keyOf(c))!)
    const { asFn, rest } = contrast(cls, 'older')
    const r = rest.map((c) => s.get(keyOf(c))!)
    return { label, e, a: m.length === 0 ? Number.NaN : asFn ? auc(m, r) : auc(r, m) }
  })
    .filter((x) => !Number.isNaN(x.a))
    .sort((x, y) => y.a - x.a)
  for (const best of byOlder.slice(0, 3))
    console.log(`  GoEmotions ${best.label.padEnd(29)} ${measure(emotionCue(best.e), cls)}`)
}

// Label noise: each conversation's most frustrated message (by the shipped head on its units), its five nearest
// of other sets' conversations, and how many of them carry the other label.
const keyMessage = (c: ScoredConversation) => {
  let best = -1
  let at = -1
  c.messages.forEach((m, k) => {
    if (m.role !== 'user' || m.cues === undefined || m.vector === undefined) return
    const h = headMax(c, k)
    if (h > best) {
      best = h
      at = k
    }
  })
  return at
}
const keyed = store.conversations
  .map((c) => ({ c, k: keyMessage(c) }))
  .filter((x) => x.k >= 0)
  .map((x) => ({ ...x, v: x.c.messages[x.k]!.vector! }))
const disagreeing = (x: (typeof keyed)[number]) => {
  const near = keyed
    .filter((y) => y.c.set !== x.c.set)
    .map((y) => ({ y, cos: dot(x.v, y.v) }))
    .sort((a, b) => b.cos - a.cos)
    .slice(0, 5)
  return { near, other: near.filter((n) => positive(n.y.c) !== positive(x.c)).length }
}
console.log(
  '\nLabel noise: the five nearest other-set conversations (by their most frustrated message), labelled the other way:',
)
const sharedKeys = new Set(Object.keys(CLASSES))
for (const [name, pick] of [
  ['shared errors', (x: (typeof keyed)[number]) => sharedKeys.has(keyOf(x.c))],
  ['every other conversation', (x: (typeof keyed)[number]) => !sharedKeys.has(keyOf(x.c))],
] as const) {
  const group = keyed.filter(pick)
  const counts = group.map((x) => disagreeing(x).other)
  console.log(
    `  ${name} (${group.length}): 4-5 of 5 the other way ${counts.filter((n) => n >= 4).length}, 3 ${counts.filter((n) => n === 3).length}, mean ${(counts.reduce((a, b) => a + b, 0) / group.length).toFixed(2)}`,
  )
}
for (const cls of classes) {
  const group = keyed.filter((x) => CLASSES[keyOf(x.c)] === cls)
  const counts = group.map((x) => disagreeing(x).other)
  console.log(
    `  ${cls}: majority of 5 the other way ${counts.filter((n) => n >= 3).length} of ${group.length}`,
  )
}
console.log(
  '\nFor each shared error of F-, F+, I, U: its end-user message nearest (cosine >= 0.55) to one of another set labelled the other way:',
)
const userMessages = store.conversations.flatMap((c) =>
  c.messages.flatMap((m, k) => (m.role === 'user' && m.vector !== undefined ? [{ c, k, v: m.vector }] : [])),
)
for (const key of Object.keys(CLASSES).filter((k) => ['F-', 'F+', 'I', 'U'].includes(CLASSES[k]!))) {
  const mine = userMessages.filter((x) => keyOf(x.c) === key)
  let best: { cos: number; a: (typeof userMessages)[number]; b: (typeof userMessages)[number] } | undefined
  for (const a of mine)
    for (const b of userMessages) {
      if (b.c.set === a.c.set || positive(b.c) === positive(a.c)) continue
      const cos = dot(a.v, b.v)
      if (best === undefined || cos > best.cos) best = { cos, a, b }
    }
  if (best === undefined || best.cos < 0.55) continue
  const say = (x: (typeof userMessages)[number]) =>
    `${keyOf(x.c)} [${positive(x.c) ? 'frustration' : 'none'}] "${texts.get(keyOf(x.c))![x.k]![1].slice(0, 150)}"`
  console.log(`  ${CLASSES[key]} ${best.cos.toFixed(2)} ${say(best.a)}\n         ${say(best.b)}`)
}
const cpu = process.cpuUsage(cpuStart)
console.log(
  `\nCPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (GoEmotions heads, refits and the measures)`,
)
