/**
 * npx tsx bench/frustration-pair-authors.ts: issue 32, does the model read frustration better from an end user's
 * reply read with the assistant's turn before it than from the reply alone, each author held out? Measure only
 * (helper sig22); nothing of it ships.
 *
 * From the replay store (bench/signals-replay.ts --score: every development set, never a blind one), each end-user
 * message right after an assistant message (a reply) is read five ways, each by a linear head (train/linear.ts,
 * OPTIONS) trained multiple-instance on conversation labels as frust15 and frust20 did (round 0: every reply of a
 * conversation labelled frustration positive, two more rounds keep only the reply the last round read highest;
 * every reply of a conversation labelled otherwise negative; the classes weigh the same):
 * - A: the reply alone (the store's vector of the whole message: the control);
 * - P: the pair, one text: the assistant's last PAIR_ASSISTANT_WORDS words, a line break, the reply's first
 *   PAIR_REPLY_WORDS words (frust15's form: reading order, the end of the turn is what the reply answers, and both
 *   fit MiniLM's 128 tokens), embedded by the analyzer's model;
 * - D: the reply and its difference from the assistant's turn (768 inputs: reply, reply − turn; both stored);
 * - AP: the reply and the pair side by side (768 inputs);
 * - SP: the shipped head on the reply and P, their logits averaged (no training beyond P's).
 * Leave one author out: every development set is one author's; each set's replies are read by heads trained on
 * the other 28 sets (all folds). The shipped frustration head (sentiment-model.json) is read on the reply (the
 * store's whole-message reading) and, untrained, on the pair's embedding. A conversation's score is its best reply.
 * Then, in the detector's place (all six signals counted; resolution and abandonment read frustration):
 * - "or": the detector (signals-v of the store), or a reply ≥ bound; "or, missed": only a reply after a missed turn
 *   (the assistant's failure ≥ THRESHOLDS.failure, an inability, an answer said again, or a reply that says it asks
 *   again or asked before);
 * - "swap": each reply's whole-message head reading (frustrationUnits[0], emotionFrustration) replaced by the
 *   variant's held-out reading moved by δ in logit space, every rule and bound of the detector as they stand.
 * Each bound and δ chosen on one half (fewest errors), read on the other, both ways round.
 */

import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { MessageCues } from '../services/analysis/src/signals/cues.ts'
import { BUILTIN_SIGNALS, THRESHOLDS } from '../services/analysis/src/signals/detect.ts'
import { embedCorpus } from '../services/analysis/train/embeddings.ts'
import { type LinearHead, sigmoid } from '../services/analysis/train/linear.ts'
import {
  developmentTexts,
  loadReplayStore,
  OLDER_HALF,
  type ScoredConversation,
  storedSignalsFound,
} from './quality/signals-replay.ts'
import { auc, logit, readHead as read, trainMultipleInstance } from './support/frustration-heads.ts'

const PAIR_ASSISTANT_WORDS = 40
const PAIR_REPLY_WORDS = 60
const ROUNDS = 3
const OPTIONS = { kind: 'sigmoid', epochs: 30, learningRate: 0.01, l2: 1e-4, batch: 128, seed: 1 } as const
const CONVENTION = ['fresh19', 'fresh20', 'fresh21', 'fresh22', 'fresh23', 'fresh24', 'fresh25', 'fresh26']

interface Reply {
  readonly index: number
  readonly pair: string
  readonly missed: boolean
  /** The shipped head on the whole reply (the store's cues). */
  readonly shipped: number
  readonly alone: Float32Array
  readonly turn: Float32Array
  pairVector: Float32Array
  /** Held-out readings by variant. */
  readonly reads: Map<string, number>
}
interface Conversation {
  readonly stored: ScoredConversation
  readonly set: string
  readonly half: 'older' | 'newer'
  readonly labelled: boolean
  readonly found: boolean
  /** The shipped head's best unit of any end-user message (what the detector reads). */
  readonly shippedAny: number
  readonly replies: Reply[]
}

function pairText(assistant: string, reply: string): string {
  const said = assistant.split(/\s+/).filter(Boolean).slice(-PAIR_ASSISTANT_WORDS).join(' ')
  const answer = reply.split(/\s+/).filter(Boolean).slice(0, PAIR_REPLY_WORDS).join(' ')
  return `${said}\n${answer}`
}

