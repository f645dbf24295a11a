/**
 * npx tsx bench/frustration-pair.ts: issue 32, does reading an end user's reply together with the turn it answers
 * tell frustration better than reading the reply alone? Measure only (helper frust15); nothing of it ships.
 *
 * From the replay store (bench/signals-replay.ts --score, the shipped heads), each end-user reply to an assistant
 * message is embedded as one text with the analyzer's MiniLM: the assistant's last sentences (at most
 * PAIR_ASSISTANT_WORDS words, from the end) and the reply (at most PAIR_REPLY_WORDS words), within the model's 128
 * tokens. A linear head (train/linear.ts, as the frustration head) is trained on the conversations of one half,
 * multiple-instance: a conversation labelled frustration has at least one frustrated reply, so each round keeps
 * as its positive the reply the previous round read highest (round 0: all its replies), against every reply of
 * the conversations labelled none. The same is done on the reply alone (the store's vector of the whole message)
 * as the control, then both are read on the other half, and the other way round:
 * - AUC of the conversation's highest reply, labelled against not;
 * - the detector (signals-v of the store) with one more rule: frustration where a gated reply reads at least a
 *   bound, the bound chosen on the training half (fewest frustration errors), confirmed on the other;
 * - the gate's reach: replies after a failed turn (the failure margin ≥ THRESHOLDS.failure or an inability),
 *   after an answer said again, or whose whole the shipped head reads within GATE_BAND of emotionFrustration.
 *   One model text more per gated reply.
 * Then the heads' readings of probes/frustration-edges.json by kind.
 */

import { tmpdir } from 'node:os'
import path from 'node:path'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { embedSignalAnchors, type MessageCues } from '../services/analysis/src/signals/cues.ts'
import { THRESHOLDS } from '../services/analysis/src/signals/detect.ts'
import { embedCorpus } from '../services/analysis/train/embeddings.ts'
import { type LinearHead, logits, type Sample, sigmoid, train } from '../services/analysis/train/linear.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { loadSignalsSet, scoreConversation } from './quality/signals.ts'
import {
  developmentTexts,
  loadReplayStore,
  OLDER_HALF,
  storedSignalsFound,
} from './quality/signals-replay.ts'

const PAIR_ASSISTANT_WORDS = 40
const PAIR_REPLY_WORDS = 60
const GATE_BAND = 0.25
const ROUNDS = 3
const OPTIONS = { kind: 'sigmoid', epochs: 30, learningRate: 0.01, l2: 1e-4, batch: 128, seed: 1 } as const

interface Reply {
  readonly key: string
  readonly pair: string
  readonly gated: boolean
  readonly whole: number
}
interface Conversation {
  readonly key: string
  readonly half: 'older' | 'newer'
  readonly labelled: boolean
  readonly found: boolean
  readonly replies: Reply[]
}

function pairText(assistant: string, reply: string): string {
  const words = assistant.split(/\s+/).filter(Boolean)
  const said = words.slice(-PAIR_ASSISTANT_WORDS).join(' ')
  const answer = reply.split(/\s+/).filter(Boolean).slice(0, PAIR_REPLY_WORDS).join(' ')
  return `${said}\n${answer}`
}

function repliesOf(
  key: string,
  messages: readonly (readonly [string, string])[],
  cues: readonly (MessageCues | undefined)[],
): Reply[] {
  const out: Reply[] = []
  const saidBefore = new Set<string>()
  for (let i = 1; i < messages.length; i++) {
    const before = messages[i - 1]!
    const prior = cues[i - 1]
    if (before[0] === 'assistant') {
      const said = prior?.said ?? []
      const saidAgain = said.some((h) => saidBefore.has(h))
      for (const h of said) saidBefore.add(h)
      if (messages[i]![0] !== 'user') continue
      const failed = (prior?.failure ?? -1) >= THRESHOLDS.failure || prior?.inability === true
      const whole = cues[i]?.frustrationUnits?.[0]?.head ?? 0
      const near = Math.abs(whole - THRESHOLDS.emotionFrustration) <= GATE_BAND
      out.push({
        key: `${key} ${i}`,
        pair: pairText(before[1], messages[i]![1]),
        gated: failed || saidAgain || near,
        whole,
      })
    }
  }
  return out
}

