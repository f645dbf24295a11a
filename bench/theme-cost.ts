/**
 * What grouping a chatbot's topics into themes costs (issue 31; themes.ts `groupThemes`, run at each topic
 * decision that changes the topics' ids or labels, theme-store.ts): its parts timed in-process on topic
 * centroids of realistic size. The topics: CLINC150 test requests (embedded by the service's analyzer,
 * bench:topics-offline's cache) grouped by intent, each intent split in 1, 2 or 3 parts for 50, 100, 200
 * and 400 topics; each topic's terms are its requests' terms (labels.ts), its label by labelTopic.
 *
 *   npm run bench:theme-cost -- [--repeat N]
 *
 * Then the service's sequence (--replay): CLINC150 test (shuffled, batches of 50 requests) and the open
 * multi-turn sets (bench:topics-multiturn's conversations, batches of 5) placed by decideTopics as the
 * analysis worker commits them; after each decision that changes the topics' ids or labels (theme-store.ts's
 * signature) the themes are grouped twice, with the chatbot's SimilarityMemo and without, and compared as
 * JSON: the dot products computed and reused, the time of each, and any difference (there must be none).
 *
 * Per size: the operations (dot products of the similarity matrix, candidate scans of Ward's
 * nearest-neighbour chain, similarity reads of the silhouettes over the tried cuts) and the time of each
 * part, the similarity matrix (n(n−1)/2 dot products of d dimensions) being the floor any grouping of
 * these centroids pays unless it reuses them. Times are medians of --repeat runs, measured under whatever
 * load the machine has (say so when reporting).
 */
import { parseArgs } from 'node:util'
import {
  labelsAfter,
  poolClusters,
  similarities,
  wardMerges,
} from '../services/analysis/src/topics/agglomerative.ts'
import { labelTopic, termCorpus } from '../services/analysis/src/topics/labels.ts'
import { SimilarityMemo } from '../services/analysis/src/topics/similarity-memo.ts'
import {
  clusterCentroids,
  GROUPING_VERSION,
  groupThemes,
  type Theme,
  type ThemeTopic,
  themeCounts,
} from '../services/analysis/src/topics/themes.ts'
import {
  DEFAULT_TOPIC_OPTIONS,
  decideTopics,
  emptyTopicState,
  type NewPoint,
} from '../services/analysis/src/topics/topic-model.ts'
import { normalized } from '../services/analysis/src/topics/vectors.ts'
import { seededRandom } from './support/random.ts'
import { analysed } from './topics-multiturn.ts'
import { embedded } from './topics-offline.ts'

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '15' } } })
const REPEAT = Number(values.repeat)

