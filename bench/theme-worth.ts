/**
 * When a small chatbot's topics are worth cutting into themes (issue 31, item 3; helper topics18). On a
 * small chatbot the Ward cut of best silhouette made 2–3 themes of 5–24 topics, one of 60–91 % of them and
 * of 86–96 % of the conversations (bench/FINDINGS.md "what a theme's share says"): a theme that holds
 * nearly everything tells the lead nothing. Here each window's re-clustered topics (bench:topics-small's
 * pipeline: placement in batches of 50, one re-clustering by the landed window clustering) are cut as
 * themes.ts does (themeCuts: every cut of themeCounts(n), with its mean silhouette), and rules for which
 * cut to show, if any, are compared on the same cuts:
 *
 * - best silhouette: the cut of best silhouette, always (one theme below four topics), as before
 *   GROUPING_VERSION 5;
 * - cap X: the cut of best silhouette whose largest theme holds at most X of the topics; none → no themes
 *   (themes.ts since GROUPING_VERSION 5 at X = MAX_THEME_TOPIC_SHARE, marked);
 * - cap 0.5 + conversations Y, conversations Y alone (helper topics19): the best cut whose largest theme holds
 *   at most Y of the conversations with a topic (each counted in every theme it has a topic in), with the topic
 *   cap or instead of it; the same with messages Y, the share of the topics' messages (their sizes), which is
 *   what themes.ts could bound from its topics alone (measured, not adopted); themes.ts since GROUPING_VERSION 6
 *   bounds the conversations at Y = MAX_THEME_CONVERSATION_SHARE, read from the chatbot's window (FINDINGS, topics19);
 * - floor S: the best cut only when its silhouette is at least S;
 * - margin M: the best cut only when its silhouette stands M above the next best cut's.
 *
 * Per rule: windows with themes, themes, the largest theme's share of the topics and of the requests (a
 * request is a conversation here), and, on windows of several CLINC150 domains, purity against the
 * domains (each clustered request by its theme: NMI and purity, the share of requests in their theme's
 * commonest domain; a multi-turn conversation by its first request's theme, against its business's domain).
 * A window without themes scores no purity. A topic's centroid is its members' mean
 * embedding, normalised.
 *
 * Sets: `clinc150` (choose): CLINC150 validation, single-domain windows (bench:topics-small's clinc150
 * family, n = 100, 200, all) and windows of its ten domains at once (`mixed`, n = 150, 250, 350).
 * `dstc11` (confirm): DSTC11's development set, one domain, spoken style, n = 100, 200, 400. `multiturn`:
 * the signal sets' multi-turn windows of bench:theme-shares (not blind; development sets only), each
 * of a family of related businesses, scored against the businesses' domains.
 *
 *   npm run bench:theme-worth -- [--set clinc150|dstc11|multiturn]... [--rows]
 */
import { parseArgs } from 'node:util'
import { currentTopic } from '../services/analysis/src/topics/recluster.ts'
import {
  MAX_THEME_CONVERSATION_SHARE,
  MAX_THEME_TOPIC_SHARE,
  type ThemeCut,
  themeCuts,
} from '../services/analysis/src/topics/themes.ts'
import { OTHER_TOPIC, pointKey } from '../services/analysis/src/topics/topic-model.ts'
import type { Vector } from '../services/analysis/src/topics/vectors.ts'
import { windowClusters } from '../services/analysis/src/topics/window-clusters.ts'
import { CLINC150_DOMAINS } from './quality/clinc150-domains.ts'
import { normalizedMutualInformation } from './quality/metrics.ts'
import { seededShuffle } from './support/random.ts'
import { domainFamilies } from './theme-shares.ts'
import { analysed, developmentSets, place, recluster } from './topics-multiturn.ts'
import { samples, topicsOf } from './topics-small.ts'

/** A window's topics: each with its centroid, and per request (conversation) the topics it has. */
interface Window {
  readonly set: string
  readonly name: string
  readonly centroids: Vector[]
  /** Per conversation, the indices of its topics (first request's first). */
  readonly conversations: number[][]
  /** Per topic, its messages (themes.ts's ThemeTopic.size). */
  readonly sizes: number[]
  /** Per conversation, its domain where the data has one, else undefined. */
  readonly domains?: string[]
}

type Rule = (cuts: readonly ThemeCut[], n: number, window: Window) => ThemeCut | undefined | 'one'

