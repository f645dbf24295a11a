/**
 * npx tsx bench/frustration-authors.ts: issue 32, does a frustration head trained on the written convention's
 * own authors (fresh19 … fresh24, six sets, every one a development set) read a new author of the convention
 * better than the detector? Measure only (helper frust20); nothing of it ships.
 *
 * Message labels, derived from the conversations' labels (the sets carry no per-message evidence): every
 * end-user unit (the whole message and each of its sentences, cues.ts unitsOf, as the detector reads them) of
 * a conversation labelled without frustration is a negative; a conversation labelled frustration holds at least
 * one frustrated unit, so it gives one positive, multiple-instance: round 0 takes all its units, each later
 * round only the unit the previous round's head read highest (ROUNDS in all); its other units are left out.
 * A linear head (train/linear.ts, the frustration head's options) on the analyzer's MiniLM embedding of the
 * unit, trained on:
 * - G: GoEmotions' train split, anger / annoyance / disappointment against the rest (the shipped frustration
 *   head's public data; CC BY 4.0), classes balanced, weight 1 (no convention data: the control);
 * - C: the convention's units of the training authors alone, classes balanced, weight 1;
 * - GC: both, each weight 1 (set before measuring, not swept).
 * Leave one author out: trained on five of the six, read on the sixth, all six folds. A conversation's score is
 * its best end-user unit. Rules, each against the detector (signals-v of the replay store) on the same
 * conversations: "or" (the detector, or a unit ≥ bound), "or, replies" (only units of a reply to the assistant)
 * and "alone" (a unit ≥ bound, the detector not read). The bound: fewest frustration errors summed over the six
 * held-out folds (chosen by the folds only). Then the heads trained on all six authors, at that bound, on the
 * older half (development … fresh6) and fresh7 … fresh18, on neither of which anything was trained or chosen.
 * Blind sets are not in the replay store and are never read here.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { unitsOf } from '../services/analysis/src/signals/cues.ts'
import { BUILTIN_SIGNALS } from '../services/analysis/src/signals/detect.ts'
import {
  COMPLAINT_ANCHORS,
  MISFORTUNE_ANCHORS,
  NEUTRAL_ANCHORS,
  POSITIVE_ANCHORS,
} from '../services/analysis/train/anchors.ts'
import { GOEMOTIONS_LABELS, goEmotions, supportFrustration } from '../services/analysis/train/corpora.ts'
import { embedCorpus, embedParts } from '../services/analysis/train/embeddings.ts'
import { type LinearHead, logits, type Sample, sigmoid, train } from '../services/analysis/train/linear.ts'
import {
  developmentTexts,
  loadReplayStore,
  OLDER_HALF,
  type ScoredConversation,
  storedSignalsFound,
} from './quality/signals-replay.ts'
import { auc, logit, readHead as read, trainMultipleInstance } from './support/frustration-heads.ts'

const AUTHORS = ['fresh19', 'fresh20', 'fresh21', 'fresh22', 'fresh23', 'fresh24'] as const
const ROUNDS = 3
const OPTIONS = { kind: 'sigmoid', epochs: 30, learningRate: 0.01, l2: 1e-6, batch: 256, seed: 1 } as const
const CHANGES_OF = process.env.CHANGES_OF ?? 'GC+shipped'
const BOUNDS = Array.from({ length: 50 }, (_, i) => 0.5 + i * 0.01)

interface UserMessage {
  readonly index: number
  readonly reply: boolean
  readonly units: readonly string[]
  /** The shipped frustration head's best unit (the store's cues). */
  readonly shipped: number
  /** The shipped frustration head on each unit, as `units` (the store's cues). */
  readonly shippedUnits: readonly number[]
  vectors: Float32Array[]
}
interface Conversation {
  readonly key: string
  readonly set: string
  readonly group: 'older' | 'mid' | 'convention'
  readonly labelled: boolean
  readonly found: boolean
  readonly users: UserMessage[]
}

