/**
 * What decides a small window's clustering (issue 31, item 2 of the many-domain chatbot; helper topics11):
 * multi-turn chatbot A of bench:topics-multiturn (172 conversations of many shops) placed as there, then its
 * first re-clustering's window taken apart. For every run the window tries (min_cluster_size ×
 * min_samples, minClusterSizeChoices × minSamplesChoices) and a few it does not (min_cluster_size 3–8, HDBSCAN
 * on the model's vectors without UMAP): the clusters HDBSCAN selects and its noise, then after noiseToNearest
 * and after splitLoose, each with its silhouette in the model's cosine space (what the window chooses by) and
 * in UMAP's space (Euclidean), its topic count, its largest cluster's share, and its purity and NMI against
 * the conversations' domains (the signal sets' `domain`: a rough truth, a conversation asks more than one thing).
 *
 *   npx tsx bench/topics-window-probe.ts [--seed N] [--chatbot A|B]
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { condensedTree, labelPoints, selectClusters } from '../services/analysis/src/topics/hdbscan.ts'
import { clusteringInput } from '../services/analysis/src/topics/recluster.ts'
import type { Vector } from '../services/analysis/src/topics/vectors.ts'
import {
  cosineSilhouette,
  groupSimilarity,
  meanPairwiseCosine,
  minClusterSizeChoices,
  minSamplesChoices,
  nearestNeighbours,
  noiseToNearest,
  splitLoose,
  umapEmbedding,
  WINDOW_CLUSTERING,
  windowClusters,
} from '../services/analysis/src/topics/window-clusters.ts'
import { normalizedMutualInformation } from './quality/metrics.ts'
import type { LabelledConversation } from './quality/signals.ts'
import { seededRandom } from './support/random.ts'
import { analysed, FIRST_CHATBOT, openSets, place, windowOf } from './topics-multiturn.ts'
import { WINDOW_CANDIDATES } from './topics-small-candidates.ts'

/** Mean silhouette under Euclidean distance (UMAP's space), exact O(n²); noise (−1) scores 0. */
function euclideanSilhouette(numbers: readonly number[], points: readonly number[][]): number {
  const n = numbers.length
  const ids = [...new Set(numbers.filter((x) => x >= 0))]
  if (ids.length < 2) return 0
  let total = 0
  for (let i = 0; i < n; i++) {
    if (numbers[i]! < 0) continue
    const sum = new Map<number, number>()
    const count = new Map<number, number>()
    for (let j = 0; j < n; j++) {
      if (j === i || numbers[j]! < 0) continue
      let d = 0
      for (let k = 0; k < points[i]!.length; k++) d += (points[i]![k]! - points[j]![k]!) ** 2
      sum.set(numbers[j]!, (sum.get(numbers[j]!) ?? 0) + Math.sqrt(d))
      count.set(numbers[j]!, (count.get(numbers[j]!) ?? 0) + 1)
    }
    const own = numbers[i]!
    if (!count.get(own)) continue
    const a = sum.get(own)! / count.get(own)!
    let b = Number.POSITIVE_INFINITY
    for (const c of ids) if (c !== own && count.get(c)) b = Math.min(b, sum.get(c)! / count.get(c)!)
    if (Math.max(a, b) > 0) total += (b - a) / Math.max(a, b)
  }
  return total / n
}

function describe(numbers: readonly number[], truth: readonly string[]) {
  const by = new Map<number, string[]>()
  numbers.forEach((c, i) => {
    by.set(c, [...(by.get(c) ?? []), truth[i]!])
  })
  let majority = 0
  for (const [c, members] of by) {
    if (c < 0) continue
    const counts = new Map<string, number>()
    for (const m of members) counts.set(m, (counts.get(m) ?? 0) + 1)
    majority += Math.max(...counts.values())
  }
  const clustered = numbers.filter((c) => c >= 0).length
  const sizes = [...by].filter(([c]) => c >= 0).map(([, m]) => m.length)
  return {
    clusters: sizes.length,
    noise: (numbers.length - clustered) / numbers.length,
    largest: Math.max(0, ...sizes) / numbers.length,
    purity: clustered > 0 ? majority / clustered : 0,
    nmi: normalizedMutualInformation(
      truth,
      numbers.map((c, i) => (c < 0 ? `noise ${i}` : String(c))),
    ),
  }
}

