/**
 * What a theme's share says on a small chatbot's multi-turn conversations (issue 31, item 3): trial5's
 * online shop (62 conversations) showed one theme holding 87 % of them, where a conversation counts in
 * every theme it has a topic in. Here windows of 50–100 conversations of one family of domains each (the
 * signal sets not kept blind: `developmentSets`; families by Ward on the embedded domain names, so that a
 * window is about one kind of business) are placed, re-clustered once and grouped into themes as
 * bench:topics-multiturn does, and the largest theme's share is counted three ways:
 *
 * - any: a conversation in every theme it has a topic in (the Topics page's count; shares add past 100 %);
 * - first: a conversation in the theme of its first request with a topic;
 * - most: a conversation in the theme holding most of its requests (ties to the earlier request's theme).
 *
 *   npm run bench:theme-shares -- [--seed N] [--families N]
 */

import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { labelsAfter, similarities, wardMerges } from '../services/analysis/src/topics/agglomerative.ts'
import { currentTopic } from '../services/analysis/src/topics/recluster.ts'
import { groupThemes } from '../services/analysis/src/topics/themes.ts'
import { OTHER_TOPIC, pointKey } from '../services/analysis/src/topics/topic-model.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { nearDuplicates } from './near-duplicate-topics.ts'
import type { LabelledConversation } from './quality/signals.ts'
import { seededShuffle } from './support/random.ts'
import { type AnalysedConversation, analysed, developmentSets, place, recluster } from './topics-multiturn.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

export interface ThemeShares {
  readonly withTopic: number
  readonly topics: number
  readonly themes: number
  /** The largest theme's share of the conversations with a topic, per count. */
  readonly any: number
  readonly first: number
  readonly most: number
  /** The largest theme's share of the topics. */
  readonly topicsShare: number
  /** Themes per conversation with a topic, on average. */
  readonly themesPerConversation: number
  readonly largestLabel: string
  /** Pairs of topics whose members are as similar between them as within one of them, and within both. */
  readonly nearDuplicates: string[][]
}

/** The themes of one window's topics after re-clustering, and the largest theme's share by each count. */
export function themeShares(order: readonly AnalysedConversation[], run: ReturnType<typeof recluster>) {
  const active = [...run.state.topics.values()].filter(
    (t) => t.mergedInto === null && !t.retired && t.size > 0,
  )
  const themes = groupThemes(active)
  const themeOf = new Map(themes.flatMap((th) => th.topicIds.map((id) => [id, th.id])))
  const any = new Map<string, number>()
  const first = new Map<string, number>()
  const most = new Map<string, number>()
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
  let withTopic = 0
  let themeSum = 0
  for (const c of order) {
    const sequence: string[] = []
    c.messages.forEach((m, j) => {
      if (!m.embedding) return
      const stored = run.topicOf.get(pointKey({ conversationId: c.id, messageId: String(j) })) ?? OTHER_TOPIC
      const topic = currentTopic(run.state, stored)
      const theme = topic === OTHER_TOPIC ? undefined : themeOf.get(topic)
      if (theme) sequence.push(theme)
    })
    if (sequence.length === 0) continue
    withTopic++
    const distinct = [...new Set(sequence)]
    themeSum += distinct.length
    for (const th of distinct) add(any, th)
    add(first, sequence[0]!)
    const counts = new Map<string, number>()
    for (const th of sequence) add(counts, th)
    // distinct is in order of first appearance: the earlier theme wins a tie.
    add(
      most,
      distinct.reduce((best, th) => (counts.get(th)! > counts.get(best)! ? th : best)),
    )
  }
  const largest = (m: Map<string, number>) => Math.max(0, ...m.values()) / Math.max(1, withTopic)
  const top = [...any.entries()].sort((a, b) => b[1] - a[1])[0]
  const topTheme = themes.find((th) => th.id === top?.[0])
  return {
    withTopic,
    topics: active.length,
    themes: themes.length,
    any: largest(any),
    first: largest(first),
    most: largest(most),
    topicsShare: topTheme ? topTheme.topicIds.length / Math.max(1, active.length) : 0,
    themesPerConversation: themeSum / Math.max(1, withTopic),
    largestLabel: topTheme?.label ?? '',
    nearDuplicates: [nearDuplicates(active, 'one'), nearDuplicates(active, 'both')].map((pairs) =>
      pairs.map(([a, b]) => `"${a.label}" ~ "${b.label}"`),
    ),
  } satisfies ThemeShares
}

