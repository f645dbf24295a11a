/**
 * Give-ups and dismissals after a request (issue 31, item 4; helper topics16): whether closings that are not
 * thanks ("forget it", the end user giving up at the end of a failed conversation, shown by trial5 as a topic's
 * Needs attention example) make a topic after the conversation's first request, and whether anchors of that
 * class, written from its definition (the end user drops the request, defers it to another channel, or gives
 * up; none is a message of any set), put beside the topic gate's social anchors, take the topic from them
 * without taking it from real requests asked second. The follow-up rule as the analyzer applies it
 * (requestEmbeddings and FOLLOW_UP_MARGIN against requests of every kind), each candidate's nearest similarity
 * added to the social side.
 *
 *   npm run bench:give-up-anchors
 *
 * Choose: the later end-user messages of the signal sets' older half (development … fresh6). Confirm: the
 * newer half (fresh7 on), CLINC150 validation and test and DSTC11 requests asked second (what a candidate
 * costs real requests, short ones listed), GoEmotions' short thanks. The signal sets are those bench:signals
 * lists, never one it flags blind (bench/quality/signals.ts, the one source).
 */
import { loadEmbeddingModel } from '../services/analysis/src/providers/embedding-model.ts'
import { ESCALATION_REQUEST_ANCHORS } from '../services/analysis/src/signals/anchors.ts'
import { REPLY_REQUEST_ANCHORS } from '../services/analysis/src/topics/answers.ts'
import {
  FOLLOW_UP_MARGIN,
  GIVE_UP_ANCHORS,
  REQUEST_ANCHORS,
  requestEmbeddings,
  TOPIC_SOCIAL_ANCHORS,
} from '../services/analysis/src/topics/requests.ts'
import { dot, type Vector } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import {
  clincRequests,
  dstc11Requests,
  gratitudeComments,
  laterUserMessages,
  signalsSetHalves,
  type Text,
} from './support/texts.ts'

/** The gate as landed measures itself: its social anchors without the give-ups, then each candidate added. */
const WITHOUT = TOPIC_SOCIAL_ANCHORS.filter((a) => !GIVE_UP_ANCHORS.includes(a))
const CANDIDATES: Record<string, readonly string[]> = {
  'give-ups (landed)': GIVE_UP_ANCHORS,
  ...Object.fromEntries(GIVE_UP_ANCHORS.map((a) => [a, [a]])),
  // Written from the same definition and measured, not kept (bench/FINDINGS.md, "give-ups made a topic").
  'I give up': ['I give up'],
  "I'll try somewhere else": ["I'll try somewhere else"],
  'just leave it': ['just leave it'],
  "I'll phone you instead": ["I'll phone you instead"],
  "don't bother": ["don't bother"],
  "it's fine, I don't need it anymore": ["it's fine, I don't need it anymore"],
  // Another channel as the end user's own plan, not a request to be put through (helper topics17); measured,
  // not kept: none takes "whatever, I'll call", each takes calls for a person (bench/FINDINGS.md, topics17).
  "I'll just ring them myself": ["I'll just ring them myself"],
  "never mind, I'll contact them another way": ["never mind, I'll contact them another way"],
  "I'll deal with it over the phone": ["I'll deal with it over the phone"],
  "fine, I'll go in person": ["fine, I'll go in person"],
}
/**
 * The end user's own plan to use another channel against a request to be contacted or put through (helper
 * topics18): a plan anchor counts on the social side only for a message nearer it than any anchor of a request
 * for contact, so that "whatever, I'll call" can be read as the plan and "can someone ring me back?" as the
 * request. The plans written from that definition, none a message of any set; the other side either four requests
 * for contact written so too, or the signals' asks for a person (ESCALATION_REQUEST_ANCHORS). Measured, not kept:
 * calls for a person still nearer the plan, and CLINC150's phone and coin requests lost (bench/FINDINGS.md, topics18).
 */
const CONTACT_REQUESTS = [
  'can someone call me back?',
  'please have someone contact me',
  'I want to speak to a real person',
  'put me through to an agent',
]
const CONTRASTED: Record<string, readonly string[]> = {
  "plans vs the signals' asks for a person: I'll phone you instead": ["I'll phone you instead"],
  "plans vs the signals' asks for a person: I'll just ring them myself": ["I'll just ring them myself"],
  "plans vs contact requests: I'll just ring them myself": ["I'll just ring them myself"],
  "plans vs contact requests: I'll deal with it over the phone": ["I'll deal with it over the phone"],
  'plans vs contact requests: all four plans': [
    "I'll just ring them myself",
    "never mind, I'll contact them another way",
    "I'll deal with it over the phone",
    "fine, I'll go in person",
  ],
}
/** Probes: the class as trial5 and issue 31 name it; not anchors, so they test them. */
const PROBES = [
  'forget it',
  'never mind',
  "whatever, I'll call",
  'oh forget it then',
  'nevermind, I will figure it out',
  "fine, I'll just go to the store",
  'where is my order?',
  'refund',
  'cancel it',
  'change my address',
  'and the delivery fee?',
]

