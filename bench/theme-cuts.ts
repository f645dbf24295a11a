/**
 * How a chatbot's topics are cut into themes, compared (issue 31, item 3): the topics of
 * `npm run bench:topics-multiturn`'s cases (two multi-turn chatbots, all 592 conversations in one, DSTC11
 * and CLINC150 single requests; each after placement and after re-clustering), each grouped by several
 * rules for choosing the Ward dendrogram's cut. Measured: themes, the largest theme's share of
 * conversations and of topics, the sum of the themes' shares, and on CLINC150 how well the themes match
 * its ten domains (NMI and ARI over the in-scope requests, each by its topic's theme; CLINC150's
 * domains.json, clinc/oos-eval, CC BY 3.0).
 *
 *   npm run bench:theme-cuts -- [--seed N]
 *
 * The topics are built once and cached under .cache/theme-cuts/ (git-ignored; delete it when topic
 * placement or re-clustering change).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { labelsAfter, similarities, wardMerges } from '../services/analysis/src/topics/agglomerative.ts'
import { currentTopic } from '../services/analysis/src/topics/recluster.ts'
import { clusterCentroids, MAX_THEMES } from '../services/analysis/src/topics/themes.ts'
import { OTHER_TOPIC, pointKey } from '../services/analysis/src/topics/topic-model.ts'
import { CLINC150_DOMAINS } from './quality/clinc150-domains.ts'
import { adjustedRandIndex, normalizedMutualInformation } from './quality/metrics.ts'
import { seededRandom, seededShuffle } from './support/random.ts'
import { type AnalysedConversation, analysed, FIRST_CHATBOT, place, recluster } from './topics-multiturn.ts'
import { embedded, type SetName } from './topics-offline.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const CACHE = path.join(ROOT, '.cache/theme-cuts')

interface CaseTopic {
  readonly centroid: Float32Array
  readonly size: number
  /** The conversations (indices) with a member in it. */
  readonly conversations: number[]
  /** Its members' intents (single-request sets only). */
  readonly intents: string[]
}
interface Case {
  readonly name: string
  readonly conversationsWithRequest: number
  readonly topics: CaseTopic[]
}

async function buildCases(seed: number): Promise<Case[]> {
  const shuffled = <T>(list: readonly T[]) => seededShuffle(list, seed)
  const all = await analysed()
  const chatbots: {
    name: string
    conversations: AnalysedConversation[]
    intents?: string[]
    batch: number
  }[] = [
    { name: 'A', conversations: all.filter((c) => FIRST_CHATBOT.has(c.set)), batch: 5 },
    { name: 'B', conversations: all.filter((c) => !FIRST_CHATBOT.has(c.set)), batch: 5 },
    { name: 'all 592 in one', conversations: all, batch: 5 },
  ]
  for (const set of ['dstc11', 'clinc150-test', 'clinc150-val'] as SetName[]) {
    const data = await embedded(set)
    chatbots.push({
      name: set,
      batch: 50,
      conversations: data.map((r, i) => ({
        id: String(i),
        set,
        messages: [
          {
            role: 'user',
            text: r.text,
            ...(r.embedding ? { embedding: r.embedding, terms: r.terms ?? [] } : {}),
          },
        ],
      })),
      intents: data.map((r) => r.intent),
    })
  }
  const cases: Case[] = []
  for (const chatbot of chatbots) {
    const order = shuffled(chatbot.conversations)
    const extract = (stage: string, run: Awaited<ReturnType<typeof place>>) => {
      const members = new Map<string, { conversations: Set<number>; intents: string[] }>()
      let withRequest = 0
      order.forEach((c, ci) => {
        let any = false
        c.messages.forEach((m, j) => {
          if (!m.embedding) return
          any = true
          const stored =
            run.topicOf.get(pointKey({ conversationId: c.id, messageId: String(j) })) ?? OTHER_TOPIC
          const topic = currentTopic(run.state, stored)
          if (topic === OTHER_TOPIC) return
          const entry = members.get(topic) ?? { conversations: new Set(), intents: [] }
          entry.conversations.add(ci)
          if (chatbot.intents) entry.intents.push(chatbot.intents[Number(c.id)]!)
          members.set(topic, entry)
        })
        if (any) withRequest++
      })
      const active = [...run.state.topics.values()]
        .filter((t) => t.mergedInto === null && !t.retired && t.size > 0)
        .sort((a, b) => (a.id < b.id ? -1 : 1))
      cases.push({
        name: `${chatbot.name}, ${stage}`,
        conversationsWithRequest: withRequest,
        topics: active.map((t) => ({
          centroid: Float32Array.from(t.centroid),
          size: t.size,
          conversations: [...(members.get(t.id)?.conversations ?? [])],
          intents: members.get(t.id)?.intents ?? [],
        })),
      })
    }
    const placed = await place(order, chatbot.batch)
    // Before re-clustering, which changes the topic state in place.
    extract('placed', placed)
    extract('re-clustered', recluster(order, placed))
  }
  return cases
}

