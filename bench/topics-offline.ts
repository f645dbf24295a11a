/**
 * Topic discovery measured offline (issue 31): no API, no database. Each data set is embedded once with the
 * service's own analyzer (providers/semantic.ts: the same model, the same terms) and cached under
 * .cache/topics-offline/ (git-ignored); then decideTopics (topics/topic-model.ts) places its requests in a
 * seeded shuffled order, in batches as the analysis worker commits them, and the final topics are scored
 * against the intents.
 *
 *   npm run bench:topics-offline -- [--set clinc150-test|clinc150-val|dstc11]... [--baseline DIR]
 *                                    [--seed N] [--batch N] [--option name=value]... [--anchors]
 *
 * --baseline DIR: a checkout of an earlier commit (`git worktree add /tmp/old <commit>`, with
 * node_modules linked in) whose topic model is run on the same vectors, in the same order, beside this one.
 * --option: this checkout's TopicModelOptions overridden (how its constants were chosen: bench/FINDINGS.md).
 * --anchors: bench/quality/anchors.ts on the same vectors (the requests with a content word).
 * --window: instead of the online model, the background re-clustering of one window (topics/recluster.ts)
 * holding every request of the set, on an empty state: the landed window clustering (UMAP + HDBSCAN,
 * topics/window-clusters.ts) beside the silhouette-cut average linkage it replaced (agglomerative.ts);
 * --min-cluster-size 5,8,10 and --umap-seed 31,32 add HDBSCAN rows (how min_cluster_size was chosen).
 * --epochs N: UMAP's epochs for those rows (default: umap-js's choice).
 * --time N: the two window clusterings timed in-process on N real request vectors (the three sets'
 * together, first N), with the resident set before and after.
 * labels: label agreement (bench/quality/label-agreement.ts) of the final topics; --show-labels lists
 * the labels that share no stem with their majority intent. LABEL_VARIANTS=1: the agreement of other
 * labellers on the same final topics, and the ceiling of any label from the members' repeated words
 * (bench/FINDINGS.md "Issue 31, items 3 and 5"); and the phrase labellers of quality/phrase-labels.ts (the
 * members' phrase nearest the topic's centroid, KeyBERT-style, and its MMR variants), each labeller's mean
 * words a label, and twenty topics' labels side by side (bench/FINDINGS.md "phrase labels nearest the topic's centroid").
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { poolClusters } from '../services/analysis/src/topics/agglomerative.ts'
import { termCorpus } from '../services/analysis/src/topics/labels.ts'
import { clusteringInput, decideRecluster } from '../services/analysis/src/topics/recluster.ts'
import * as current from '../services/analysis/src/topics/topic-model.ts'
import { WINDOW_CLUSTERING, windowClusters } from '../services/analysis/src/topics/window-clusters.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { computeAnchors } from './quality/anchors.ts'
import { createLabelAgreement } from './quality/label-agreement.ts'
import { adjustedRandIndex, clusteringAccuracy, normalizedMutualInformation } from './quality/metrics.ts'
import { phraseCandidates, phraseLabellers } from './quality/phrase-labels.ts'
import { loadAverages } from './support/machine.ts'
import { seededRandom } from './support/random.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const DATA = path.resolve(ROOT, '../shared/data')
const CACHE = path.join(ROOT, '.cache/topics-offline')
export const SETS = ['clinc150-test', 'clinc150-val', 'dstc11'] as const
export type SetName = (typeof SETS)[number]
/** CLINC150's train split (100 requests an intent) is loaded on demand (bench:topics-small), not among SETS. */
type AnySet = SetName | 'clinc150-train'

interface Labelled {
  readonly text: string
  readonly intent: string
}
export interface Embedded extends Labelled {
  readonly embedding?: Float32Array
  readonly terms?: readonly string[]
}

