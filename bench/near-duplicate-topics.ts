/**
 * Near-duplicate topics after a small single-domain chatbot's first re-clustering (issue 31, item 3): trial5
 * saw "order, deliver, arrive" beside "arrive, order". On bench:topics-small's samples (DSTC11, one insurer;
 * CLINC150 one domain at a time), each placed and re-clustered as the reclusterer does, counted: pairs of
 * re-clustered topics whose members' mean similarity between them is at least that within one of them
 * (average linkage's criterion, the one placement merges by: topic-model.ts `merge`), or within both.
 * Then each sample's topics merged by that criterion, pair by pair, and NMI/ACC before and after, beside
 * the anchors (MiniLM + k-means told k, and k by silhouette) computed in the same run.
 *
 *   npm run bench:near-duplicates -- [--family dstc11|clinc150]... [--n 100,200] [--seeds 5] [--rule one|both]
 */
import { parseArgs } from 'node:util'
import { clusteringInput, currentTopic, decideRecluster } from '../services/analysis/src/topics/recluster.ts'
import * as model from '../services/analysis/src/topics/topic-model.ts'
import { OTHER_TOPIC, type Topic, type TopicState } from '../services/analysis/src/topics/topic-model.ts'
import { dot } from '../services/analysis/src/topics/vectors.ts'
import { windowClusters } from '../services/analysis/src/topics/window-clusters.ts'
import { computeAnchors } from './quality/anchors.ts'
import { clusteringAccuracy, normalizedMutualInformation } from './quality/metrics.ts'
import { placeInOrder, type Sample, samples } from './topics-small.ts'

const within = (t: Topic) => (dot(t.sum, t.sum) - t.size) / (t.size * (t.size - 1))
const between = (a: Topic, b: Topic) => dot(a.sum, b.sum) / (a.size * b.size)

/** Pairs of discovered topics that belong together: between ≥ within of one (`one`) or of both (`both`). */
export function nearDuplicates(topics: readonly Topic[], rule: 'one' | 'both'): [Topic, Topic][] {
  const out: [Topic, Topic][] = []
  for (let i = 0; i < topics.length; i++)
    for (let j = i + 1; j < topics.length; j++) {
      const a = topics[i]!
      const b = topics[j]!
      if (a.size < 2 || b.size < 2 || a.configured || b.configured) continue
      const s = between(a, b)
      const [wa, wb] = [within(a), within(b)]
      if (rule === 'one' ? s >= Math.min(wa, wb) : s >= Math.max(wa, wb)) out.push([a, b])
    }
  return out
}

/** Merges such pairs until none is left (the older survives), the closest pair first. */
function mergeAll(state: TopicState, rule: 'one' | 'both'): number {
  let merges = 0
  for (;;) {
    const active = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired && t.size > 0)
    const pairs = nearDuplicates(active, rule).sort((x, y) => between(y[0], y[1]) - between(x[0], x[1]))
    const pair = pairs[0]
    if (!pair) return merges
    const [into, from] = pair[0].seq < pair[1].seq ? pair : [pair[1], pair[0]]
    for (let k = 0; k < into.sum.length; k++) (into.sum as Float32Array)[k]! += from.sum[k]!
    into.size += from.size
    from.mergedInto = into.id
    merges++
  }
}