async function cases(seed: number): Promise<Case[]> {
  const file = path.join(CACHE, `cases-${seed}.json`)
  if (existsSync(file)) {
    const rows = JSON.parse(readFileSync(file, 'utf8')) as (Omit<Case, 'topics'> & {
      topics: (Omit<CaseTopic, 'centroid'> & { centroid: number[] })[]
    })[]
    return rows.map((c) => ({
      ...c,
      topics: c.topics.map((t) => ({ ...t, centroid: Float32Array.from(t.centroid) })),
    }))
  }
  const built = await buildCases(seed)
  mkdirSync(CACHE, { recursive: true })
  writeFileSync(
    file,
    JSON.stringify(
      built.map((c) => ({ ...c, topics: c.topics.map((t) => ({ ...t, centroid: [...t.centroid] })) })),
    ),
  )
  return built
}

type Cut = (centroids: readonly Float32Array[], sizes: readonly number[]) => number[]

/** Ward merges with their heights (the Lance–Williams distance at each merge), lowest first. */
function wardHeights(sim: Float32Array, n: number): number[] {
  // Recomputed from the merges: the increase in within-group sum of squares each merge adds.
  const merges = wardMerges(sim, n)
  const parent = Array.from({ length: n }, (_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i]!
    return i
  }
  const members = new Map<number, number[]>(Array.from({ length: n }, (_, i) => [i, [i]]))
  const sse = (list: readonly number[]) => {
    // Sum of squared distances to the mean = (1 / 2m) Σ_ij ‖xi − xj‖² = (1 / m) Σ_{i<j} (2 − 2 s_ij).
    let s = 0
    for (let x = 0; x < list.length; x++)
      for (let y = x + 1; y < list.length; y++) s += 2 - 2 * sim[list[x]! * n + list[y]!]!
    return s / list.length
  }
  return merges.map(([a, b]) => {
    const ra = find(a)
    const rb = find(b)
    const ma = members.get(ra)!
    const mb = members.get(rb)!
    const joined = [...ma, ...mb]
    const h = sse(joined) - sse(ma) - sse(mb)
    parent[rb] = ra
    members.set(ra, joined)
    members.delete(rb)
    return h
  })
}

function silhouetteScore(
  labels: readonly number[],
  k: number,
  sim: Float32Array,
  n: number,
  w?: readonly number[],
) {
  const weight = (i: number) => (w ? w[i]! : 1)
  const sizes = new Float64Array(k)
  for (let i = 0; i < n; i++) sizes[labels[i]!]! += weight(i)
  const sums = new Float64Array(k)
  let total = 0
  let totalWeight = 0
  for (let i = 0; i < n; i++) {
    const own = labels[i]!
    totalWeight += weight(i)
    if (sizes[own]! - weight(i) <= 0) continue
    sums.fill(0)
    for (let j = 0; j < n; j++) if (j !== i) sums[labels[j]!]! += weight(j) * (1 - sim[i * n + j]!)
    const a = sums[own]! / (sizes[own]! - weight(i))
    let b = Number.POSITIVE_INFINITY
    for (let c = 0; c < k; c++) if (c !== own) b = Math.min(b, sums[c]! / sizes[c]!)
    const d = Math.max(a, b)
    total += weight(i) * (d > 0 ? (b - a) / d : 0)
  }
  return total / totalWeight
}

