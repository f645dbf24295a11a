/**
 * Topics of a small single-domain chatbot, before and after its first re-clustering (issue 31, items 1
 * and 2). A real self-hoster starts with 100–500 conversations in one domain, where requests lie close
 * together; bench:quality measures whole sets. Here seeded samples of n requests are drawn from DSTC11's
 * development set (one domain: an insurer) and, separately, from one CLINC150 domain at a time (its
 * validation split: a domain's 15 intents, 20 requests each), embedded by the service's analyzer
 * (bench/topics-offline.ts, cached). For each sample, on the same vectors in the same run:
 *
 * - placement: the topic model fed the sample in order, in batches of 50 as the analysis worker commits
 *   them (topics/topic-model.ts decideTopics): the topics while settling, before any re-clustering;
 * - window: the first re-clustering of that state, as the reclusterer runs it (clusteringInput, the
 *   window clustering, decideRecluster): the topics after it. --candidate adds window clusterings beside
 *   the landed one, on the same state;
 * - anchors: MiniLM + k-means told k (the number of intents in the sample), and with k by silhouette.
 *
 * Scored against the intents: NMI, ACC (1:1), topic count (requests the model leaves in "other" form
 * one cluster of their own for the scores, and are not counted as a topic). Means per family and n, and
 * how many samples the window scores below placement, or below the silhouette anchor, in ACC.
 *
 * `mixed` (helper topics11): a many-domain chatbot, seeded samples of n requests (150, 250, 350) of the
 * whole CLINC150 validation split (ten domains, 150 intents), scored against the intents.
 *
 * `--clinc-split test` (helper topics12): the clinc150 and mixed families drawn from CLINC150's test split
 * (30 requests an intent) instead of validation, for a confirmation on requests nothing was chosen on;
 * `train` (helper topics13): its train split (100 an intent).
 *
 * `many` (helper topics13): a many-domain chatbot of `--n` intents (20, 40, 60) drawn from all 150, each
 * with `--per-intent` requests (4, 8, 12), `--seeds` samples of each (manyDomainSamples).
 *
 *   npm run bench:topics-small -- [--family dstc11|clinc150|mixed|many]... [--n 100,200,400,800] [--seeds 5]
 *                                 [--candidate NAME]... [--rows] [--no-anchors] [--clinc-split val|test|train]
 *                                 [--per-intent 4,8,12]
 */
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { poolClusters } from '../services/analysis/src/topics/agglomerative.ts'
import { clusteringInput, currentTopic, decideRecluster } from '../services/analysis/src/topics/recluster.ts'
import * as model from '../services/analysis/src/topics/topic-model.ts'
import { OTHER_TOPIC } from '../services/analysis/src/topics/topic-model.ts'
import type { Vector } from '../services/analysis/src/topics/vectors.ts'
import { windowClusters } from '../services/analysis/src/topics/window-clusters.ts'
import { computeAnchors } from './quality/anchors.ts'
import { CLINC150_DOMAINS } from './quality/clinc150-domains.ts'
import { clusteringAccuracy, normalizedMutualInformation } from './quality/metrics.ts'
import { loadAverages } from './support/machine.ts'
import { seededShuffle } from './support/random.ts'
import { type Embedded, embedded } from './topics-offline.ts'
import { WINDOW_CANDIDATES } from './topics-small-candidates.ts'

export type Clusterer = (vectors: readonly Vector[], references: readonly Vector[]) => number[]
export type Request = Embedded & { readonly embedding: Float32Array; readonly terms: readonly string[] }

export interface Sample {
  readonly family: string
  readonly name: string
  /** The n asked for ("all": a whole CLINC150 domain, 300 less the requests the gate leaves out). */
  readonly size: string
  readonly requests: readonly Request[]
}

interface Score {
  readonly nmi: number
  readonly acc: number
  readonly topics: number
  readonly largest: number
}