function load(set: AnySet): Labelled[] {
  if (set === 'dstc11') {
    return readFileSync(path.join(DATA, 'dstc11/development.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { utterance: string; intent: string })
      .map((r) => ({ text: r.utterance, intent: r.intent }))
  }
  const full = JSON.parse(readFileSync(path.join(DATA, 'clinc150/data_full.json'), 'utf8')) as Record<
    string,
    [string, string][]
  >
  const split = set === 'clinc150-test' ? 'test' : set === 'clinc150-train' ? 'train' : 'val'
  return full[split]!.map(([text, intent]) => ({ text, intent }))
}

/** The requests with the service's results, cached per analyzer version (a change of model or rules re-embeds). */
export async function embedded(set: AnySet): Promise<Embedded[]> {
  const analyzer = await createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(ROOT, '.cache/models'),
    hubUrl: UNREACHABLE_HUB,
  })
  const version = createHash('sha256').update(analyzer.info.version).digest('hex').slice(0, 12)
  const file = path.join(CACHE, `${set}-${version}.json`)
  if (existsSync(file)) {
    const rows = JSON.parse(readFileSync(file, 'utf8')) as (Labelled & { e?: string; terms?: string[] })[]
    return rows.map((r) => ({
      text: r.text,
      intent: r.intent,
      ...(r.e ? { embedding: new Float32Array(new Uint8Array(Buffer.from(r.e, 'base64')).buffer) } : {}),
      ...(r.terms ? { terms: r.terms } : {}),
    }))
  }
  const rows = load(set)
  const out: Embedded[] = []
  for (let i = 0; i < rows.length; i += 256) {
    const chunk = rows.slice(i, i + 256)
    const results = await analyzer.analyzeMessages(
      // Each request a conversation of its own (turnBefore, as the service marks each job's first message):
      // a request after another in the same conversation makes a topic only when it clearly asks.
      chunk.map((r, j) => ({ id: String(j), role: 'user' as const, content: r.text, turnBefore: {} })),
      {},
    )
    results.forEach((r, j) => {
      out.push({
        ...chunk[j]!,
        ...(r.embedding ? { embedding: r.embedding, terms: r.terms ?? [] } : {}),
      })
    })
  }
  mkdirSync(CACHE, { recursive: true })
  writeFileSync(
    file,
    JSON.stringify(
      out.map((r) => ({
        text: r.text,
        intent: r.intent,
        ...(r.embedding
          ? {
              e: Buffer.from(r.embedding.buffer, r.embedding.byteOffset, r.embedding.byteLength).toString(
                'base64',
              ),
              terms: r.terms,
            }
          : {}),
      })),
    ),
  )
  return out
}

type TopicModule = typeof current
interface Model {
  readonly name: string
  readonly topics: TopicModule
  readonly cluster: (vectors: readonly Float32Array[], arg: never) => Promise<number[]>
  /** Options overriding the module's defaults (--option name=value: this checkout's only). */
  readonly options?: Record<string, number>
}

async function modelAt(name: string, dir: string): Promise<Model> {
  const topics = (await import(path.join(dir, 'services/analysis/src/topics/topic-model.ts'))) as TopicModule
  const agglomerative = (await import(
    path.join(dir, 'services/analysis/src/topics/agglomerative.ts')
  )) as Record<string, (vectors: readonly Float32Array[], arg: never) => number[]>
  const fn = agglomerative.poolClusters ?? agglomerative.averageLinkageClusters!
  return { name, topics, cluster: async (vectors, arg) => fn(vectors, arg) }
}

