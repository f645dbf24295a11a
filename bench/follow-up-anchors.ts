/**
 * Complaints as questions after a request (issue 31, item 4): whether anchors of the follow-up kind, put
 * beside the social anchors for a conversation's later requests only, take the topic from messages such as
 * "so what am I supposed to do then" (after a bot failure) without taking it from real requests asked
 * second. The follow-up rule as the analyzer applies it (topics/requests.ts requestEmbeddings and
 * FOLLOW_UP_MARGIN, against requests of every kind), with each candidate set's nearest similarity added to
 * the social side.
 *
 *   npm run bench:follow-up-anchors
 *
 * Choose: the end users' later messages (after each conversation's first) of the open signal sets
 * (bench/data/signals; fresh9 … fresh33, every set bench:signals lists as blind, and the custom sets never
 * loaded), each listed when a candidate
 * takes its topic. Confirm: CLINC150 validation and test and DSTC11 requests, and GoEmotions' short thanks,
 * each asked second (as bench:requests' last table, whose figures the first column reproduces). Then the
 * share of those requests that lie no nearer a request anchor than a given similarity (an absolute floor).
 */
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { loadEmbeddingModel } from '../services/analysis/src/providers/embedding-model.ts'
import { REPLY_REQUEST_ANCHORS } from '../services/analysis/src/topics/answers.ts'
import {
  FOLLOW_UP_MARGIN,
  REQUEST_ANCHORS,
  requestEmbeddings,
  TOPIC_SOCIAL_ANCHORS,
} from '../services/analysis/src/topics/requests.ts'
import { dot, type Vector } from '../services/analysis/src/topics/vectors.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { OTHER_SIGNALS_SETS } from './quality/signals.ts'
import {
  clincRequests,
  dstc11Requests,
  gratitudeComments,
  laterUserMessages,
  type Text,
} from './support/texts.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const SIGNALS = path.join(ROOT, 'bench/data/signals')

/** Written in general English as rhetorical follow-ups; none is a message of the sets. */
const CANDIDATES: Record<string, readonly string[]> = {
  'what now': ['what now?', 'now what?', 'so what happens now?'],
  'expect me': ['what do you expect me to do?'],
  "can't help": ["so you can't help me then?"],
  'so now what': ['great, so now what?'],
  stuck: ["so I'm stuck then?"],
  'with that': ['and what am I supposed to do with that?'],
  'expect, can’t help, now what': [
    'what do you expect me to do?',
    "so you can't help me then?",
    'great, so now what?',
  ],
  complaints: [
    'what now?',
    'now what?',
    'are you serious?',
    'is that all you can say?',
    "that doesn't help me at all",
    "you're not helping",
    'why is this so difficult?',
    'this is ridiculous',
  ],
}
const EXAMPLES = ['so what am I supposed to do then', 'so what am i supposed to do', 'so what do i do']
const FLOORS = [0.3, 0.35, 0.37, 0.4]

const model = await loadEmbeddingModel({
  modelDir: TEST_MODEL_DIR,
  cacheDir: TEST_MODEL_DIR,
  hubUrl: UNREACHABLE_HUB,
})
const social = await model.embed(TOPIC_SOCIAL_ANCHORS)
const request = await model.embed(REQUEST_ANCHORS)
const anyRequest = await model.embed(REPLY_REQUEST_ANCHORS)
const candidates = new Map<string, Vector[]>()
for (const [name, texts] of Object.entries(CANDIDATES)) candidates.set(name, await model.embed(texts))
const nearest = (v: Vector, anchors: readonly Vector[]) => Math.max(...anchors.map((a) => dot(v, a)))

interface Read {
  readonly text: string
  /** The follow-up margin as the analyzer reads it; undefined for no request (social, data). */
  readonly margin: number | undefined
  readonly withCandidate: ReadonlyMap<string, number>
  readonly nearestRequest: number
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
    return { text, margin: p?.margin, withCandidate, nearestRequest: nearest(vectors[i]!, anyRequest) }
  })
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`
const makesTopic = (m: number | undefined) => m !== undefined && m < FOLLOW_UP_MARGIN

console.log(`Follow-up margin ${FOLLOW_UP_MARGIN}; the examples' margins, now and with each candidate:`)
for (const r of await read(EXAMPLES)) {
  const each = [...r.withCandidate].map(([k, m]) => `${k} ${m.toFixed(3)}`).join(', ')
  console.log(`- ${JSON.stringify(r.text)}: ${r.margin?.toFixed(3)}; ${each}`)
}

// The sets the choice was measured on: those before fresh9 (the newest then), and never a blind set, whatever its
// number (bench:signals' listing says which are blind).
const BLIND_FILES = new Set(
  OTHER_SIGNALS_SETS.filter((s) => s.blind === true).map((s) => path.basename(s.file)),
)
const later = laterUserMessages(
  readdirSync(SIGNALS)
    .filter(
      (f) => f.endsWith('.json') && !/custom|fresh(9|[12]\d|3[0-3])\.json$/.test(f) && !BLIND_FILES.has(f),
    )
    .map((f) => ({ name: path.basename(f, '.json'), file: path.join(SIGNALS, f) })),
)
const textsOf = (items: readonly Text[]) => items.map((i) => i.text)
const sets = [
  { name: 'signal sets, later end-user messages (choose)', texts: textsOf(later), list: true },
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

const names = [...candidates.keys()]
console.log(
  `\nAsked after a conversation's first request: the share that makes a topic (taken from how many)`,
)
console.log(`| set | messages | now | ${names.join(' | ')} |`)
console.log(`|---|--:|--:|${names.map(() => '--:').join('|')}|`)
const lists: string[] = []
const floors: string[] = []
for (const set of sets) {
  const reads = await read(set.texts)
  const now = reads.filter((r) => makesTopic(r.margin))
  const cells = names.map((name) => {
    const lost = now.filter((r) => !makesTopic(r.withCandidate.get(name)))
    if (set.list)
      for (const r of lost)
        lists.push(
          `- ${name}: ${JSON.stringify(r.text.slice(0, 90))} ${r.margin!.toFixed(3)} → ${r.withCandidate.get(name)!.toFixed(3)}`,
        )
    else if (lost.length > 0)
      lists.push(
        `- ${name}, ${set.name}: ${lost
          .slice(0, 4)
          .map((r) => JSON.stringify(r.text))
          .join(', ')}`,
      )
    return `${pct(now.length - lost.length, reads.length)} (${lost.length})`
  })
  console.log(`| ${set.name} | ${reads.length} | ${pct(now.length, reads.length)} | ${cells.join(' | ')} |`)
  if (!set.list)
    floors.push(
      `| ${set.name} | ${FLOORS.map((f) => pct(reads.filter((r) => r.nearestRequest < f).length, reads.length)).join(' | ')} |`,
    )
}
console.log(`\nTopics taken:\n${lists.join('\n')}`)
console.log(`\nRequests whose nearest request anchor (every kind) is below a similarity floor`)
console.log(`| set | ${FLOORS.map((f) => `< ${f}`).join(' | ')} |`)
console.log(`|---|${FLOORS.map(() => '--:').join('|')}|`)
console.log(floors.join('\n'))