const store = loadReplayStore()
const texts = developmentTexts()
const conversations: Conversation[] = []
for (const c of store.conversations) {
  const key = `${c.set} ${c.id}`
  const messages = texts.get(key)!
  const cues = c.messages.map((m) => m.cues)
  const found = storedSignalsFound(c)
  conversations.push({
    key,
    half: OLDER_HALF.has(c.set) ? 'older' : 'newer',
    labelled: c.labels.includes('frustration'),
    found: found.has('frustration'),
    replies: repliesOf(key, messages, cues),
  })
}
const aloneVectors = new Map<string, Float32Array>()
for (const c of store.conversations)
  c.messages.forEach((m, i) => {
    if (m.vector) aloneVectors.set(`${c.set} ${c.id} ${i}`, Float32Array.from(m.vector))
  })
// A reply the store holds no vector for (analysed without the model) is read by neither.
for (const c of conversations)
  c.replies.splice(0, c.replies.length, ...c.replies.filter((r) => aloneVectors.has(r.key)))
const replies = conversations.flatMap((c) => c.replies)
const pairVectors = new Map<string, Float32Array>()
const pairEmbeddings = await embedCorpus(
  'frustration-pairs',
  replies.map((r) => r.pair),
)
for (const [i, r] of replies.entries()) pairVectors.set(r.key, pairEmbeddings[i]!)

// The pair beside the reply alone: does the turn add to what the reply says?
const bothVectors = new Map<string, Float32Array>()
for (const r of replies) {
  const x = new Float32Array(768)
  x.set(aloneVectors.get(r.key)!)
  x.set(pairVectors.get(r.key)!, 384)
  bothVectors.set(r.key, x)
}

const userMessages = store.conversations.reduce(
  (n, c) => n + c.messages.filter((m) => m.role === 'user').length,
  0,
)
const gated = replies.filter((r) => r.gated).length
console.log(
  `${conversations.length} conversations, ${userMessages} end-user messages, ${replies.length} replies to an assistant message; ` +
    `gated ${gated} (${((100 * gated) / userMessages).toFixed(1)} % of end-user messages: one model text more each)`,
)

const read = (head: LinearHead, x: Float32Array) => sigmoid(logits(head, x)[0]!)

function trainMil(half: 'older' | 'newer', vectors: Map<string, Float32Array>): LinearHead {
  const mine = conversations.filter((c) => c.half === half && c.replies.length > 0)
  let head: LinearHead | undefined
  for (let round = 0; round < ROUNDS; round++) {
    const pos: Float32Array[] = []
    const neg: Float32Array[] = []
    for (const c of mine) {
      const xs = c.replies.map((r) => vectors.get(r.key)!)
      if (!c.labelled) neg.push(...xs)
      else if (head === undefined) pos.push(...xs)
      else {
        const h = head
        pos.push(xs.reduce((best, x) => (read(h, x) > read(h, best) ? x : best)))
      }
    }
    const samples: Sample[] = [
      ...pos.map((x) => ({ x, y: [1], weight: 5_000 / pos.length })),
      ...neg.map((x) => ({ x, y: [0], weight: 5_000 / neg.length })),
    ]
    head = train(samples, 1, OPTIONS)
  }
  return head!
}

function auc(pos: number[], neg: number[]): number {
  let s = 0
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0
  return s / (pos.length * neg.length)
}

/** Frustration errors of the detector with the rule "or a gated reply reads ≥ bound". */
function errorsWith(cs: readonly Conversation[], score: (c: Conversation) => number, bound: number) {
  let fp = 0
  let fn = 0
  for (const c of cs) {
    const says = c.found || score(c) >= bound
    if (says && !c.labelled) fp++
    if (!says && c.labelled) fn++
  }
  return { fp, fn, all: fp + fn }
}