const byScore = (cuts: readonly ThemeCut[]) => [...cuts].sort((a, b) => b.score - a.score || a.k - b.k) // ties to the coarser, as themes.ts
const largestGroup = (cut: ThemeCut) => {
  const sizes = new Map<number, number>()
  for (const l of cut.labels) sizes.set(l, (sizes.get(l) ?? 0) + 1)
  return Math.max(...sizes.values())
}

/** The largest theme's share of the conversations with a topic, each counted in every theme it has a topic in. */
function conversationsShare(labels: readonly number[], window: Window): number {
  const inTheme = new Map<number, number>()
  let withTopic = 0
  for (const topics of window.conversations) {
    if (topics.length === 0) continue
    withTopic++
    for (const th of new Set(topics.map((t) => labels[t]!))) inTheme.set(th, (inTheme.get(th) ?? 0) + 1)
  }
  return withTopic === 0 ? 0 : Math.max(...inTheme.values()) / withTopic
}
/** The largest theme's share of the topics' messages: what themes.ts could bound from ThemeTopic.size alone. */
function messagesShare(labels: readonly number[], window: Window): number {
  const inTheme = new Map<number, number>()
  for (const [t, l] of labels.entries()) inTheme.set(l, (inTheme.get(l) ?? 0) + window.sizes[t]!)
  const all = window.sizes.reduce((a, b) => a + b, 0)
  return all === 0 ? 0 : Math.max(...inTheme.values()) / all
}
const withinTopicCap = (cut: ThemeCut, n: number) => largestGroup(cut) <= MAX_THEME_TOPIC_SHARE * n

const RULES: [string, Rule][] = [
  ['best silhouette (before GROUPING_VERSION 5)', (cuts) => byScore(cuts)[0] ?? 'one'],
  ...[0.3, 0.35, 0.4, 0.5, 0.6, 0.7].map((x): [string, Rule] => [
    `cap ${x}${x === MAX_THEME_TOPIC_SHARE ? ' (themes.ts, GROUPING_VERSION 5)' : ''}`,
    (cuts, n) => byScore(cuts).find((c) => largestGroup(c) <= x * n),
  ]),
  // helper topics19: the conversations' share bounded too (or instead), exactly (the windows know each
  // conversation's topics) and as themes.ts could from the topics' sizes (messages).
  ...[0.5, 0.6, 2 / 3, 0.75].flatMap((y): [string, Rule][] => [
    [
      `cap ${MAX_THEME_TOPIC_SHARE} + conversations ${y.toFixed(2)}${y === MAX_THEME_CONVERSATION_SHARE ? ' (themes.ts since GROUPING_VERSION 6)' : ''}`,
      (cuts, n, w) => byScore(cuts).find((c) => withinTopicCap(c, n) && conversationsShare(c.labels, w) <= y),
    ],
    [
      `conversations ${y.toFixed(2)} alone`,
      (cuts, _n, w) => byScore(cuts).find((c) => conversationsShare(c.labels, w) <= y),
    ],
    [
      `cap ${MAX_THEME_TOPIC_SHARE} + messages ${y.toFixed(2)}`,
      (cuts, n, w) => byScore(cuts).find((c) => withinTopicCap(c, n) && messagesShare(c.labels, w) <= y),
    ],
    [
      `messages ${y.toFixed(2)} alone`,
      (cuts, _n, w) => byScore(cuts).find((c) => messagesShare(c.labels, w) <= y),
    ],
  ]),
  ...[0.1, 0.15, 0.2].map((s): [string, Rule] => [
    `floor ${s}`,
    (cuts) => {
      const best = byScore(cuts)[0]
      return best && best.score >= s ? best : undefined
    },
  ]),
  ...[0.01, 0.02, 0.05].map((m): [string, Rule] => [
    `margin ${m}`,
    (cuts) => {
      const [best, next] = byScore(cuts)
      return best && (!next || best.score - next.score >= m) ? best : undefined
    },
  ]),
]

function centroid(vectors: readonly Vector[]): Float32Array {
  const out = new Float32Array(vectors[0]!.length)
  for (const v of vectors) for (let i = 0; i < out.length; i++) out[i]! += v[i]!
  const norm = Math.hypot(...out)
  for (let i = 0; i < out.length; i++) out[i]! /= norm || 1
  return out
}