const store = loadReplayStore()
const texts = developmentTexts()
const conversations: Conversation[] = store.conversations.map((c) => {
  const key = `${c.set} ${c.id}`
  const messages = texts.get(key)!
  const users: UserMessage[] = []
  messages.forEach(([role, content], i) => {
    if (role !== 'user') return
    const units = unitsOf({ role: 'user', content })
    if (units.length === 0) return
    const shippedUnits = (c.messages[i]?.cues?.frustrationUnits ?? []).map((u) => u.head)
    if (shippedUnits.length !== units.length) throw new Error(`${key} ${i}: units differ from the store's`)
    const shipped = Math.max(0, ...shippedUnits)
    users.push({
      index: i,
      reply: i > 0 && messages[i - 1]![0] === 'assistant',
      units,
      shipped,
      shippedUnits,
      vectors: [],
    })
  })
  const group = OLDER_HALF.has(c.set)
    ? 'older'
    : (AUTHORS as readonly string[]).includes(c.set)
      ? 'convention'
      : 'mid'
  return {
    key,
    set: c.set,
    group,
    labelled: c.labels.includes('frustration'),
    found: storedSignalsFound(c).has('frustration'),
    users,
  }
})
const allUsers = conversations.flatMap((c) => c.users)
const unitVectors = await embedParts(
  'frustration-authors-units',
  allUsers.map((u) => u.units),
)
allUsers.forEach((u, i) => {
  u.vectors = unitVectors[i]!
})

const go = goEmotions('train')
const goVectors = await embedCorpus(
  'goemotions-train',
  go.map((e) => e.text),
)
const frustratedEmotions = new Set(
  ['anger', 'annoyance', 'disappointment'].map((e) => GOEMOTIONS_LABELS.indexOf(e)),
)
const goFrustrated = go.map((e) => e.emotions!.some((k) => frustratedEmotions.has(k)))
const goPositives = goFrustrated.filter(Boolean).length
const goSamples: Sample[] = go.map((_, i) => ({
  x: goVectors[i]!,
  y: [goFrustrated[i] ? 1 : 0],
  weight: (10_000 * 0.5) / (goFrustrated[i] ? goPositives : go.length - goPositives),
}))

// The shipped frustration head's other data (train-sentiment.ts frustrationSamples, at its weights): the
// anchors (weight 1) and the support messages labelled for frustration (weight 2), for S and SC.
const calm = [...MISFORTUNE_ANCHORS, ...NEUTRAL_ANCHORS, ...POSITIVE_ANCHORS]
const anchorVectors = await embedCorpus('frustration-anchors', [...COMPLAINT_ANCHORS, ...calm])
const shippedSamples: Sample[] = [...goSamples]
anchorVectors.forEach((x, i) => {
  const complaint = i < COMPLAINT_ANCHORS.length
  shippedSamples.push({
    x,
    y: [complaint ? 1 : 0],
    weight: (10_000 * 0.5) / (complaint ? COMPLAINT_ANCHORS.length : calm.length),
  })
})
const support = supportFrustration()
const supportVectors = await embedCorpus(
  'support-frustration',
  support.map((e) => e.text),
)
const supportFrustrated = support.filter((e) => e.frustrated).length
support.forEach((e, i) => {
  shippedSamples.push({
    x: supportVectors[i]!,
    y: [e.frustrated ? 1 : 0],
    weight: (10_000 * 2 * 0.5) / (e.frustrated ? supportFrustrated : support.length - supportFrustrated),
  })
})

type Base = 'none' | 'go' | 'shipped'
function trainHead(base: Base, authors: readonly string[]): LinearHead {
  const baseSamples = base === 'go' ? goSamples : base === 'shipped' ? shippedSamples : []
  if (authors.length === 0) return train(baseSamples, 1, OPTIONS)
  const mine = conversations.filter((c) => authors.includes(c.set))
  return trainMultipleInstance(
    mine.map((c) => ({ labelled: c.labelled, xs: c.users.flatMap((u) => u.vectors) })),
    { rounds: ROUNDS, options: OPTIONS, base: baseSamples },
  )
}

type Score = (c: Conversation) => number
/** A unit's reading: the head's, or (fused) the mean of its logit and the shipped head's on the same unit. */
const unitReading = (head: LinearHead, fused: boolean, u: UserMessage, j: number) =>
  fused
    ? sigmoid((logits(head, u.vectors[j]!)[0]! + logit(u.shippedUnits[j]!)) / 2)
    : read(head, u.vectors[j]!)
const bestOf =
  (head: LinearHead, fused: boolean, repliesOnly: boolean): Score =>
  (c) =>
    Math.max(
      0,
      ...c.users
        .filter((u) => !repliesOnly || u.reply)
        .flatMap((u) => u.vectors.map((_, j) => unitReading(head, fused, u, j))),
    )
const shippedBest: Score = (c) => Math.max(0, ...c.users.map((u) => u.shipped))