function score(intents: readonly string[], clusters: readonly string[]): Score {
  const counts = new Map<string, number>()
  for (const c of clusters) if (c !== OTHER_TOPIC) counts.set(c, (counts.get(c) ?? 0) + 1)
  return {
    nmi: normalizedMutualInformation(intents, clusters),
    acc: clusteringAccuracy(intents, clusters),
    topics: counts.size,
    largest: Math.max(0, ...counts.values()) / clusters.length,
  }
}

/**
 * The topic model fed the sample's requests in order, in batches of 50 as the analysis worker commits them, with
 * the pool clustered as the worker does: the placed state, each request's topic by its point key, and the next
 * free topic number.
 */
export async function placeInOrder(sample: Sample) {
  const state = model.emptyTopicState('bench')
  let next = 0
  const deps = {
    newId: () => `t${next++}`,
    cluster: async (v: readonly Vector[], r: readonly Vector[]) => poolClusters(v, r),
  }
  const topicOf = new Map<string, string>()
  for (let i = 0; i < sample.requests.length; i += 50) {
    const points = sample.requests.slice(i, i + 50).map((r, j) => ({
      conversationId: String(i + j),
      messageId: 'q',
      embedding: r.embedding,
      terms: r.terms,
      text: r.text,
    }))
    const decision = await model.decideTopics(state, points, [], deps, model.DEFAULT_TOPIC_OPTIONS)
    for (const [k, id] of decision.assigned) topicOf.set(k, id)
    for (const r of decision.reassigned) topicOf.set(model.pointKey(r), r.topicId)
  }
  return { state, topicOf, next }
}

/** Placement in order (batches of 50), then one re-clustering per clusterer, each on a copy of that state. */
export async function topicsOf(sample: Sample, clusterers: readonly [string, Clusterer][]) {
  const key = (i: number) => model.pointKey({ conversationId: String(i), messageId: 'q' })
  const place = () => placeInOrder(sample)
  const placed = await place()
  const placement = sample.requests.map((_, i) => currentTopic(placed.state, topicOf(placed.topicOf, key(i))))
  const windows: [string, string[]][] = []
  for (const [name, cluster] of clusterers) {
    // Each clusterer re-clusters the same placed state: placed again (deterministic), not shared.
    const { state, topicOf: placedTopics, next } = await place()
    const window = sample.requests.map((r, i) => ({
      conversationId: String(i),
      messageId: 'q',
      embedding: r.embedding,
      terms: r.terms,
      topicId: topicOf(placedTopics, key(i)),
    }))
    const { points, references } = clusteringInput(state, window)
    const numbers = cluster(
      points.map((p) => p.embedding),
      references,
    )
    let id = next
    const decision = decideRecluster(state, points, numbers, { newId: () => `r${id++}` })
    const after = new Map(placedTopics)
    for (const r of decision.reassigned) after.set(model.pointKey(r), r.topicId)
    windows.push([name, sample.requests.map((_, i) => currentTopic(state, topicOf(after, key(i))))])
  }
  return { placement, windows }
}

function topicOf(map: ReadonlyMap<string, string>, key: string): string {
  return map.get(key) ?? OTHER_TOPIC
}

/**
 * A many-domain chatbot whose intents each hold a set number of requests (helper topics13): `intents`
 * intents drawn at random from all 150 (ten domains), `perIntent` requests of each, in a random order.
 * At 4 an intent a domain's 6 intents of 60 hold 24 requests, groups HDBSCAN at 8 finds with little noise.
 */