/** Single requests: one conversation each, its topic (if any) as the window clustering left it. */
function requestWindow(
  set: string,
  name: string,
  topics: readonly string[],
  vectors: readonly Vector[],
  domains?: string[],
) {
  const ids = [...new Set(topics.filter((t) => t !== OTHER_TOPIC))].sort()
  const index = new Map(ids.map((id, i) => [id, i]))
  const centroids = ids.map((id) => centroid(vectors.filter((_, i) => topics[i] === id)))
  const conversations = topics.map((t) => (t === OTHER_TOPIC ? [] : [index.get(t)!]))
  const sizes = ids.map((id) => topics.filter((t) => t === id).length)
  return { set, name, centroids, conversations, sizes, ...(domains ? { domains } : {}) } satisfies Window
}

async function requestWindows(set: 'clinc150' | 'dstc11'): Promise<Window[]> {
  const domainOf = new Map(
    Object.entries(CLINC150_DOMAINS).flatMap(([d, intents]) => intents.map((i) => [i, d] as const)),
  )
  const all =
    set === 'dstc11'
      ? await samples('dstc11', [100, 200, 400], 5)
      : [
          ...(await samples('clinc150', [100, 200, Number.POSITIVE_INFINITY], 5)),
          ...(await samples('mixed', [150, 250, 350], 3)),
        ]
  const out: Window[] = []
  for (const sample of all) {
    const { windows } = await topicsOf(sample, [['window', (v, r) => windowClusters(v, r)]])
    const topics = windows[0]![1]
    const domains =
      sample.family === 'mixed' ? sample.requests.map((r) => domainOf.get(r.intent)!) : undefined
    out.push(
      requestWindow(
        sample.family === 'mixed'
          ? 'clinc150 ten domains'
          : set === 'dstc11'
            ? 'dstc11'
            : 'clinc150 one domain',
        sample.name,
        topics,
        sample.requests.map((r) => r.embedding),
        domains,
      ),
    )
  }
  return out
}

/** bench:theme-shares' windows: up to 100 multi-turn conversations of one family of domains, seed 31. */
async function multiturnWindows(): Promise<Window[]> {
  const all = await analysed(() => true, developmentSets())
  const out: Window[] = []
  for (const family of await domainFamilies(all, 20)) {
    if (family.length < 50) continue
    const window = seededShuffle(family, 31).slice(0, 100)
    const run = recluster(window, await place(window, 5))
    const active = [...run.state.topics.values()].filter(
      (t) => t.mergedInto === null && !t.retired && t.size > 0,
    )
    const index = new Map(active.map((t, i) => [t.id, i]))
    const conversations = window.map((c) => {
      const own: number[] = []
      c.messages.forEach((m, j) => {
        if (!m.embedding) return
        const stored =
          run.topicOf.get(pointKey({ conversationId: c.id, messageId: String(j) })) ?? OTHER_TOPIC
        const i = index.get(currentTopic(run.state, stored))
        if (i !== undefined && !own.includes(i)) own.push(i)
      })
      return own
    })
    const common = [...new Set(window.map((c) => c.set))].slice(0, 2).join(', ')
    out.push({
      set: 'multiturn',
      name: common,
      centroids: active.map((t) => t.centroid),
      conversations,
      sizes: active.map((t) => t.size),
      domains: window.map((c) => c.set),
    })
  }
  return out
}

interface Outcome {
  readonly themes: number
  readonly topicsShare: number
  readonly conversationsShare: number
  readonly nmi?: number
  readonly purity?: number
}