type Rule = 'or' | 'or, replies' | 'alone'
const RULES: readonly Rule[] = ['or', 'or, replies', 'alone']
interface Counts {
  fp: number
  fn: number
}
function counts(cs: readonly Conversation[], says: (c: Conversation) => boolean): Counts {
  let fp = 0
  let fn = 0
  for (const c of cs) {
    const s = says(c)
    if (s && !c.labelled) fp++
    if (!s && c.labelled) fn++
  }
  return { fp, fn }
}
const detector = (cs: readonly Conversation[]) => counts(cs, (c) => c.found)
/** A rule decides from the best units (all, or replies only) and the detector. */
function decide(rule: Rule, all: number, replies: number, bound: number, found: boolean): boolean {
  if (rule === 'alone') return all >= bound
  return found || (rule === 'or' ? all : replies) >= bound
}
const show = (k: Counts) => `${k.fp + k.fn} (${k.fp}/${k.fn})`

interface Read {
  readonly c: Conversation
  readonly all: number
  readonly replies: number
}
function readAll(head: LinearHead, fused: boolean, cs: readonly Conversation[]): Read[] {
  const all = bestOf(head, fused, false)
  const replies = bestOf(head, fused, true)
  return cs.map((c) => ({ c, all: all(c), replies: replies(c) }))
}
const countsAt = (reads: readonly Read[], rule: Rule, bound: number): Counts => {
  let fp = 0
  let fn = 0
  for (const r of reads) {
    const says = decide(rule, r.all, r.replies, bound, r.c.found)
    if (says && !r.c.labelled) fp++
    if (!says && r.c.labelled) fn++
  }
  return { fp, fn }
}

const inGroup = (g: Conversation['group']) => conversations.filter((c) => c.group === g)
const convention = inGroup('convention')
console.log(
  `${conversations.length} conversations; units embedded ${unitVectors.flat().length} of ${allUsers.length} end-user messages; ` +
    `GoEmotions train ${go.length} (${goPositives} anger / annoyance / disappointment)`,
)
console.log(
  `frustration labelled: older ${inGroup('older').filter((c) => c.labelled).length} / ${inGroup('older').length}, ` +
    `fresh7 … 18 ${inGroup('mid').filter((c) => c.labelled).length} / ${inGroup('mid').length}, ` +
    `convention ${convention.filter((c) => c.labelled).length} / ${convention.length}`,
)

const variants: readonly { name: string; base: Base; convention: boolean; fused: boolean }[] = [
  { name: 'G', base: 'go', convention: false, fused: false },
  { name: 'S', base: 'shipped', convention: false, fused: false },
  { name: 'C', base: 'none', convention: true, fused: false },
  { name: 'GC', base: 'go', convention: true, fused: false },
  { name: 'SC', base: 'shipped', convention: true, fused: false },
  { name: 'GC+shipped', base: 'go', convention: true, fused: true },
]