const store = loadReplayStore()
const texts = developmentTexts()
const conversations: Conversation[] = store.conversations.map((c) => {
  const messages = texts.get(`${c.set} ${c.id}`)!
  const cues = c.messages.map((m) => m.cues)
  const replies: Reply[] = []
  const saidBefore = new Set<string>()
  let shippedAny = 0
  c.messages.forEach((m, i) => {
    if (m.role === 'user')
      shippedAny = Math.max(shippedAny, ...(m.cues?.frustrationUnits ?? []).map((u) => u.head))
    if (m.role !== 'assistant') return
    const said = m.cues?.said ?? []
    const saidAgain = said.some((h) => saidBefore.has(h))
    for (const h of said) saidBefore.add(h)
    const next = c.messages[i + 1]
    if (next?.role !== 'user' || next.vector === undefined || m.vector === undefined) return
    const r: MessageCues | undefined = cues[i + 1]
    const missed =
      (m.cues?.failure ?? -1) >= THRESHOLDS.failure ||
      m.cues?.inability === true ||
      saidAgain ||
      (r?.reasks ?? -1) >= THRESHOLDS.reasks ||
      r?.askedBefore === true
    replies.push({
      index: i + 1,
      pair: pairText(messages[i]![1], messages[i + 1]![1]),
      missed,
      shipped: r?.frustrationUnits?.[0]?.head ?? r?.emotionFrustration ?? 0,
      alone: Float32Array.from(next.vector),
      turn: Float32Array.from(m.vector),
      pairVector: new Float32Array(0),
      reads: new Map(),
    })
  })
  return {
    stored: c,
    set: c.set,
    half: OLDER_HALF.has(c.set) ? 'older' : 'newer',
    labelled: c.labels.includes('frustration'),
    found: storedSignalsFound(c).has('frustration'),
    shippedAny,
    replies,
  }
})
const replies = conversations.flatMap((c) => c.replies)
const pairVectors = await embedCorpus(
  'sig22-pairs',
  replies.map((r) => r.pair),
)
replies.forEach((r, i) => {
  r.pairVector = pairVectors[i]!
})

const userMessages = store.conversations.reduce(
  (n, c) => n + c.messages.filter((m) => m.role === 'user').length,
  0,
)
const missed = replies.filter((r) => r.missed).length
const near = replies.filter((r) => Math.abs(r.shipped - THRESHOLDS.emotionFrustration) <= 0.25).length
const missedOrNear = replies.filter(
  (r) => r.missed || Math.abs(r.shipped - THRESHOLDS.emotionFrustration) <= 0.25,
).length
console.log(
  `${conversations.length} conversations of ${new Set(conversations.map((c) => c.set)).size} sets, ${userMessages} end-user messages; ` +
    `replies to an assistant message ${replies.length} (${(replies.length / userMessages).toFixed(3)} texts more per end-user message); ` +
    `after a missed turn ${missed} (${(missed / userMessages).toFixed(3)}); the shipped head within 0.25 of emotionFrustration ${near} ` +
    `(${(near / userMessages).toFixed(3)}); either ${missedOrNear} (${(missedOrNear / userMessages).toFixed(3)})`,
)

const model = JSON.parse(
  readFileSync(
    path.resolve(import.meta.dirname, '../services/analysis/src/providers/sentiment-model.json'),
    'utf8',
  ),
)
const shippedHead: LinearHead = {
  weights: [Float64Array.from(model.frustration.weights[0])],
  bias: Float64Array.from(model.frustration.bias),
}
// A check that the shipped head read here is the store's: the largest difference on the replies' wholes.
const drift = Math.max(...replies.map((r) => Math.abs(read(shippedHead, r.alone) - r.shipped)))
console.log(`shipped head re-read on the stored vectors: largest difference ${drift.toFixed(4)}`)

const concat = (a: Float32Array, b: ArrayLike<number>) => {
  const x = new Float32Array(a.length + b.length)
  x.set(a)
  x.set(b, a.length)
  return x
}
const FEATURES: Record<string, (r: Reply) => Float32Array> = {
  A: (r) => r.alone,
  P: (r) => r.pairVector,
  D: (r) =>
    concat(
      r.alone,
      r.alone.map((v, j) => v - r.turn[j]!),
    ),
  AP: (r) => concat(r.alone, r.pairVector),
}
const featureCache = new Map<string, Map<Reply, Float32Array>>()
for (const [name, f] of Object.entries(FEATURES))
  featureCache.set(name, new Map(replies.map((r) => [r, f(r)])))