function calinskiHarabasz(
  labels: readonly number[],
  k: number,
  x: readonly Float32Array[],
  w?: readonly number[],
) {
  const n = x.length
  const dim = x[0]!.length
  const weight = (i: number) => (w ? w[i]! : 1)
  const mean = new Float64Array(dim)
  const means = Array.from({ length: k }, () => new Float64Array(dim))
  const mass = new Float64Array(k)
  let total = 0
  for (let i = 0; i < n; i++) {
    total += weight(i)
    mass[labels[i]!]! += weight(i)
    for (let d = 0; d < dim; d++) {
      mean[d]! += weight(i) * x[i]![d]!
      means[labels[i]!]![d]! += weight(i) * x[i]![d]!
    }
  }
  for (let d = 0; d < dim; d++) mean[d]! /= total
  for (let c = 0; c < k; c++) for (let d = 0; d < dim; d++) means[c]![d]! /= mass[c]!
  let between = 0
  let within = 0
  for (let c = 0; c < k; c++)
    for (let d = 0; d < dim; d++) between += mass[c]! * (means[c]![d]! - mean[d]!) ** 2
  for (let i = 0; i < n; i++)
    for (let d = 0; d < dim; d++) within += weight(i) * (x[i]![d]! - means[labels[i]!]![d]!) ** 2
  return between / (k - 1) / (within / (total - k))
}

const kRange = (n: number) => {
  const out: number[] = []
  for (let k = 2; k <= Math.min(MAX_THEMES, Math.floor(n / 2)); k++) out.push(k)
  return out
}

function byScore(
  score: (labels: number[], k: number, sim: Float32Array, n: number) => number,
  range = kRange,
): Cut {
  return (centroids) => {
    const n = centroids.length
    if (n < 4) return centroids.map(() => 0)
    const sim = similarities(centroids)
    const merges = wardMerges(sim, n)
    let best: { labels: number[]; score: number } | undefined
    for (const k of range(n)) {
      const labels = labelsAfter(merges, n, n - k)
      const s = score(labels, k, sim, n)
      if (!best || s > best.score) best = { labels, score: s }
    }
    return best?.labels ?? centroids.map(() => 0)
  }
}

/** The cut before the merge of largest height relative to the one before it (k in the usual range). */
const largestJump =
  (relative: boolean): Cut =>
  (centroids) => {
    const n = centroids.length
    if (n < 4) return centroids.map(() => 0)
    const sim = similarities(centroids)
    const merges = wardMerges(sim, n)
    const h = wardHeights(sim, n)
    let best: { k: number; score: number } | undefined
    for (const k of kRange(n)) {
      // At k groups, n − k merges were made; the next (index n − k) would join two of them.
      const next = h[n - k]!
      const last = h[n - k - 1]!
      const s = relative ? next / Math.max(last, 1e-9) : next - last
      if (!best || s > best.score) best = { k, score: s }
    }
    return labelsAfter(merges, n, n - best!.k)
  }

/**
 * Recursive: the silhouette cut; then each theme whose own topics' best silhouette cut scores at least
 * the cut it came from is split by it, the largest themes first, while there are fewer than MAX_THEMES.
 * `dominantOnly`: only a theme holding more than half the topics' mass is considered.
 */
const recursive =
  (dominantOnly: boolean, positive = false): Cut =>
  (centroids, sizes) => {
    const n = centroids.length
    if (n < 4) return centroids.map(() => 0)
    const bestCut = (idx: number[]) => {
      const m = idx.length
      if (m < 4) return undefined
      const sim = similarities(idx.map((i) => centroids[i]!))
      const merges = wardMerges(sim, m)
      let best: { labels: number[]; score: number; k: number } | undefined
      for (const k of kRange(m)) {
        const labels = labelsAfter(merges, m, m - k)
        const s = silhouetteScore(labels, k, sim, m)
        if (!best || s > best.score) best = { labels, score: s, k }
      }
      return best
    }
    const all = Array.from({ length: n }, (_, i) => i)
    const first = bestCut(all)!
    let groups: { idx: number[]; score: number }[] = []
    for (let c = 0; c <= Math.max(...first.labels); c++)
      groups.push({ idx: all.filter((i) => first.labels[i] === c), score: first.score })
    const totalMass = sizes.reduce((a, b) => a + b, 0)
    const mass = (g: { idx: number[] }) => g.idx.reduce((s, i) => s + sizes[i]!, 0)
    const tried = new Set<string>()
    for (;;) {
      if (groups.length >= MAX_THEMES) break
      const candidates = groups
        .filter((g) => !tried.has(g.idx.join(',')))
        .filter((g) => !dominantOnly || mass(g) > totalMass / 2)
        .sort((a, b) => mass(b) - mass(a))
      const g = candidates[0]
      if (!g) break
      tried.add(g.idx.join(','))
      const cut = bestCut(g.idx)
      if (!cut || (positive ? cut.score <= 0 : cut.score < g.score)) continue
      const k = Math.min(Math.max(...cut.labels) + 1, MAX_THEMES - groups.length + 1)
      const parts: { idx: number[]; score: number }[] = []
      for (let c = 0; c < k; c++)
        parts.push({ idx: g.idx.filter((_, j) => cut.labels[j] === c), score: cut.score })
      // Labels past k (when capped) join the last part.
      for (let j = 0; j < g.idx.length; j++) if (cut.labels[j]! >= k) parts[k - 1]!.idx.push(g.idx[j]!)
      groups = [...groups.filter((x) => x !== g), ...parts]
    }
    const labels = new Array<number>(n).fill(0)
    groups.forEach((g, c) => {
      for (const i of g.idx) labels[i] = c
    })
    return labels
  }