function outcome(window: Window, cut: ThemeCut | undefined | 'one'): Outcome {
  const n = window.centroids.length
  if (cut === undefined || n === 0) return { themes: 0, topicsShare: 0, conversationsShare: 0 }
  const labels = cut === 'one' ? window.centroids.map(() => 0) : cut.labels
  const k = new Set(labels).size
  const topicsIn = new Map<number, number>()
  for (const l of labels) topicsIn.set(l, (topicsIn.get(l) ?? 0) + 1)
  const conversationsIn = new Map<number, number>()
  let withTopic = 0
  const themeOfRequest: string[] = []
  const domainOfRequest: string[] = []
  window.conversations.forEach((topics, i) => {
    if (topics.length === 0) return
    withTopic++
    for (const th of new Set(topics.map((t) => labels[t]!)))
      conversationsIn.set(th, (conversationsIn.get(th) ?? 0) + 1)
    if (window.domains) {
      themeOfRequest.push(String(labels[topics[0]!]))
      domainOfRequest.push(window.domains[i]!)
    }
  })
  const base = {
    themes: k,
    topicsShare: Math.max(...topicsIn.values()) / n,
    conversationsShare: Math.max(...conversationsIn.values()) / Math.max(1, withTopic),
  }
  if (!window.domains) return base
  const counts = new Map<string, Map<string, number>>()
  themeOfRequest.forEach((th, i) => {
    const m = counts.get(th) ?? new Map<string, number>()
    m.set(domainOfRequest[i]!, (m.get(domainOfRequest[i]!) ?? 0) + 1)
    counts.set(th, m)
  })
  const pure = [...counts.values()].reduce((s, m) => s + Math.max(...m.values()), 0)
  return {
    ...base,
    nmi: normalizedMutualInformation(domainOfRequest, themeOfRequest),
    purity: pure / themeOfRequest.length,
  }
}

/** With --rows, each window's outcome under these rules (names' beginnings). */
const WINDOW_ROWS = [
  'cap 0.5 (themes.ts',
  'cap 0.5 + conversations 0.67',
  'cap 0.5 + messages 0.50',
  'cap 0.5 + messages 0.67',
]

const pct = (x: number) => `${(100 * x).toFixed(0)} %`
const mean = (xs: readonly number[]) =>
  xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length

async function main() {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', multiple: true },
      rows: { type: 'boolean', default: false },
    },
  })
  const sets = values.set ?? ['clinc150', 'dstc11']
  for (const set of sets) {
    const windows =
      set === 'multiturn' ? await multiturnWindows() : await requestWindows(set as 'clinc150' | 'dstc11')
    const kinds = [...new Set(windows.map((w) => w.set))]
    for (const kind of kinds) {
      const mine = windows.filter((w) => w.set === kind)
      const cuts = mine.map((w) => themeCuts(w.centroids))
      console.log(
        `\n${kind}: ${mine.length} windows, topics ${Math.min(...mine.map((w) => w.centroids.length))}–${Math.max(...mine.map((w) => w.centroids.length))}`,
      )
      if (values.rows)
        for (const [i, w] of mine.entries())
          console.log(
            `  ${w.name}: ${w.centroids.length} topics; cuts ${cuts[i]!.map((c) => `k=${c.k} ${c.score.toFixed(3)} (largest ${largestGroup(c)})`).join(', ')}`,
          )
      console.log(
        '| rule | windows with themes | themes (mean, with) | largest theme: topics (mean / max) | conversations (mean / max) | windows with a theme above 2/3 of the conversations | domain NMI | purity |',
      )
      console.log('|---|--:|--:|--:|--:|--:|--:|--:|')
      const perWindow: string[] = []
      for (const [name, rule] of RULES) {
        const outs = mine.map((w, i) => outcome(w, rule(cuts[i]!, w.centroids.length, w)))
        const shown = outs.filter((o) => o.themes > 0)
        const domainScored = outs.filter((o) => o.nmi !== undefined)
        if (values.rows && WINDOW_ROWS.some((r) => name.startsWith(r)))
          perWindow.push(
            `  ${name}: ${mine.map((w, i) => `${w.name} ${outs[i]!.themes}/${pct(outs[i]!.conversationsShare)}`).join('; ')}`,
          )
        console.log(
          `| ${name} | ${shown.length} of ${outs.length} | ${mean(shown.map((o) => o.themes)).toFixed(1)} | ${pct(mean(shown.map((o) => o.topicsShare)))} / ${pct(Math.max(0, ...shown.map((o) => o.topicsShare)))} | ${pct(mean(shown.map((o) => o.conversationsShare)))} / ${pct(Math.max(0, ...shown.map((o) => o.conversationsShare)))} | ${shown.filter((o) => o.conversationsShare > 2 / 3).length} | ${domainScored.length ? mean(domainScored.map((o) => o.nmi!)).toFixed(3) : ''} | ${domainScored.length ? pct(mean(domainScored.map((o) => o.purity!))) : ''} |`,
        )
      }
      if (perWindow.length > 0)
        console.log(`Per window (themes / largest theme's conversations):\n${perWindow.join('\n')}`)
    }
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) await main()