/** The conversations in families of domains: Ward on their domain names' embeddings, cut into `count`. */
export async function domainFamilies(
  conversations: readonly AnalysedConversation[],
  count: number,
): Promise<AnalysedConversation[][]> {
  const domainOf = new Map<string, string>()
  for (const set of developmentSets()) {
    const rows = JSON.parse(readFileSync(set.file, 'utf8')) as LabelledConversation[]
    for (const c of rows) domainOf.set(`${set.name}/${c.id}`, c.domain)
  }
  const analyzer = await createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(ROOT, '.cache/models'),
    hubUrl: UNREACHABLE_HUB,
  })
  const names = [...new Set(conversations.map((c) => domainOf.get(c.id)!))].sort()
  const vectors = await analyzer.model.embed(names)
  const byName = new Map(names.map((n, i) => [n, vectors[i]!]))
  const points = conversations.map((c) => byName.get(domainOf.get(c.id)!)!)
  const n = points.length
  const labels = labelsAfter(wardMerges(similarities(points), n), n, n - count)
  const families = new Map<number, AnalysedConversation[]>()
  conversations.forEach((c, i) => {
    families.set(labels[i]!, [...(families.get(labels[i]!) ?? []), c])
  })
  return [...families.values()]
    .sort((a, b) => b.length - a.length)
    .map((f) => f.map((c) => ({ ...c, set: domainOf.get(c.id)! })))
}

const pct = (x: number) => `${(100 * x).toFixed(0)} %`

async function main() {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '31' },
      families: { type: 'string', default: '20' },
      batch: { type: 'string', default: '5' },
    },
  })
  const seed = Number(values.seed)
  const all = await analysed(() => true, developmentSets())
  const families = await domainFamilies(all, Number(values.families))
  console.log(
    `sets: ${developmentSets()
      .map((s) => s.name)
      .join(', ')}; ${all.length} conversations in ${families.length} families; seed ${seed}`,
  )
  console.log(
    '| family (its commonest domains) | conversations | with a topic | topics | themes | largest theme: topics | themes per conversation | largest theme, any | first request | most requests | near-duplicate pairs: one / both |',
  )
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  const totals = { any: 0, first: 0, most: 0, n: 0 }
  const pairs: string[] = []
  for (const family of families) {
    if (family.length < 50) continue
    const window = seededShuffle(family, seed).slice(0, 100)
    const domains = new Map<string, number>()
    for (const c of window) domains.set(c.set, (domains.get(c.set) ?? 0) + 1)
    const common = [...domains.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([d]) => d)
      .join(', ')
    const placed = await place(window, Number(values.batch))
    const s = themeShares(window, recluster(window, placed))
    totals.any += s.any
    totals.first += s.first
    totals.most += s.most
    totals.n++
    console.log(
      `| ${common} | ${window.length} | ${s.withTopic} | ${s.topics} | ${s.themes} | ${pct(s.topicsShare)} "${s.largestLabel}" | ${s.themesPerConversation.toFixed(2)} | ${pct(s.any)} | ${pct(s.first)} | ${pct(s.most)} | ${s.nearDuplicates[0]!.length} / ${s.nearDuplicates[1]!.length} |`,
    )
    for (const pair of s.nearDuplicates[0]!) pairs.push(`${common}: ${pair}`)
  }
  console.log(
    `| mean of ${totals.n} windows | | | | | | | ${pct(totals.any / totals.n)} | ${pct(totals.first / totals.n)} | ${pct(totals.most / totals.n)} | |`,
  )
  console.log(pairs.join('\n'))
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) await main()