/** Within-group sum of squared distances to each group's mean, of vectors given by their similarities. */
function withinSse(
  labels: readonly number[],
  k: number,
  sim: Float32Array,
  n: number,
  self: Float64Array,
): number {
  const sizes = new Array<number>(k).fill(0)
  for (const l of labels) sizes[l]!++
  const pairs = new Float64Array(k)
  for (let i = 0; i < n; i++) {
    pairs[labels[i]!]! += self[i]!
    for (let j = i + 1; j < n; j++) if (labels[i] === labels[j]) pairs[labels[i]!]! += 2 * sim[i * n + j]!
  }
  // Σ‖x − mean‖² = Σ‖x‖² − ‖Σx‖² / m, with ‖Σx‖² = Σ_ij x_i·x_j.
  let out = 0
  for (let i = 0; i < n; i++) out += self[i]!
  for (let c = 0; c < k; c++) out -= pairs[c]! / sizes[c]!
  return out
}

/**
 * The gap statistic (Tibshirani, Walther and Hastie, 2001): log W_k of the Ward cuts against its mean
 * over 10 reference sets drawn uniformly in the data's bounding box (seeded), the smallest k in the usual
 * range with Gap(k) ≥ Gap(k + 1) − s(k + 1), else the largest gap.
 */
const gapStatistic: Cut = (centroids) => {
  const n = centroids.length
  if (n < 4) return centroids.map(() => 0)
  const dim = centroids[0]!.length
  const logW = (x: readonly Float32Array[]) => {
    const sim = new Float32Array(n * n)
    const self = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      let d = 0
      for (let t = 0; t < dim; t++) d += x[i]![t]! * x[i]![t]!
      self[i] = d
      for (let j = i + 1; j < n; j++) {
        let s = 0
        for (let t = 0; t < dim; t++) s += x[i]![t]! * x[j]![t]!
        sim[i * n + j] = s
        sim[j * n + i] = s
      }
    }
    // Ward on Euclidean distances: wardMerges reads 2 − 2s, right for unit vectors only; use ‖a‖² + ‖b‖² − 2s.
    const d = new Float32Array(n * n)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++)
        d[i * n + j] = i === j ? 0 : 1 - (self[i]! + self[j]! - 2 * sim[i * n + j]!) / 2
    const merges = wardMerges(d, n)
    const out = new Map<number, number>()
    for (let k = 2; k <= Math.min(MAX_THEMES + 1, n - 1); k++)
      out.set(k, Math.log(withinSse(labelsAfter(merges, n, n - k), k, sim, n, self)))
    return { out, merges }
  }
  const data = logW(centroids)
  const lo = new Float64Array(dim).fill(Number.POSITIVE_INFINITY)
  const hi = new Float64Array(dim).fill(Number.NEGATIVE_INFINITY)
  for (const c of centroids)
    for (let t = 0; t < dim; t++) {
      lo[t] = Math.min(lo[t]!, c[t]!)
      hi[t] = Math.max(hi[t]!, c[t]!)
    }
  const random = seededRandom(7)
  const refs = Array.from(
    { length: 10 },
    () =>
      logW(
        Array.from({ length: n }, () => {
          const v = new Float32Array(dim)
          for (let t = 0; t < dim; t++) v[t] = lo[t]! + random() * (hi[t]! - lo[t]!)
          return v
        }),
      ).out,
  )
  const gap = new Map<number, { g: number; s: number }>()
  for (const k of data.out.keys()) {
    const r = refs.map((m) => m.get(k)!)
    const mean = r.reduce((a, b) => a + b, 0) / r.length
    const sd = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / r.length)
    gap.set(k, { g: mean - data.out.get(k)!, s: sd * Math.sqrt(1 + 1 / r.length) })
  }
  const range = kRange(n)
  let chosen = range.find((k) => gap.has(k + 1) && gap.get(k)!.g >= gap.get(k + 1)!.g - gap.get(k + 1)!.s)
  if (chosen === undefined) chosen = range.reduce((a, b) => (gap.get(b)!.g > gap.get(a)!.g ? b : a))
  return labelsAfter(data.merges, n, n - chosen)
}