/** The final topic of each request (merged topics counted in their survivor; "other" and none alike). */
async function run(
  model: Model,
  data: readonly Embedded[],
  order: readonly number[],
  batch: number,
  embedPhrases?: (texts: readonly string[]) => Promise<Float32Array[]>,
) {
  const { topics } = model
  const state = topics.emptyTopicState('bench')
  let next = 0
  const deps = { newId: () => `t${next++}`, cluster: model.cluster as never }
  const topicOf = new Map<string, string>()
  const started = performance.now()
  for (let i = 0; i < order.length; i += batch) {
    const points = order.slice(i, i + batch).flatMap((index) => {
      const r = data[index]!
      return r.embedding
        ? [
            {
              conversationId: String(index),
              messageId: 'q',
              embedding: r.embedding,
              terms: r.terms!,
              text: r.text,
            },
          ]
        : []
    })
    const decision = await topics.decideTopics(state, points, [], deps, {
      ...topics.DEFAULT_TOPIC_OPTIONS,
      ...model.options,
    })
    for (const [key, id] of decision.assigned) topicOf.set(key, id)
    for (const r of decision.reassigned) topicOf.set(topics.pointKey(r), r.topicId)
  }
  const ms = performance.now() - started
  const canonical = (id: string): string => {
    const merged = state.topics.get(id)?.mergedInto
    return merged ? canonical(merged) : id
  }
  const clusters = data.map((_, index) => {
    const id = topicOf.get(topics.pointKey({ conversationId: String(index), messageId: 'q' }))
    return id === undefined || id === topics.OTHER_TOPIC ? topics.OTHER_TOPIC : canonical(id)
  })
  // Each final topic's label and its members' intents: label agreement as bench:quality measures it.
  const labelled = [...state.topics.values()]
    .filter((t) => t.mergedInto === null && !(t as { retired?: boolean }).retired)
    .map((t) => ({
      label: t.label,
      memberIntents: data.filter((_, i) => clusters[i] === t.id).map((r) => r.intent),
    }))
    .filter((t) => t.memberIntents.length > 0)
  const variants: Record<string, number> = {}
  const samples: string[] = []
  if (process.env.LABEL_VARIANTS) {
    const active = [...state.topics.values()].filter(
      (t) => t.mergedInto === null && data.some((_, i) => clusters[i] === t.id),
    )
    const corpus = termCorpus(active.map((t) => t.terms))
    const topicsWith = new Map<string, number>()
    for (const t of active)
      for (const term of t.terms.keys()) topicsWith.set(term, (topicsWith.get(term) ?? 0) + 1)
    const members = (t: (typeof active)[number]) =>
      data.filter((_, i) => clusters[i] === t.id).map((r) => r.intent)
    const variant = (name: string, label: (t: (typeof active)[number]) => string) => {
      variants[name] = agreement(active.map((t) => ({ label: label(t), memberIntents: members(t) }))).share
    }
    const ranked = (t: (typeof active)[number], score: (term: string, n: number) => number) =>
      [...t.terms]
        .filter(([, n]) => n >= 2)
        .map(([term, n]) => ({ term, s: score(term, n) }))
        .sort((a, b) => b.s - a.s || (a.term < b.term ? -1 : 1))
        .map((x) => x.term)
    const ctfidf = (t: (typeof active)[number]) => {
      let total = 0
      for (const n of t.terms.values()) total += n
      return (term: string, n: number) =>
        (n / total) * Math.log(1 + corpus.averageTermsPerTopic / Math.max(corpus.frequency.get(term) ?? 0, n))
    }
    const idf = (term: string) => Math.log(1 + active.length / (topicsWith.get(term) ?? 1))
    // The ceiling of any label from the members' repeated words: all of them at once.
    variant('ceiling: every repeated term', (t) => ranked(t, () => 0).join(', ') || t.label)
    variant('first term', (t) => ranked(t, ctfidf(t))[0] ?? t.label)
    variant('two terms', (t) => ranked(t, ctfidf(t)).slice(0, 2).join(', ') || t.label)
    variant(
      'tfidf two',
      (t) =>
        ranked(t, (term, n) => (n / t.size) * idf(term))
          .slice(0, 2)
          .join(', ') || t.label,
    )
    variant('tfidf one', (t) => ranked(t, (term, n) => (n / t.size) * idf(term))[0] ?? t.label)
    variant('tfidf bigram', (t) => {
      const r = ranked(t, (term, n) => (n / t.size) * idf(term))
      return r.find((x) => x.includes(' ')) ?? r[0] ?? t.label
    })
    variant('coverage^2 idf one', (t) => ranked(t, (term, n) => (n / t.size) ** 2 * idf(term))[0] ?? t.label)
    variant(
      'coverage^2 idf two',
      (t) =>
        ranked(t, (term, n) => (n / t.size) ** 2 * idf(term))
          .slice(0, 2)
          .join(', ') || t.label,
    )
    if (embedPhrases) {
      // KeyBERT-style phrase labels: each candidate embedded alone by the same model (bench/quality/phrase-labels.ts).
      const phrases = [...new Set(active.flatMap((t) => phraseCandidates(t.terms)))]
      const vectors = new Map<string, Float32Array>()
      for (let i = 0; i < phrases.length; i += 256) {
        const chunk = phrases.slice(i, i + 256)
        const embedded = await embedPhrases(chunk)
        for (const [j, p] of chunk.entries()) vectors.set(p, embedded[j]!)
      }
      const labellers = phraseLabellers(active, vectors, PHRASE_MUS, PHRASE_LAMBDAS)
      const names = ['today: three terms', ...labellers.keys()]
      const labelsOf = new Map([['today: three terms', active.map((t) => t.label)], ...labellers])
      // Today's labels scored on the same topics as the others (the table's "labels" leaves out retired ones).
      for (const [name, labels] of labelsOf) {
        variants[name] = agreement(
          active.map((t, i) => ({ label: labels[i]!, memberIntents: members(t) })),
        ).share
      }
      const words = (name: string) =>
        labelsOf.get(name)!.reduce((sum, l) => sum + l.split(/[\s,·]+/).filter(Boolean).length, 0) /
        active.length
      for (const name of names) variants[`${name}: mean words`] = words(name)
      // Twenty topics drawn by the run's seed, each labeller's label side by side, for a reader to judge.
      const random = seededRandom(SAMPLE_SEED)
      const drawn = active.map((_, i) => i)
      for (let i = drawn.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1))
        ;[drawn[i], drawn[j]] = [drawn[j]!, drawn[i]!]
      }
      samples.push(`| majority intent | ${names.join(' | ')} |`, `|${'---|'.repeat(names.length + 1)}`)
      for (const i of drawn.slice(0, 20).sort((a, b) => a - b)) {
        const intents = members(active[i]!)
        const counts = new Map<string, number>()
        for (const x of intents) counts.set(x, (counts.get(x) ?? 0) + 1)
        const majority = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a))[0]
        samples.push(`| ${majority} | ${names.map((n) => labelsOf.get(n)![i]).join(' | ')} |`)
      }
    }
  }
  return { clusters, ms, labels: agreement(labelled), variants, samples }
}