function trainMil(pool: readonly Conversation[], variant: string): LinearHead {
  const xs = featureCache.get(variant)!
  return trainMultipleInstance(
    pool.map((c) => ({ labelled: c.labelled, xs: c.replies.map((r) => xs.get(r)!) })),
    { rounds: ROUNDS, options: OPTIONS },
  )
}

const sets = [...new Set(conversations.map((c) => c.set))]
const started = performance.now()
for (const held of sets) {
  const pool = conversations.filter((c) => c.set !== held)
  const mine = conversations.filter((c) => c.set === held).flatMap((c) => c.replies)
  for (const variant of Object.keys(FEATURES)) {
    const head = trainMil(pool, variant)
    const xs = featureCache.get(variant)!
    for (const r of mine) r.reads.set(variant, read(head, xs.get(r)!))
  }
}
for (const r of replies) {
  r.reads.set('shipped', r.shipped)
  r.reads.set('shipped on P', read(shippedHead, r.pairVector))
  r.reads.set('SP', sigmoid((logit(r.shipped) + logit(r.reads.get('P')!)) / 2))
}
console.log(`${sets.length} folds trained in ${((performance.now() - started) / 1000).toFixed(0)} s`)

const VARIANTS = ['shipped', 'shipped on P', 'A', 'P', 'D', 'AP', 'SP'] as const
type Score = (c: Conversation) => number
const bestReply =
  (variant: string, onlyMissed = false): Score =>
  (c) =>
    Math.max(0, ...c.replies.filter((r) => !onlyMissed || r.missed).map((r) => r.reads.get(variant)!))

/** Average precision, ties broken against the positives. */
function averagePrecision(cs: readonly Conversation[], score: Score): number {
  const ranked = cs
    .map((c) => ({ s: score(c), y: c.labelled }))
    .sort((a, b) => b.s - a.s || Number(a.y) - Number(b.y))
  let hits = 0
  let sum = 0
  ranked.forEach((x, i) => {
    if (!x.y) return
    hits++
    sum += hits / (i + 1)
  })
  return hits === 0 ? Number.NaN : sum / hits
}

const groups: readonly (readonly [string, (c: Conversation) => boolean])[] = [
  ...CONVENTION.map((a) => [a, (c: Conversation) => c.set === a] as const),
  ['fresh19 … fresh26', (c: Conversation) => CONVENTION.includes(c.set)],
  ['fresh7 … fresh18', (c: Conversation) => c.half === 'newer' && !CONVENTION.includes(c.set)],
  ['older half', (c: Conversation) => c.half === 'older'],
  ['newer half', (c: Conversation) => c.half === 'newer'],
]
console.log(
  '\nranking, each author held out (AUC / AP of the conversation\'s best reply; "shipped, any" its best end-user unit):',
)
console.log(`| set | conversations (frustration) | shipped, any | ${VARIANTS.join(' | ')} |`)
console.log(`| --- | --- | --- | ${VARIANTS.map(() => '---').join(' | ')} |`)
for (const [name, inside] of groups) {
  const cs = conversations.filter(inside)
  const cell = (s: Score) => `${auc(cs, s).toFixed(3)} / ${averagePrecision(cs, s).toFixed(3)}`
  console.log(
    `| ${name} | ${cs.length} (${cs.filter((c) => c.labelled).length}) | ${cell((c) => c.shippedAny)} | ${VARIANTS.map((v) => cell(bestReply(v))).join(' | ')} |`,
  )
}

// In the detector's place.
interface Counts {
  fp: number
  fn: number
}
type SignalCounts = Record<string, Counts>
const total = (k: SignalCounts) => Object.values(k).reduce((n, x) => n + x.fp + x.fn, 0)
const show = (k: SignalCounts) =>
  `${total(k)} (${BUILTIN_SIGNALS.map((s) => `${k[s]!.fp}/${k[s]!.fn}`).join(', ')})`