export const CUTS: Record<string, Cut> = {
  'silhouette, 2 … 12 (before)': byScore((l, k, s, n) => silhouetteScore(l, k, s, n)),
  "silhouette, √(n/2) … 12 (themes.ts before its cap on a theme's share)": (centroids) =>
    clusterCentroids(centroids),
  'silhouette, topics weighted by size': (centroids, sizes) =>
    byScore((l, k, s, n) => silhouetteScore(l, k, s, n, sizes))(centroids, sizes),
  'silhouette × (1 − largest theme share of messages)': (centroids, sizes) =>
    byScore((l, k, s, n) => {
      const mass = new Float64Array(k)
      for (let i = 0; i < n; i++) mass[l[i]!]! += sizes[i]!
      const total = mass.reduce((a, b) => a + b, 0)
      return silhouetteScore(l, k, s, n) * (1 - Math.max(...mass) / total)
    })(centroids, sizes),
  'Calinski–Harabasz': (centroids, sizes) =>
    byScore((l, k) => calinskiHarabasz(l, k, centroids))(centroids, sizes),
  'Calinski–Harabasz, weighted': (centroids, sizes) =>
    byScore((l, k) => calinskiHarabasz(l, k, centroids, sizes))(centroids, sizes),
  'gap statistic': gapStatistic,
  'largest jump in Ward height': largestJump(false),
  'largest relative jump in Ward height': largestJump(true),
  'recursive silhouette, any theme': recursive(false),
  'recursive silhouette, dominant theme': recursive(true),
  'recursive, dominant theme split while its cut scores > 0': recursive(true, true),
}

function evaluate(c: Case, labels: readonly number[]) {
  const k = Math.max(0, ...labels) + 1
  const convs = Array.from({ length: k }, () => new Set<number>())
  const topics = new Array<number>(k).fill(0)
  c.topics.forEach((t, i) => {
    topics[labels[i]!]!++
    for (const x of t.conversations) convs[labels[i]!]!.add(x)
  })
  const shares = convs.map((s) => s.size / c.conversationsWithRequest)
  const largest = shares.indexOf(Math.max(...shares))
  let nmi: number | undefined
  let ari: number | undefined
  if (c.topics.some((t) => t.intents.length > 0) && c.name.startsWith('clinc')) {
    const domainOf = new Map(Object.entries(CLINC150_DOMAINS).flatMap(([d, list]) => list.map((i) => [i, d])))
    const truth: string[] = []
    const got: string[] = []
    c.topics.forEach((t, i) => {
      for (const intent of t.intents) {
        const d = domainOf.get(intent)
        if (!d) continue
        truth.push(d)
        got.push(String(labels[i]))
      }
    })
    nmi = normalizedMutualInformation(truth, got)
    ari = adjustedRandIndex(truth, got)
  }
  return {
    k,
    largestConversations: shares[largest]!,
    largestTopics: topics[largest]! / c.topics.length,
    shareSum: shares.reduce((a, b) => a + b, 0),
    nmi,
    ari,
  }
}

async function main() {
  const { values } = parseArgs({ options: { seed: { type: 'string', default: '31' } } })
  const list = await cases(Number(values.seed))
  const pct = (x: number) => `${(100 * x).toFixed(0)} %`
  for (const [name, cut] of Object.entries(CUTS)) {
    console.log(`\n${name}`)
    console.log(
      '| case | topics | themes | largest: conversations | largest: topics | sum of shares | NMI / ARI to domains |',
    )
    console.log('|---|--:|--:|--:|--:|--:|--:|')
    for (const c of list) {
      const labels = cut(
        c.topics.map((t) => t.centroid),
        c.topics.map((t) => t.size),
      )
      const e = evaluate(c, labels)
      const domains = e.nmi === undefined ? '' : `${e.nmi.toFixed(3)} / ${e.ari!.toFixed(3)}`
      console.log(
        `| ${c.name} | ${c.topics.length} | ${e.k} | ${pct(e.largestConversations)} | ${pct(e.largestTopics)} | ${pct(e.shareSum)} | ${domains} |`,
      )
    }
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) await main()