/** The phrase labellers' constants compared (contrast μ, MMR λ): chosen on CLINC150 validation. */
const PHRASE_MUS = [0, 0.25, 0.5, 1]
const PHRASE_LAMBDAS = [0.3, 0.5, 0.7]
const SAMPLE_SEED = 7

/**
 * The whole set, in `order`, as one re-clustering window's points: each embedded request as the one message
 * ('q') of conversation String(index), in "other"; requests without a vector are left out.
 */
export function windowOf(data: readonly Embedded[], order: readonly number[]) {
  return order.flatMap((index) => {
    const r = data[index]!
    return r.embedding
      ? [
          {
            conversationId: String(index),
            messageId: 'q',
            embedding: r.embedding,
            terms: r.terms!,
            topicId: current.OTHER_TOPIC,
          },
        ]
      : []
  })
}

/** The whole set as one re-clustering window of an empty state: each request's topic after the run. */
export function runWindow(
  data: readonly Embedded[],
  order: readonly number[],
  cluster: (vectors: readonly Float32Array[], references: readonly Float32Array[]) => number[],
) {
  const state = current.emptyTopicState('bench')
  const { points, references } = clusteringInput(state, windowOf(data, order))
  const started = performance.now()
  const numbers = cluster(
    points.map((p) => p.embedding),
    references,
  )
  const ms = performance.now() - started
  let next = 0
  const decision = decideRecluster(state, points, numbers, { newId: () => `t${next++}` })
  const topicOf = new Map(decision.reassigned.map((r) => [r.conversationId, r.topicId]))
  const clusters = data.map((_, index) => topicOf.get(String(index)) ?? current.OTHER_TOPIC)
  const labelled = [...state.topics.values()]
    .filter((t) => t.mergedInto === null && !t.retired)
    .map((t) => ({
      label: t.label,
      memberIntents: data.filter((_, i) => clusters[i] === t.id).map((r) => r.intent),
    }))
    .filter((t) => t.memberIntents.length > 0)
  return { clusters, ms, labels: agreement(labelled) }
}