function manyDomainSamples(
  rows: readonly Request[],
  intentCounts: readonly number[],
  seeds: number,
  perIntentCounts: readonly number[],
): Sample[] {
  const byIntent = new Map<string, Request[]>()
  for (const r of rows) byIntent.set(r.intent, [...(byIntent.get(r.intent) ?? []), r])
  const out: Sample[] = []
  for (const perIntent of perIntentCounts)
    for (const k of intentCounts)
      for (let s = 1; s <= seeds; s++) {
        const seed = 9000 * k + 100 * perIntent + s
        const intents = seededShuffle(
          [...byIntent.keys()].filter((i) => byIntent.get(i)!.length >= perIntent),
          seed,
        ).slice(0, k)
        const requests = intents.flatMap((i) => seededShuffle(byIntent.get(i)!, seed + 1).slice(0, perIntent))
        out.push({
          family: 'many',
          name: `${k} intents x ${perIntent} seed ${s}`,
          size: `${k}x${perIntent}`,
          requests: seededShuffle(requests, seed + 2),
        })
      }
  return out
}

export async function samples(
  family: string,
  sizes: readonly number[],
  seeds: number,
  clincSplit: 'clinc150-val' | 'clinc150-test' | 'clinc150-train' = 'clinc150-val',
  perIntent: readonly number[] = [4, 8, 12],
): Promise<Sample[]> {
  const withVector = (rows: readonly Embedded[]) =>
    rows.filter((r): r is Request => r.embedding !== undefined)
  const out: Sample[] = []
  if (family === 'dstc11') {
    const rows = withVector(await embedded('dstc11'))
    for (const n of sizes) {
      if (n > rows.length) continue
      for (let s = 1; s <= seeds; s++)
        out.push({
          family,
          name: `n=${n} seed ${s}`,
          size: String(n),
          requests: seededShuffle(rows, 1000 * n + s).slice(0, n),
        })
    }
    return out
  }
  const rows = withVector(await embedded(clincSplit))
  if (family === 'many') return manyDomainSamples(rows, sizes, seeds, perIntent)
  if (family === 'mixed') {
    // Many domains at once: n requests of the whole validation split (150 intents, ten domains).
    for (const n of sizes) {
      if (!Number.isFinite(n) || n > rows.length) continue
      for (let s = 1; s <= seeds; s++)
        out.push({
          family,
          name: `n=${n} seed ${s}`,
          size: String(n),
          requests: seededShuffle(rows, 7000 * n + s).slice(0, n),
        })
    }
    return out
  }
  for (const [domain, intents] of Object.entries(CLINC150_DOMAINS)) {
    const set = new Set(intents)
    const domainRows = rows.filter((r) => set.has(r.intent))
    for (const n of sizes) {
      if (n >= domainRows.length && Number.isFinite(n)) continue
      // The whole domain once; a part of it seeds / 5 times (at least once), each domain its own seeds.
      const draws = Number.isFinite(n) ? Math.max(1, Math.round(seeds / 5)) : 1
      for (let s = 1; s <= draws; s++)
        out.push({
          family,
          name: `n=${Math.min(n, domainRows.length)} ${domain} seed ${s}`,
          size: Number.isFinite(n) ? String(n) : 'all',
          requests: seededShuffle(
            domainRows,
            1000 * Math.min(n, domainRows.length) + s + domain.length,
          ).slice(0, n),
        })
    }
  }
  return out
}