const model = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})
const social = await model.embed(WITHOUT)
const request = await model.embed(REQUEST_ANCHORS)
const anyRequest = await model.embed(REPLY_REQUEST_ANCHORS)
const candidates = new Map<string, Vector[]>()
for (const [name, texts] of Object.entries(CANDIDATES)) candidates.set(name, await model.embed(texts))
const contrasted = new Map<string, Vector[]>()
for (const [name, texts] of Object.entries(CONTRASTED)) contrasted.set(name, await model.embed(texts))
const contactRequests = await model.embed(CONTACT_REQUESTS)
// The signals' own reading of a request for a person (signals/anchors.ts), reused as the other side.
const asksForPerson = await model.embed(ESCALATION_REQUEST_ANCHORS)
const nearest = (v: Vector, anchors: readonly Vector[]) => Math.max(...anchors.map((a) => dot(v, a)))

interface Read {
  readonly text: string
  readonly margin: number | undefined
  readonly withCandidate: ReadonlyMap<string, number>
}

async function read(texts: readonly string[]): Promise<Read[]> {
  const vectors = await model.embed(texts)
  const placed = await requestEmbeddings(
    texts,
    vectors,
    { social, request, otherRequest: anyRequest.slice(REQUEST_ANCHORS.length) },
    (t) => model.embed(t),
  )
  return texts.map((text, i) => {
    const p = placed[i]
    const withCandidate = new Map<string, number>()
    if (p)
      for (const [name, anchors] of candidates) {
        const socialSide = Math.max(nearest(p.embedding, social), nearest(p.embedding, anchors))
        withCandidate.set(name, socialSide - nearest(p.embedding, anyRequest))
      }
    if (p)
      for (const [name, plans] of contrasted) {
        const plan = nearest(p.embedding, plans)
        const other = name.startsWith("plans vs the signals'") ? asksForPerson : contactRequests
        const ownPlan = plan > nearest(p.embedding, other)
        const socialSide = Math.max(nearest(p.embedding, social), ownPlan ? plan : Number.NEGATIVE_INFINITY)
        withCandidate.set(name, socialSide - nearest(p.embedding, anyRequest))
      }
    return { text, margin: p?.margin, withCandidate }
  })
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`
const makesTopic = (m: number | undefined) => m !== undefined && m < FOLLOW_UP_MARGIN

console.log(
  `Follow-up margin ${FOLLOW_UP_MARGIN}; probes asked after a request, margin now → with each candidate:`,
)
for (const r of await read(PROBES)) {
  const each = [...r.withCandidate].map(([k, m]) => `${k} ${m.toFixed(3)}`).join(', ')
  console.log(`- ${JSON.stringify(r.text)}: ${r.margin?.toFixed(3) ?? 'no request'}; ${each}`)
}

const halves = signalsSetHalves()
const textsOf = (items: readonly Text[]) => items.map((i) => i.text)
const sets = [
  {
    name: 'signal sets, older half, later messages (choose)',
    texts: textsOf(laterUserMessages(halves.older)),
    list: true,
  },
  {
    name: 'signal sets, newer half, later messages (confirm)',
    texts: textsOf(laterUserMessages(halves.newer)),
    list: true,
  },
  { name: 'CLINC150 validation, requests', texts: textsOf(clincRequests('val')), list: false },
  { name: 'CLINC150 test, requests', texts: textsOf(clincRequests('test')), list: false },
  {
    name: 'DSTC11, requests',
    texts: textsOf(dstc11Requests()),
    list: false,
  },
  {
    name: 'GoEmotions gratitude, no "?", ≤ 6 words',
    texts: textsOf(gratitudeComments(false, 6)),
    list: false,
  },
]

const names = [...candidates.keys(), ...contrasted.keys()]
console.log(
  `\nAsked after a conversation's first request: the share that makes a topic (taken from how many)`,
)
console.log(`| set | messages | without | ${names.join(' | ')} |`)
console.log(`|---|--:|--:|${names.map(() => '--:').join('|')}|`)
const lists: string[] = []
for (const set of sets) {
  const reads = await read(set.texts)
  const now = reads.filter((r) => makesTopic(r.margin))
  const cells = names.map((name) => {
    const lost = now.filter((r) => !makesTopic(r.withCandidate.get(name)))
    const shown = set.list ? lost : lost.slice(0, 12)
    for (const r of shown)
      lists.push(
        `- ${name}, ${set.name}: ${JSON.stringify(r.text.slice(0, 90))} ${r.margin!.toFixed(3)} → ${r.withCandidate.get(name)!.toFixed(3)}`,
      )
    return `${pct(now.length - lost.length, reads.length)} (${lost.length})`
  })
  console.log(`| ${set.name} | ${reads.length} | ${pct(now.length, reads.length)} | ${cells.join(' | ')} |`)
}
console.log(`\nTopics taken:\n${lists.join('\n')}`)