async function main() {
  const { values } = parseArgs({
    options: { seed: { type: 'string', default: '31' }, chatbot: { type: 'string', default: 'A' } },
  })
  const domainOf = new Map<string, string>()
  for (const set of openSets())
    for (const c of JSON.parse(readFileSync(set.file, 'utf8')) as LabelledConversation[])
      domainOf.set(`${set.name}/${c.id}`, c.domain)
  const all = await analysed()
  const conversations = all.filter((c) => FIRST_CHATBOT.has(c.set) === (values.chatbot === 'A'))
  const random = seededRandom(Number(values.seed))
  const order = [...conversations]
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  const run = await place(order, 5)
  const { points, references } = clusteringInput(run.state, windowOf(order, run))
  const vectors: Vector[] = points.map((p) => p.embedding)
  const truth = points.map((p) => domainOf.get(p.conversationId) ?? '?')
  const n = vectors.length
  // The gate's neighbours for its printed reading; UMAP below searches them again, inside the CPU measured.
  const knn = nearestNeighbours(vectors, WINDOW_CLUSTERING.neighbours)
  console.log(
    `chatbot ${values.chatbot}: ${conversations.length} conversations, window ${n} requests, ${new Set(truth).size} domains, references ${references.length}; load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
  console.log(
    `landed: minClusterSizeChoices ${JSON.stringify(minClusterSizeChoices(n, WINDOW_CLUSTERING))}; mean pairwise cosine ${meanPairwiseCosine(vectors).toFixed(4)} and group similarity ${groupSimilarity(knn.distances, WINDOW_CLUSTERING).toFixed(4)} (the many-domain gate: under ${WINDOW_CLUSTERING.manyDomainCosine} and ${WINDOW_CLUSTERING.manyDomainGroupSimilarity}, at ${WINDOW_CLUSTERING.manyDomainFrom}–${WINDOW_CLUSTERING.manyDomainBelow - 1} requests); windowClusters → ${new Set(windowClusters(vectors, references)).size} clusters`,
  )
  const cpu = process.cpuUsage()
  const umap = umapEmbedding(vectors, WINDOW_CLUSTERING)
  const spaces: [string, number[][]][] = [
    ['UMAP 5-d', umap],
    ['model (no UMAP)', vectors.map((v) => Array.from(v))],
  ]
  console.log(
    '| space | mcs | min_samples | selected (noise) | +nearest: topics, largest, sil cos, sil UMAP, purity, NMI | +splitLoose+nearest: topics, largest, sil cos, sil UMAP, purity, NMI |',
  )
  console.log('|---|--:|--:|--:|--:|--:|')
  const fmt = (x: number) => x.toFixed(3)
  for (const [space, coords] of spaces) {
    for (const minClusterSize of [8, 7, 6, 5, 4, 3]) {
      for (const minSamples of minSamplesChoices({ ...WINDOW_CLUSTERING, minClusterSize })) {
        const tree = condensedTree(coords, { minClusterSize, minSamples })
        const selected = selectClusters(tree, n)
        const raw = labelPoints(tree, selected, n)
        const d0 = describe(raw, truth)
        const near = noiseToNearest(raw, vectors)
        const d1 = describe(near, truth)
        const split = noiseToNearest(labelPoints(tree, splitLoose(tree, selected, vectors), n), vectors)
        const d2 = describe(split, truth)
        console.log(
          `| ${space} | ${minClusterSize} | ${minSamples} | ${d0.clusters} (${(100 * d0.noise).toFixed(0)} %), purity ${fmt(d0.purity)} | ${d1.clusters}, ${(100 * d1.largest).toFixed(0)} %, ${fmt(cosineSilhouette(near, vectors))}, ${fmt(euclideanSilhouette(near, umap))}, ${fmt(d1.purity)}, ${fmt(d1.nmi)} | ${d2.clusters}, ${(100 * d2.largest).toFixed(0)} %, ${fmt(cosineSilhouette(split, vectors))}, ${fmt(euclideanSilhouette(split, umap))}, ${fmt(d2.purity)}, ${fmt(d2.nmi)} |`,
        )
      }
    }
  }
  for (const [name, numbers] of [
    ['landed windowClusters', windowClusters(vectors, references)],
    ['split then choose', WINDOW_CANDIDATES['split then choose']!(vectors, references)],
    ['choose 3-8', WINDOW_CANDIDATES['choose 3-8']!(vectors, references)],
    ['split then choose 3-8', WINDOW_CANDIDATES['split then choose 3-8']!(vectors, references)],
    ['many-domain below 1501', WINDOW_CANDIDATES['many-domain below 1501']!(vectors, references)],
  ] as const) {
    const d = describe(numbers, truth)
    console.log(
      `${name}: ${d.clusters} clusters, largest ${(100 * d.largest).toFixed(0)} %, sil cos ${fmt(cosineSilhouette(numbers, vectors))}, purity ${fmt(d.purity)}, NMI ${fmt(d.nmi)}`,
    )
  }
  const used = process.cpuUsage(cpu)
  console.log(`CPU ${((used.user + used.system) / 1e6).toFixed(1)} s`)
}

await main()