const BOUNDS = Array.from({ length: 40 }, (_, i) => 0.6 + i * 0.01)
const VETOES = Array.from({ length: 30 }, (_, i) => 0.02 + i * 0.01)
const rows: string[] = []
const heads: Record<string, LinearHead> = {}
for (const [fit, test] of [
  ['older', 'newer'],
  ['newer', 'older'],
] as const) {
  for (const [name, vectors] of [
    ['pair', pairVectors],
    ['alone', aloneVectors],
    ['both', bothVectors],
  ] as const) {
    const head = trainMil(fit, vectors)
    heads[`${name} ${fit}`] = head
    const best = (c: Conversation, onlyGated: boolean) =>
      Math.max(
        0,
        ...c.replies.filter((r) => !onlyGated || r.gated).map((r) => read(head, vectors.get(r.key)!)),
      )
    const inHalf = (h: string) => conversations.filter((c) => c.half === h)
    const aucOf = (h: string) => {
      const cs = inHalf(h).filter((c) => c.replies.length > 0)
      return auc(
        cs.filter((c) => c.labelled).map((c) => best(c, false)),
        cs.filter((c) => !c.labelled).map((c) => best(c, false)),
      ).toFixed(3)
    }
    const base = (h: string) => errorsWith(inHalf(h), () => 0, 2)
    let chosen = 2
    let fewest = base(fit).all
    for (const b of BOUNDS) {
      const e = errorsWith(inHalf(fit), (c) => best(c, true), b).all
      if (e < fewest) [chosen, fewest] = [b, e]
    }
    const show = (h: string) => {
      const e = errorsWith(inHalf(h), (c) => best(c, true), chosen)
      const b = base(h)
      return `${b.all} (${b.fp}/${b.fn}) -> ${e.all} (${e.fp}/${e.fn})`
    }
    // The other use: a detection is taken back where every reply (gated or not) reads under a bound.
    const vetoed = (cs: readonly Conversation[], bound: number) => {
      let fp = 0
      let fn = 0
      for (const c of cs) {
        const says = c.found && !(c.replies.length > 0 && best(c, false) < bound)
        if (says && !c.labelled) fp++
        if (!says && c.labelled) fn++
      }
      return { fp, fn, all: fp + fn }
    }
    let veto = -1
    let fewestVeto = base(fit).all
    for (const b of VETOES) {
      const e = vetoed(inHalf(fit), b).all
      if (e < fewestVeto) [veto, fewestVeto] = [b, e]
    }
    const showVeto = (h: string) => {
      const e = vetoed(inHalf(h), veto)
      return `${e.all} (${e.fp}/${e.fn})`
    }
    rows.push(
      `${name.padEnd(5)} trained on ${fit}: AUC ${fit} ${aucOf(fit)}, ${test} ${aucOf(test)}; ` +
        `bound ${chosen === 2 ? 'none (no bound gains)' : chosen.toFixed(2)} on ${fit}: ${show(fit)}; on ${test}: ${show(test)}`,
    )
    rows.push(
      `      veto ${veto < 0 ? 'none (no bound gains)' : `under ${veto.toFixed(2)}`} on ${fit}: ${showVeto(fit)}; on ${test}: ${showVeto(test)}`,
    )
  }
}
for (const h of ['older', 'newer']) {
  const cs = conversations.filter((c) => c.half === h && c.replies.length > 0)
  const shipped = (c: Conversation) => Math.max(...c.replies.map((r) => r.whole))
  rows.unshift(
    `shipped head on the same replies (whole message), ${h} (${cs.length} conversations with a reply): AUC ` +
      auc(cs.filter((c) => c.labelled).map(shipped), cs.filter((c) => !c.labelled).map(shipped)).toFixed(3),
  )
}
console.log(rows.join('\n'))

// The probe at the convention's two edges: each reply's reading by the four heads, by kind.
const analyzer = await createSemanticAnalyzer({
  modelDir: TEST_MODEL_DIR,
  cacheDir: path.join(tmpdir(), 'bench-signals-models'),
  hubUrl: UNREACHABLE_HUB,
})
const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
const probe = loadSignalsSet(path.join(import.meta.dirname, 'data/signals/probes/frustration-edges.json'))
const byKind = new Map<string, { n: number; sums: number[] }>()
const probeReplies: { kind: string; pair: string; alone: Float32Array }[] = []
for (const c of probe) {
  const scored = await scoreConversation(analyzer, anchors, c)
  const rs = repliesOf(
    c.id,
    c.messages,
    scored.map((s) => s?.cues),
  )
  for (const r of rs) {
    const i = Number(r.key.split(' ').at(-1))
    probeReplies.push({ kind: c.id.split('-')[0]!, pair: r.pair, alone: scored[i]!.vector })
  }
}
const probePairs = await embedCorpus(
  'frustration-pairs-probe',
  probeReplies.map((r) => r.pair),
)
const names = Object.keys(heads)
probeReplies.forEach((r, i) => {
  const k = byKind.get(r.kind) ?? { n: 0, sums: names.map(() => 0) }
  names.forEach((name, j) => {
    const both = new Float32Array(768)
    both.set(r.alone)
    both.set(probePairs[i]!, 384)
    const x = name.startsWith('pair') ? probePairs[i]! : name.startsWith('both') ? both : r.alone
    k.sums[j]! += read(heads[name]!, x)
  })
  k.n++
  byKind.set(r.kind, k)
})
console.log(`frustration-edges, mean reading of the replies by kind: ${names.join(' | ')}`)
for (const [kind, k] of byKind)
  console.log(`  ${kind.padEnd(12)} (${k.n}) ${k.sums.map((s) => (s / k.n).toFixed(2)).join(' | ')}`)