const baseHeads = new Map<Base, LinearHead>()
const headFor = (base: Base, authors: readonly string[]): LinearHead => {
  if (authors.length > 0) return trainHead(base, authors)
  if (!baseHeads.has(base)) baseHeads.set(base, trainHead(base, []))
  return baseHeads.get(base)!
}
/** GC's head per fold, shared by GC and GC+shipped. */
const foldHeads = new Map<string, LinearHead>()
const trainedOn = (base: Base, convention: boolean, authors: readonly string[]): LinearHead => {
  const key = `${base} ${convention} ${authors.join(',')}`
  if (!foldHeads.has(key)) foldHeads.set(key, headFor(base, convention ? authors : []))
  return foldHeads.get(key)!
}
function partA(): void {
  const foldReads = new Map<string, Map<string, Read[]>>()
  for (const v of variants) {
    const byFold = new Map<string, Read[]>()
    for (const held of AUTHORS) {
      const head = trainedOn(
        v.base,
        v.convention,
        AUTHORS.filter((a) => a !== held),
      )
      byFold.set(
        held,
        readAll(
          head,
          v.fused,
          convention.filter((c) => c.set === held),
        ),
      )
    }
    foldReads.set(v.name, byFold)
  }

  // The bound per variant and rule: fewest frustration errors over the six held-out folds together.
  const chosen = new Map<string, number>()
  for (const v of variants)
    for (const rule of RULES) {
      const reads = [...foldReads.get(v.name)!.values()].flat()
      let best = Number.POSITIVE_INFINITY
      let bound = 1.01
      for (const b of BOUNDS) {
        const k = countsAt(reads, rule, b)
        if (k.fp + k.fn < best) [best, bound] = [k.fp + k.fn, b]
      }
      chosen.set(`${v.name} ${rule}`, bound)
    }

  console.log('\nleave one author out (frustration errors, fp/fn; AUC of the best end-user unit):')
  const header = ['held out', 'detector', 'AUC shipped']
  for (const v of variants) header.push(`AUC ${v.name}`, ...RULES.map((r) => `${v.name} ${r}`))
  const table: string[][] = []
  const total = new Map<string, Counts>()
  const add = (k: string, c: Counts) => {
    const t = total.get(k) ?? { fp: 0, fn: 0 }
    total.set(k, { fp: t.fp + c.fp, fn: t.fn + c.fn })
  }
  for (const held of AUTHORS) {
    const cs = convention.filter((c) => c.set === held)
    const row = [held, show(detector(cs)), auc(cs, shippedBest).toFixed(3)]
    add('detector', detector(cs))
    for (const v of variants) {
      const reads = foldReads.get(v.name)!.get(held)!
      const score = new Map(reads.map((r) => [r.c, r.all]))
      row.push(auc(cs, (c) => score.get(c)!).toFixed(3))
      for (const rule of RULES) {
        const k = countsAt(reads, rule, chosen.get(`${v.name} ${rule}`)!)
        add(`${v.name} ${rule}`, k)
        row.push(show(k))
      }
    }
    table.push(row)
  }
  const sumRow = ['all six', show(total.get('detector')!), auc(convention, shippedBest).toFixed(3)]
  for (const v of variants) {
    const reads = [...foldReads.get(v.name)!.values()].flat()
    const score = new Map(reads.map((r) => [r.c, r.all]))
    sumRow.push(auc(convention, (c) => score.get(c)!).toFixed(3))
    for (const rule of RULES) sumRow.push(show(total.get(`${v.name} ${rule}`)!))
  }
  table.push(sumRow)
  table.push([
    'bound',
    '',
    '',
    ...variants.flatMap((v) => ['', ...RULES.map((r) => chosen.get(`${v.name} ${r}`)!.toFixed(2))]),
  ])
  console.log(`| ${header.join(' | ')} |`)
  console.log(`| ${header.map(() => '---').join(' | ')} |`)
  for (const row of table) console.log(`| ${row.join(' | ')} |`)

  console.log(
    "\nconfirmation: heads trained on all six authors, at the folds' bounds, on sets not trained on:",
  )
  const confirmHeader = ['set', 'detector', 'AUC shipped']
  for (const v of variants) confirmHeader.push(`AUC ${v.name}`, ...RULES.map((r) => `${v.name} ${r}`))
  console.log(`| ${confirmHeader.join(' | ')} |`)
  console.log(`| ${confirmHeader.map(() => '---').join(' | ')} |`)
  const finalHeads = new Map(variants.map((v) => [v.name, trainedOn(v.base, v.convention, AUTHORS)] as const))
  const changed: string[] = []
  for (const g of ['older', 'mid'] as const) {
    const cs = inGroup(g)
    const row = [
      g === 'older' ? 'older half' : 'fresh7 … fresh18',
      show(detector(cs)),
      auc(cs, shippedBest).toFixed(3),
    ]
    for (const v of variants) {
      const reads = readAll(finalHeads.get(v.name)!, v.fused, cs)
      const score = new Map(reads.map((r) => [r.c, r.all]))
      row.push(auc(cs, (c) => score.get(c)!).toFixed(3))
      for (const rule of RULES) {
        const bound = chosen.get(`${v.name} ${rule}`)!
        row.push(show(countsAt(reads, rule, bound)))
        if (v.name === CHANGES_OF && rule !== 'alone')
          for (const r of reads) {
            const says = decide(rule, r.all, r.replies, bound, r.c.found)
            if (says !== r.c.found)
              changed.push(
                `${rule}: ${r.c.key} ${says ? 'found' : 'lost'} (${r.c.labelled ? 'labelled' : 'not labelled'}; best ${r.all.toFixed(3)})`,
              )
          }
      }
    }
    console.log(`| ${row.join(' | ')} |`)
  }
  console.log(`\n${CHANGES_OF}'s changes on the confirmation sets:`)
  for (const line of changed) console.log(`  ${line}`)
}
if (!process.argv.includes('--swap') && !process.argv.includes('--write-sc')) partA()