function countsOf(cs: readonly Conversation[], found: (c: Conversation) => Set<string>): SignalCounts {
  const out: SignalCounts = Object.fromEntries(BUILTIN_SIGNALS.map((s) => [s, { fp: 0, fn: 0 }]))
  for (const c of cs) {
    const f = found(c)
    for (const s of BUILTIN_SIGNALS) {
      const labelled = c.stored.labels.includes(s)
      if (f.has(s) && !labelled) out[s]!.fp++
      if (!f.has(s) && labelled) out[s]!.fn++
    }
  }
  return out
}
const foundCache = new Map<Conversation, Set<string>>(
  conversations.map((c) => [c, storedSignalsFound(c.stored)]),
)
const halves = ['older', 'newer'] as const
const inHalf = (h: string) => conversations.filter((c) => c.half === h)
for (const h of halves)
  console.log(`\ndetector (v${store.version}) ${h}: ${show(countsOf(inHalf(h), (c) => foundCache.get(c)!))}`)

const BOUNDS = Array.from({ length: 50 }, (_, i) => 0.5 + i * 0.01)
const orFound = (variant: string, onlyMissed: boolean, bound: number) => (c: Conversation) => {
  const f = new Set(foundCache.get(c)!)
  if (bestReply(variant, onlyMissed)(c) >= bound) f.add('frustration')
  return f
}
console.log(
  '\n"or" rules (all six signals; the bound chosen on one half, read on the other): errors (fp/fn per signal)',
)
for (const onlyMissed of [false, true])
  for (const variant of VARIANTS)
    for (const [fit, other] of [
      ['older', 'newer'],
      ['newer', 'older'],
    ] as const) {
      let bound = 2
      let fewest = total(countsOf(inHalf(fit), (c) => foundCache.get(c)!))
      for (const b of BOUNDS) {
        const e = total(countsOf(inHalf(fit), orFound(variant, onlyMissed, b)))
        if (e < fewest) [bound, fewest] = [b, e]
      }
      const at = (h: string) => show(countsOf(inHalf(h), orFound(variant, onlyMissed, bound)))
      console.log(
        `| ${onlyMissed ? 'or, missed' : 'or'} | ${variant} | ${fit} | ${bound === 2 ? 'none gains' : bound.toFixed(2)} | ${at(fit)} | ${at(other)} |`,
      )
    }

const DELTAS = Array.from({ length: 13 }, (_, i) => -3 + i * 0.5)
function swappedFound(variant: string, delta: number) {
  const memo = new Map<Conversation, Set<string>>()
  return (c: Conversation) => {
    const known = memo.get(c)
    if (known) return known
    if (c.replies.length === 0) return foundCache.get(c)!
    const byIndex = new Map(c.replies.map((r) => [r.index, r]))
    const moved: ScoredConversation = {
      ...c.stored,
      messages: c.stored.messages.map((m, i) => {
        const r = byIndex.get(i)
        if (r === undefined || m.cues?.frustrationUnits === undefined) return m
        const head = Math.round(sigmoid(logit(r.reads.get(variant)!) + delta) * 1000) / 1000
        return {
          ...m,
          cues: {
            ...m.cues,
            frustrationUnits: m.cues.frustrationUnits.map((u, j) => (j === 0 ? { ...u, head } : u)),
            ...(m.cues.emotionFrustration === undefined ? {} : { emotionFrustration: head }),
          },
        }
      }),
    }
    const f = storedSignalsFound(moved)
    memo.set(c, f)
    return f
  }
}
console.log(
  '\n"swap" (each reply\'s whole-message head reading replaced, moved by δ in logit space, chosen on one half):',
)
for (const variant of VARIANTS)
  for (const [fit, other] of [
    ['older', 'newer'],
    ['newer', 'older'],
  ] as const) {
    let delta = 0
    let fewest = Number.POSITIVE_INFINITY
    for (const d of DELTAS) {
      const e = total(countsOf(inHalf(fit), swappedFound(variant, d)))
      if (e < fewest) [delta, fewest] = [d, e]
    }
    const f = swappedFound(variant, delta)
    console.log(
      `| swap | ${variant} | ${fit} | ${delta} | ${show(countsOf(inHalf(fit), f))} | ${show(countsOf(inHalf(other), f))} |`,
    )
  }