const agreement = createLabelAgreement()

export function score(intents: readonly string[], clusters: readonly string[]) {
  const n = intents.length
  const share = (xs: readonly string[], skip?: string) => {
    const counts = new Map<string, number>()
    for (const x of xs) if (x !== skip) counts.set(x, (counts.get(x) ?? 0) + 1)
    return { count: counts.size, largest: Math.max(0, ...counts.values()) / n }
  }
  const topics = share(clusters, current.OTHER_TOPIC)
  return {
    nmi: normalizedMutualInformation(intents, clusters),
    acc: clusteringAccuracy(intents, clusters),
    ari: adjustedRandIndex(intents, clusters),
    topics: topics.count,
    largest: topics.largest,
    largestIntent: share(intents).largest,
    intents: share(intents).count,
    other: clusters.filter((c) => c === current.OTHER_TOPIC).length / n,
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', multiple: true },
      baseline: { type: 'string' },
      seed: { type: 'string', default: '31' },
      batch: { type: 'string', default: '50' },
      option: { type: 'string', multiple: true },
      anchors: { type: 'boolean', default: false },
      'show-labels': { type: 'boolean', default: false },
      window: { type: 'boolean', default: false },
      'min-cluster-size': { type: 'string' },
      'umap-seed': { type: 'string' },
      time: { type: 'string' },
      epochs: { type: 'string' },
    },
  })
  if (values.time) {
    const all: Float32Array[] = []
    for (const set of SETS) for (const r of await embedded(set)) if (r.embedding) all.push(r.embedding)
    const vectors = all.slice(0, Number(values.time))
    const mb = () => (process.memoryUsage().rss / 1e6).toFixed(0)
    console.log(`${vectors.length} vectors; load average ${loadAverages()}`)
    for (const [name, cluster] of [
      ['UMAP + HDBSCAN', () => windowClusters(vectors)],
      ['average linkage, silhouette cut', () => poolClusters(vectors, [], { dissolve: false })],
    ] as const) {
      const before = mb()
      const started = performance.now()
      const numbers = cluster()
      const seconds = (performance.now() - started) / 1000
      console.log(
        `${name}: ${seconds.toFixed(1)} s, ${new Set(numbers.filter((x) => x >= 0)).size} clusters, resident set ${before} → ${mb()} MB`,
      )
    }
    return
  }
  const sets = (values.set ?? ['clinc150-test', 'dstc11']) as SetName[]
  for (const s of sets) if (!SETS.includes(s)) throw new Error(`--set: one of ${SETS.join(', ')}`)
  const options = Object.fromEntries(
    (values.option ?? []).map((o) => {
      const [name, value] = o.split('=')
      return [name!, Number(value)]
    }),
  )
  const models: Model[] = [
    { ...(await modelAt(`this checkout ${values.option?.join(' ') ?? ''}`.trim(), ROOT)), options },
  ]
  if (values.baseline)
    models.unshift(await modelAt(`baseline ${values.baseline}`, path.resolve(values.baseline)))
  const batch = Number(values.batch)
  const embedPhrases = process.env.LABEL_VARIANTS
    ? (
        await createSemanticAnalyzer({
          modelDir: TEST_MODEL_DIR,
          cacheDir: path.join(ROOT, '.cache/models'),
          hubUrl: UNREACHABLE_HUB,
        })
      ).model.embed
    : undefined
  for (const set of sets) {
    const data = await embedded(set)
    const random = seededRandom(Number(values.seed))
    const order = data.map((_, i) => i)
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    console.log(`\n${set}: ${data.length} requests, batches of ${batch}, seed ${values.seed}`)
    console.log('| model | NMI | ACC | ARI | topics | largest topic | largest intent | other | labels | ms |')
    console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
    if (values.anchors) {
      const withVectors = data.filter((r) => r.embedding)
      const anchors = computeAnchors(
        withVectors.map((r) => r.text),
        withVectors.map((r) => r.intent),
        withVectors.map((r) => r.embedding!),
        Number(values.seed),
      )
      for (const a of [anchors.tfidf, anchors.embeddingsToldK, anchors.silhouette]) {
        console.log(
          `| ${a.name} | ${a.score.nmi.toFixed(3)} | ${a.score.acc.toFixed(3)} | ${a.score.ari.toFixed(3)} | | | | | | ${(1000 * a.seconds).toFixed(0)} |`,
        )
      }
    }
    const pct = (x: number) => `${(100 * x).toFixed(1)} %`
    const row = (
      name: string,
      r: {
        clusters: string[]
        ms: number
        labels: { share: number; disagreeing: readonly { label: string; intent: string }[] }
      },
    ) => {
      const s = score(
        data.map((d) => d.intent),
        r.clusters,
      )
      console.log(
        `| ${name} | ${s.nmi.toFixed(3)} | ${s.acc.toFixed(3)} | ${s.ari.toFixed(3)} | ${s.topics} (${s.intents} intents) | ${pct(s.largest)} | ${pct(s.largestIntent)} | ${pct(s.other)} | ${r.labels.share.toFixed(3)} | ${r.ms.toFixed(0)} |`,
      )
      if (values['show-labels'])
        for (const d of r.labels.disagreeing) console.log(`  label "${d.label}" / intent ${d.intent}`)
    }
    if (values.window) {
      row(
        'window: average linkage, silhouette cut (before)',
        runWindow(data, order, (v, r) => poolClusters(v, r, { dissolve: false })),
      )
      row(
        `window: UMAP + HDBSCAN, min_cluster_size ${WINDOW_CLUSTERING.minClusterSize}, seed ${WINDOW_CLUSTERING.seed}`,
        runWindow(data, order, (v, r) => windowClusters(v, r)),
      )
      const sizes = (values['min-cluster-size'] ?? '').split(',').filter(Boolean).map(Number)
      const seeds = (values['umap-seed'] ?? '').split(',').filter(Boolean).map(Number)
      for (const minClusterSize of sizes.length > 0 ? sizes : [WINDOW_CLUSTERING.minClusterSize]) {
        for (const seed of seeds.length > 0 ? seeds : [WINDOW_CLUSTERING.seed]) {
          const epochs = values.epochs ? Number(values.epochs) : undefined
          const isDefault =
            minClusterSize === WINDOW_CLUSTERING.minClusterSize && seed === WINDOW_CLUSTERING.seed
          if (isDefault && epochs === undefined) continue
          row(
            `window: UMAP + HDBSCAN, min_cluster_size ${minClusterSize}, seed ${seed}${epochs ? `, ${epochs} epochs` : ''}`,
            runWindow(data, order, (v, r) =>
              windowClusters(v, r, {
                ...WINDOW_CLUSTERING,
                minClusterSize,
                seed,
                ...(epochs ? { epochs } : {}),
              }),
            ),
          )
        }
      }
      continue
    }
    for (const model of models) {
      const { clusters, ms, labels, variants, samples } = await run(model, data, order, batch, embedPhrases)
      for (const [name, share] of Object.entries(variants))
        console.log(`  variant ${name}: ${share.toFixed(3)}`)
      for (const line of samples) console.log(`  ${line}`)
      const s = score(
        data.map((r) => r.intent),
        clusters,
      )
      console.log(
        `| ${model.name} | ${s.nmi.toFixed(3)} | ${s.acc.toFixed(3)} | ${s.ari.toFixed(3)} | ${s.topics} (${s.intents} intents) | ${pct(s.largest)} | ${pct(s.largestIntent)} | ${pct(s.other)} | ${labels.share.toFixed(3)} | ${ms.toFixed(0)} |`,
      )
      if (values['show-labels']) {
        for (const d of labels.disagreeing) console.log(`  label "${d.label}" / intent ${d.intent}`)
      }
    }
  }
}

// Run as a script (bench/topic-candidates.ts imports the sets and scores from here).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