// Part B (--swap): the head swapped into the detector. Each end-user unit's frustration head reading in the
// store's cues (frustrationUnits' heads, and emotionFrustration, the head on the whole) replaced by a trained
// head's, every rule and bound of the detector as they stand; all six signals counted, since frustration's
// neighbours (resolution, abandonment) read it too. S (the shipped head's data retrained) is the control: it
// should decide as the store does. SC per fold on the held-out author, trained on all six elsewhere.
function swapped(c: ScoredConversation, conv: Conversation, head: LinearHead): ScoredConversation {
  const byIndex = new Map(conv.users.map((u) => [u.index, u]))
  return {
    ...c,
    messages: c.messages.map((m, i) => {
      const u = byIndex.get(i)
      if (u === undefined || m.cues?.frustrationUnits === undefined) return m
      const heads = u.vectors.map((x) => Math.round(read(head, x) * 1000) / 1000)
      return {
        ...m,
        cues: {
          ...m.cues,
          frustrationUnits: m.cues.frustrationUnits.map((unit, j) => ({ ...unit, head: heads[j]! })),
          ...(m.cues.emotionFrustration === undefined ? {} : { emotionFrustration: heads[0]! }),
        },
      }
    }),
  }
}
type SignalCounts = Record<string, Counts>
function signalCounts(pairs: readonly { labels: readonly string[]; found: Set<string> }[]): SignalCounts {
  const out: SignalCounts = {}
  for (const s of BUILTIN_SIGNALS) {
    out[s] = { fp: 0, fn: 0 }
    for (const p of pairs) {
      if (p.found.has(s) && !p.labels.includes(s)) out[s]!.fp++
      if (!p.found.has(s) && p.labels.includes(s)) out[s]!.fn++
    }
  }
  return out
}
const line = (k: SignalCounts) => {
  const all = Object.values(k).reduce((n, x) => n + x.fp + x.fn, 0)
  return `${all} | ${BUILTIN_SIGNALS.map((s) => `${k[s]!.fp}/${k[s]!.fn}`).join(' | ')}`
}
if (process.argv.includes('--swap')) {
  console.log('\npart B, the head swapped into the detector (errors; fp/fn per signal):')
  console.log(`| head | group | errors | ${BUILTIN_SIGNALS.join(' | ')} |`)
  console.log(`| --- | --- | --- | ${BUILTIN_SIGNALS.map(() => '---').join(' | ')} |`)
  const indexed = store.conversations.map((c, i) => ({ c, conv: conversations[i]! }))
  const groups: readonly (readonly [string, (x: Conversation) => boolean])[] = [
    ...AUTHORS.map((a) => [`${a} held out`, (x: Conversation) => x.set === a] as const),
    ['convention, each author held out', (x: Conversation) => x.group === 'convention'],
    ['older half', (x: Conversation) => x.group === 'older'],
    ['fresh7 … fresh18', (x: Conversation) => x.group === 'mid'],
  ]
  for (const [name, inside] of groups) {
    const mine = indexed.filter((x) => inside(x.conv))
    console.log(
      `| v${store.version} (store) | ${name} | ${line(signalCounts(mine.map((x) => ({ labels: x.c.labels, found: storedSignalsFound(x.c) }))))} |`,
    )
    for (const base of ['S', 'SC'] as const) {
      const headOf = (set: string) =>
        base === 'S'
          ? trainedOn('shipped', false, [])
          : trainedOn(
              'shipped',
              true,
              AUTHORS.filter((a) => a !== set),
            )
      const found = mine.map((x) => ({
        labels: x.c.labels,
        found: storedSignalsFound(swapped(x.c, x.conv, headOf(x.c.set))),
      }))
      console.log(`| ${base} | ${name} | ${line(signalCounts(found))} |`)
    }
  }
}

// --write-sc (the candidate branch only): SC trained on all six authors written as sentiment-model.json's
// frustration head, rounded as train-sentiment.ts rounds, the other heads byte for byte.
if (process.argv.includes('--write-sc')) {
  const file = path.resolve(import.meta.dirname, '../services/analysis/src/providers/sentiment-model.json')
  const shipped = JSON.parse(readFileSync(file, 'utf8'))
  const head = trainedOn('shipped', true, AUTHORS)
  const r = (x: number) => Math.round(x * 1e5) / 1e5
  shipped.frustration = { weights: [Array.from(head.weights[0]!, r)], bias: [r(head.bias[0]!)] }
  writeFileSync(file, `${JSON.stringify(shipped)}\n`)
  console.log(`wrote ${file}: the frustration head SC (shipped data and fresh19 … fresh24)`)
}