async function main() {
  const { values } = parseArgs({
    options: {
      family: { type: 'string', multiple: true },
      n: { type: 'string' },
      seeds: { type: 'string', default: '5' },
      candidate: { type: 'string', multiple: true },
      rows: { type: 'boolean', default: false },
      'no-anchors': { type: 'boolean', default: false },
      'clinc-split': { type: 'string', default: 'val' },
      'per-intent': { type: 'string', default: '4,8,12' },
    },
  })
  const families = values.family ?? ['dstc11', 'clinc150']
  const clusterers: [string, Clusterer][] = [['window (landed)', (v, r) => windowClusters(v, r)]]
  for (const name of values.candidate ?? []) {
    const candidate = WINDOW_CANDIDATES[name]
    if (!candidate) throw new Error(`--candidate: one of ${Object.keys(WINDOW_CANDIDATES).join(', ')}`)
    clusterers.push([`window: ${name}`, candidate])
  }
  const cpu = process.cpuUsage()
  console.log(`load average ${loadAverages()}`)
  for (const family of families) {
    const sizes = (
      values.n ??
      (family === 'dstc11'
        ? '100,200,400,800'
        : family === 'mixed'
          ? '150,250,350'
          : family === 'many'
            ? '20,40,60'
            : '100,200,all')
    )
      .split(',')
      .map((x) => (x === 'all' ? Number.POSITIVE_INFINITY : Number(x)))
    const split = `clinc150-${values['clinc-split']}`
    if (split !== 'clinc150-val' && split !== 'clinc150-test' && split !== 'clinc150-train')
      throw new Error('--clinc-split: one of val, test, train')
    const perIntent = values['per-intent'].split(',').map(Number)
    const all = await samples(family, sizes, Number(values.seeds), split, perIntent)
    type Row = { n: string; method: string; score: Score; intents: number }
    const rows: Row[] = []
    for (const sample of all) {
      const intents = sample.requests.map((r) => r.intent)
      const k = new Set(intents).size
      const n = sample.size
      const { placement, windows } = await topicsOf(sample, clusterers)
      const add = (method: string, s: Score) => {
        rows.push({ n, method, score: s, intents: k })
        if (values.rows)
          console.log(
            `${family} ${sample.name} | ${method} | NMI ${s.nmi.toFixed(3)} ACC ${s.acc.toFixed(3)} topics ${s.topics} (${k} intents) largest ${(100 * s.largest).toFixed(0)} %`,
          )
      }
      add('placement (settling)', score(intents, placement))
      for (const [name, clusters] of windows) add(name, score(intents, clusters))
      if (!values['no-anchors']) {
        const anchors = computeAnchors(
          sample.requests.map((r) => r.text),
          intents,
          sample.requests.map((r) => r.embedding),
          31,
        )
        for (const [name, a] of [
          ['MiniLM + k-means told k', anchors.embeddingsToldK],
          ['MiniLM + k-means, k by silhouette', anchors.silhouette],
        ] as const) {
          const k = /k = (\d+)/.exec(a.name)?.[1]
          add(name, { nmi: a.score.nmi, acc: a.score.acc, topics: Number(k ?? 0), largest: Number.NaN })
        }
      }
    }
    console.log(`\n${family}: ${all.length} samples`)
    console.log(
      '| n | method | samples | NMI | ACC | topics | intents | largest | ACC below placement | ACC below silhouette |',
    )
    console.log('|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|')
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    for (const n of [...new Set(rows.map((r) => r.n))]) {
      const at = rows.filter((r) => r.n === n)
      const methods = [...new Set(at.map((r) => r.method))]
      const accOf = (method: string) => at.filter((r) => r.method === method).map((r) => r.score.acc)
      for (const method of methods) {
        const mine = at.filter((r) => r.method === method)
        const acc = accOf(method)
        const below = (other: string) => {
          const theirs = accOf(other)
          if (theirs.length !== acc.length || method === other || !method.startsWith('window')) return ''
          return `${acc.filter((a, i) => a < theirs[i]!).length} of ${acc.length}`
        }
        const largest = mean(mine.map((r) => r.score.largest))
        console.log(
          `| ${n} | ${method} | ${mine.length} | ${mean(mine.map((r) => r.score.nmi)).toFixed(3)} | ${mean(acc).toFixed(3)} | ${mean(mine.map((r) => r.score.topics)).toFixed(1)} | ${mean(mine.map((r) => r.intents)).toFixed(1)} | ${Number.isNaN(largest) ? '' : `${(100 * largest).toFixed(1)} %`} | ${below('placement (settling)')} | ${below('MiniLM + k-means, k by silhouette')} |`,
        )
      }
    }
  }
  const used = process.cpuUsage(cpu)
  console.log(`\nCPU ${((used.user + used.system) / 1e6).toFixed(0)} s; load average ${loadAverages()}`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