async function run(sample: Sample, rule: 'one' | 'both') {
  const placed = await placeInOrder(sample)
  const state = placed.state
  let next = placed.next
  const topicOf = placed.topicOf
  const key = (i: number) => model.pointKey({ conversationId: String(i), messageId: 'q' })
  const window = sample.requests.map((r, i) => ({
    conversationId: String(i),
    messageId: 'q',
    embedding: r.embedding,
    terms: r.terms,
    topicId: topicOf.get(key(i)) ?? OTHER_TOPIC,
  }))
  const { points, references } = clusteringInput(state, window)
  const numbers = windowClusters(
    points.map((p) => p.embedding),
    references,
  )
  const decision = decideRecluster(state, points, numbers, { newId: () => `r${next++}` })
  for (const r of decision.reassigned) topicOf.set(model.pointKey(r), r.topicId)
  const clusters = () =>
    sample.requests.map((_, i) => currentTopic(state, topicOf.get(key(i)) ?? OTHER_TOPIC))
  const active = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired && t.size > 0)
  const pairs = nearDuplicates(active, rule)
  const intents = sample.requests.map((r) => r.intent)
  // A pair "of one intent": both topics' majority intent the same.
  const majority = (t: Topic) => {
    const counts = new Map<string, number>()
    clusters().forEach((c, i) => {
      if (c === t.id) counts.set(intents[i]!, (counts.get(intents[i]!) ?? 0) + 1)
    })
    return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
  }
  const sameIntent = pairs.filter(([a, b]) => majority(a) === majority(b)).length
  const before = clusters()
  const merges = mergeAll(state, rule)
  const after = clusters()
  const topicsCount = (cs: readonly string[]) => new Set(cs.filter((c) => c !== OTHER_TOPIC)).size
  return {
    topics: active.length,
    pairs: pairs.length,
    sameIntent,
    merges,
    before: {
      nmi: normalizedMutualInformation(intents, before),
      acc: clusteringAccuracy(intents, before),
      topics: topicsCount(before),
    },
    after: {
      nmi: normalizedMutualInformation(intents, after),
      acc: clusteringAccuracy(intents, after),
      topics: topicsCount(after),
    },
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      family: { type: 'string', multiple: true },
      n: { type: 'string', default: '100,200' },
      seeds: { type: 'string', default: '5' },
      rule: { type: 'string', default: 'one' },
      'no-anchors': { type: 'boolean', default: false },
    },
  })
  const rule = values.rule === 'both' ? 'both' : 'one'
  for (const family of values.family ?? ['dstc11', 'clinc150']) {
    const sizes = values.n.split(',').map(Number)
    const all = await samples(family, sizes, Number(values.seeds))
    console.log(`\n${family}, rule "${rule}": ${all.length} samples`)
    console.log(
      '| n | samples | topics | samples with a pair | pairs | pairs of one intent | NMI before → after | ACC before → after | topics after | k-means told k NMI / ACC | k by silhouette NMI / ACC |',
    )
    console.log('|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
    for (const n of sizes.map(String)) {
      const at = all.filter((s) => s.size === n)
      if (at.length === 0) continue
      const rows: (Awaited<ReturnType<typeof run>> & {
        anchors: ReturnType<typeof computeAnchors> | undefined
      })[] = []
      for (const s of at) {
        const r = await run(s, rule)
        const anchors = values['no-anchors']
          ? undefined
          : computeAnchors(
              s.requests.map((x) => x.text),
              s.requests.map((x) => x.intent),
              s.requests.map((x) => x.embedding),
              31,
            )
        rows.push({ ...r, anchors })
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
      const f = (x: number) => x.toFixed(3)
      const anchor = (pick: 'embeddingsToldK' | 'silhouette') =>
        rows[0]!.anchors
          ? `${f(mean(rows.map((r) => r.anchors![pick].score.nmi)))} / ${f(mean(rows.map((r) => r.anchors![pick].score.acc)))}`
          : ''
      console.log(
        `| ${n} | ${rows.length} | ${mean(rows.map((r) => r.topics)).toFixed(1)} | ${rows.filter((r) => r.pairs > 0).length} | ${rows.reduce((s, r) => s + r.pairs, 0)} | ${rows.reduce((s, r) => s + r.sameIntent, 0)} | ${f(mean(rows.map((r) => r.before.nmi)))} → ${f(mean(rows.map((r) => r.after.nmi)))} | ${f(mean(rows.map((r) => r.before.acc)))} → ${f(mean(rows.map((r) => r.after.acc)))} | ${mean(rows.map((r) => r.after.topics)).toFixed(1)} | ${anchor('embeddingsToldK')} | ${anchor('silhouette')} |`,
      )
    }
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) await main()