function median(list: number[]): number {
  const s = [...list].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

function timed(run: () => unknown): number {
  const times: number[] = []
  for (let r = 0; r < REPEAT; r++) {
    const start = process.hrtime.bigint()
    run()
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return median(times)
}

async function topicsOf(count: number): Promise<ThemeTopic[]> {
  const rows = (await embedded('clinc150-test')).filter((r) => r.embedding && r.intent !== 'oos')
  const byIntent = new Map<string, typeof rows>()
  for (const r of rows) byIntent.set(r.intent, [...(byIntent.get(r.intent) ?? []), r])
  const intents = [...byIntent.keys()].sort()
  const parts = Math.ceil(count / intents.length)
  const groups: (typeof rows)[] = []
  for (let p = 0; p < parts; p++) {
    for (const intent of intents) {
      const list = byIntent.get(intent)!
      const size = Math.ceil(list.length / parts)
      groups.push(list.slice(p * size, (p + 1) * size))
    }
  }
  const chosen = groups.filter((g) => g.length > 0).slice(0, count)
  const terms = chosen.map((g) => {
    const counts = new Map<string, number>()
    for (const r of g) for (const t of r.terms ?? []) counts.set(t, (counts.get(t) ?? 0) + 1)
    return counts
  })
  const corpus = termCorpus(terms)
  return chosen.map((g, i) => {
    const sum = new Float32Array(g[0]!.embedding!.length)
    for (const r of g) for (let j = 0; j < sum.length; j++) sum[j]! += r.embedding![j]!
    const { label, keywords } = labelTopic(terms[i]!, corpus)
    return {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      label,
      keywords,
      terms: terms[i]!,
      centroid: normalized(sum),
      size: g.length,
    }
  })
}

console.log(`theme grouping's cost (median of ${REPEAT}); ms, measured under the current load`)
console.log(
  '| topics | d | cuts tried | dot products | similarity reads, silhouettes | similarity matrix ms | Ward ms | silhouettes + cuts ms | labels, ids ms | groupThemes ms |',
)
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const n of [50, 100, 200, 400]) {
  const topics = await topicsOf(n)
  const centroids = topics.map((t) => t.centroid)
  const d = centroids[0]!.length
  const cuts = themeCounts(n)
  const sim = similarities(centroids)
  const tSim = timed(() => similarities(centroids))
  const tWard = timed(() => wardMerges(sim, n))
  const merges = wardMerges(sim, n)
  const tCuts = timed(() => cuts.map((k) => labelsAfter(merges, n, n - k)))
  const tCluster = timed(() => clusterCentroids(centroids))
  const tGroup = timed(() => groupThemes(topics))
  const silhouetteAndCuts = Math.max(0, tCluster - tSim - tWard)
  console.log(
    `| ${n} | ${d} | ${cuts.length} | ${(n * (n - 1)) / 2} | ${cuts.length * n * n} | ${tSim.toFixed(2)} | ${tWard.toFixed(2)} | ${silhouetteAndCuts.toFixed(2)} (cuts alone ${tCuts.toFixed(2)}) | ${(tGroup - tCluster).toFixed(2)} | ${tGroup.toFixed(2)} |`,
  )
}

/** The service's decisions replayed in batches; each regrouping done with the memo and without, compared. */
async function replay(name: string, batches: NewPoint[][]): Promise<void> {
  const state = emptyTopicState('bench')
  let next = 0
  const deps = {
    newId: () => `00000000-0000-4000-8000-${String(next++).padStart(12, '0')}`,
    cluster: async (v: readonly Float32Array[], r: readonly Float32Array[]) => poolClusters(v, r),
  }
  const memo = new SimilarityMemo()
  let signature = ''
  let previous: Theme[] = []
  let regroups = 0
  let topicsSum = 0
  let differ = 0
  let withMemo = 0
  let without = 0
  for (const points of batches) {
    const decision = await decideTopics(state, points, [], deps, DEFAULT_TOPIC_OPTIONS)
    if (decision.events.length === 0) continue
    const topics = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired && t.size > 0)
    const now = JSON.stringify([
      GROUPING_VERSION,
      ...topics.map((t) => [t.id, t.label]).sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0)),
    ])
    if (now === signature) continue
    signature = now
    regroups++
    topicsSum += topics.length
    // Which goes first alternates: the second of two runs pays the first's garbage.
    const time = (run: () => Theme[]) => {
      // Process CPU time, not wall time: under load a run also waits for a core.
      const start = process.cpuUsage()
      const out = run()
      const used = process.cpuUsage(start)
      return { out, ms: (used.user + used.system) / 1000 }
    }
    const first = regroups % 2 === 0
    const a = first ? time(() => groupThemes(topics, previous)) : undefined
    const b = time(() => groupThemes(topics, previous, memo))
    const c = a ?? time(() => groupThemes(topics, previous))
    const fresh = c.out
    const reused = b.out
    without += c.ms
    withMemo += b.ms
    if (JSON.stringify(fresh) !== JSON.stringify(reused)) differ++
    previous = fresh
  }
  const pairs = memo.computed + memo.reused
  console.log(
    `| ${name} | ${regroups} | ${(topicsSum / Math.max(1, regroups)).toFixed(0)} | ${pairs} | ${memo.computed} (${((100 * memo.computed) / Math.max(1, pairs)).toFixed(0)} %) | ${without.toFixed(0)} | ${withMemo.toFixed(0)} | ${differ} |`,
  )
}

const pointsOf = (
  id: string,
  messages: readonly { embedding?: Float32Array; terms?: readonly string[]; text: string }[],
) =>
  messages.flatMap((m, j) =>
    m.embedding
      ? [
          {
            conversationId: id,
            messageId: String(j),
            embedding: m.embedding,
            terms: m.terms ?? [],
            text: m.text,
          },
        ]
      : [],
  )
const shuffled = <T>(list: readonly T[]) => {
  const random = seededRandom(1)
  const order = [...list]
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  return order
}
const inBatches = <T>(list: readonly T[], size: number) =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size))

console.log('')
console.log("the service's regroupings replayed: themes with the memo and without (process CPU ms)")
console.log(
  '| sequence | regroups | topics, mean | pairs | dot products computed | CPU ms without | CPU ms with memo | themes differing |',
)
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
const clinc = shuffled(await embedded('clinc150-test'))
await replay(
  'CLINC150 test, batches of 50',
  inBatches(
    clinc.flatMap((r, i) => pointsOf(String(i), [r])),
    50,
  ),
)
const conversations = shuffled(await analysed())
await replay(
  'multi-turn sets, 5 conversations a batch',
  inBatches(conversations, 5).map((batch) => batch.flatMap((c) => pointsOf(c.id, c.messages))),
)
