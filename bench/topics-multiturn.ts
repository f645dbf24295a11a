/**
 * Topics and themes on multi-turn traffic, measured offline (issue 31): no API, no database. The signal
 * sets' conversations (bench/data/signals; the blind ones, bench/quality/signals.ts marks them, and
 * fresh9 never loaded: `openSets`) are analysed by the service's own analyzer (providers/semantic.ts: the request gate, the model,
 * the terms; cached under .cache/topics-multiturn/, git-ignored), split into two chatbots, and each
 * chatbot's end-user requests are placed by decideTopics (topics/topic-model.ts) a few conversations at a
 * time in a seeded order, then re-clustered once as one window (topics/recluster.ts, as the background
 * re-clustering does once a capture has settled), then grouped into themes (topics/themes.ts).
 *
 *   npm run bench:topics-multiturn -- [--seed N] [--batch N] [--one] [--show] [--set dstc11|clinc150-test|clinc150-val]...
 *                                     [--candidate NAME]
 *
 * --one: all the conversations in one chatbot. --show: each topic's label, members and theme. --set: a
 * --candidate: the re-clustering by a window clustering of bench/topics-small-candidates.ts instead of
 * the landed one (`sil 8|n/50`: as topics10 landed it). --set: a
 * single-request set of bench/topics-offline.ts instead (each request a one-message conversation, a
 * chatbot of its own, batches of 50 as there): the same measures on the other kind of data. Two chatbots
 * by default: the first sessions' sets (development, held out, confirmation, fresh: 172 conversations in a
 * few broad domains) and the later ones (fresh2 … fresh8: 420 in many small domains).
 *
 * The sets have no topic labels, so what is measured is what needs none: topics and themes; the largest
 * theme's share of conversations (as the Topics page counts it: a conversation in any of its topics, over
 * the conversations with a request) and of topics; the sum of the themes' shares (above 100 % by the
 * conversations in several themes); topics per conversation; the conversations whose requests all wait in
 * "other"; topics whose members are mostly replies (a short answer to a question of the bot's, or a short last
 * message without a question: `isReply`), and the label terms that no two of the topic's conversations
 * use (a name or a detail one end user repeated: "dad").
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createSemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { poolClusters } from '../services/analysis/src/topics/agglomerative.ts'
import { clusteringInput, currentTopic, decideRecluster } from '../services/analysis/src/topics/recluster.ts'
import { groupThemes, type Theme } from '../services/analysis/src/topics/themes.ts'
import {
  DEFAULT_TOPIC_OPTIONS,
  decideTopics,
  emptyTopicState,
  OTHER_TOPIC,
  pointKey,
  type TopicState,
} from '../services/analysis/src/topics/topic-model.ts'
import { windowClusters } from '../services/analysis/src/topics/window-clusters.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { type LabelledConversation, openSignalsSets } from './quality/signals.ts'
import { seededRandom } from './support/random.ts'
import { type Embedded, embedded, SETS, type SetName } from './topics-offline.ts'
import { WINDOW_CANDIDATES } from './topics-small-candidates.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const CACHE = path.join(ROOT, '.cache/topics-multiturn')

/**
 * The sets measured: the development set and every other set not kept blind, fresh9 to fresh33 always
 * left out (kept from the sight of the session that wrote this measure; fresh9 was blind then), so that the
 * figures stay those of the same 592 conversations.
 */
export function openSets(): { name: string; file: string }[] {
  return openSignalsSets().filter((s) => !/fresh(9|1\d|2[0-9]|30|31|32|33)\.json$/.test(s.file))
}

/** The first sessions' sets (written in a few broad domains) make one chatbot, the later ones another. */
export const FIRST_CHATBOT = new Set(['development', 'held out', 'confirmation', 'fresh'])

export interface AnalysedMessage {
  readonly role: 'user' | 'assistant'
  readonly text: string
  readonly embedding?: Float32Array
  readonly terms?: readonly string[]
}
export interface AnalysedConversation {
  readonly id: string
  readonly set: string
  readonly messages: readonly AnalysedMessage[]
}

/**
 * Every signal set not kept blind (bench/quality/signals.ts marks them; fresh25 to fresh33 also left out
 * by name, so a set made blind later is never loaded before its entry says so): the later measures' sets.
 */
export function developmentSets(): { name: string; file: string }[] {
  return openSignalsSets().filter((s) => !/fresh(25|26|27|28|29|30|31|32|33)\.json$/.test(s.file))
}

/** The open sets' conversations (those `only` names, else all) analysed by the service's analyzer, cached. */
export async function analysed(
  only: (name: string) => boolean = () => true,
  sets: readonly { name: string; file: string }[] = openSets(),
): Promise<AnalysedConversation[]> {
  const analyzer = await createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(ROOT, '.cache/models'),
    hubUrl: UNREACHABLE_HUB,
  })
  const version = createHash('sha256').update(analyzer.info.version).digest('hex').slice(0, 12)
  const out: AnalysedConversation[] = []
  for (const set of sets.filter((s) => only(s.name))) {
    const file = path.join(CACHE, `${path.basename(set.file, '.json')}-${version}.json`)
    if (existsSync(file)) {
      const rows = JSON.parse(readFileSync(file, 'utf8')) as {
        id: string
        messages: { role: 'user' | 'assistant'; text: string; e?: string; terms?: string[] }[]
      }[]
      for (const c of rows) {
        out.push({
          id: c.id,
          set: set.name,
          messages: c.messages.map((m) => ({
            role: m.role,
            text: m.text,
            ...(m.e
              ? {
                  embedding: new Float32Array(new Uint8Array(Buffer.from(m.e, 'base64')).buffer),
                  terms: m.terms ?? [],
                }
              : {}),
          })),
        })
      }
      continue
    }
    const conversations = JSON.parse(readFileSync(set.file, 'utf8')) as LabelledConversation[]
    const rows: AnalysedConversation[] = []
    for (const c of conversations) {
      const results = await analyzer.analyzeMessages(
        c.messages.map(([role, content], i) => ({ id: String(i), role, content })),
        {},
      )
      rows.push({
        id: `${set.name}/${c.id}`,
        set: set.name,
        messages: c.messages.map(([role, text], i) => {
          const r = results[i]!
          return r.embedding ? { role, text, embedding: r.embedding, terms: r.terms ?? [] } : { role, text }
        }),
      })
    }
    mkdirSync(CACHE, { recursive: true })
    writeFileSync(
      file,
      JSON.stringify(
        rows.map((c) => ({
          id: c.id,
          messages: c.messages.map((m) => ({
            role: m.role,
            text: m.text,
            ...(m.embedding
              ? {
                  e: Buffer.from(m.embedding.buffer, m.embedding.byteOffset, m.embedding.byteLength).toString(
                    'base64',
                  ),
                  terms: m.terms,
                }
              : {}),
          })),
        })),
      ),
    )
    out.push(...rows)
  }
  return out
}

/**
 * A member that reads as a reply rather than a request: an answer of at most five words to a bot's turn
 * that asked something ("SW1A 1AA", "yes, the blue one"), or the conversation's last end-user message,
 * not its first, of at most eight words asking nothing ("ok will do"). A measure's rule, structural (no word list): not the service's.
 */
export function isReply(conversation: AnalysedConversation, index: number): boolean {
  const m = conversation.messages[index]!
  if (m.text.includes('?')) return false
  const previous = conversation.messages[index - 1]
  const words = m.text.trim().split(/\s+/).length
  if (previous?.role === 'assistant' && previous.text.includes('?') && words <= 5) return true
  const lastUser = conversation.messages.findLastIndex((x) => x.role === 'user')
  const firstUser = conversation.messages.findIndex((x) => x.role === 'user')
  return index === lastUser && index !== firstUser && words <= 8
}

interface Run {
  readonly state: TopicState
  /** Each request's topic (OTHER_TOPIC while it waits), by pointKey. */
  readonly topicOf: Map<string, string>
}

export async function place(conversations: readonly AnalysedConversation[], batch: number): Promise<Run> {
  const state = emptyTopicState('bench')
  let next = 0
  const deps = {
    newId: () => `t${next++}`,
    cluster: async (v: readonly Float32Array[], r: readonly Float32Array[]) => poolClusters(v, r),
  }
  const topicOf = new Map<string, string>()
  for (let i = 0; i < conversations.length; i += batch) {
    const points = conversations.slice(i, i + batch).flatMap((c) =>
      c.messages.flatMap((m, j) =>
        m.embedding
          ? [
              {
                conversationId: c.id,
                messageId: String(j),
                embedding: m.embedding,
                terms: m.terms!,
                text: m.text,
              },
            ]
          : [],
      ),
    )
    const decision = await decideTopics(state, points, [], deps, DEFAULT_TOPIC_OPTIONS)
    for (const [key, id] of decision.assigned) topicOf.set(key, id)
    for (const r of decision.reassigned) topicOf.set(pointKey(r), r.topicId)
  }
  return { state, topicOf }
}

/** The re-clustering window of placed conversations: each request with its embedding, terms and placed topic. */
export function windowOf(conversations: readonly AnalysedConversation[], run: Run) {
  return conversations.flatMap((c) =>
    c.messages.flatMap((m, j) =>
      m.embedding
        ? [
            {
              conversationId: c.id,
              messageId: String(j),
              embedding: m.embedding,
              terms: m.terms!,
              topicId:
                run.topicOf.get(pointKey({ conversationId: c.id, messageId: String(j) })) ?? OTHER_TOPIC,
            },
          ]
        : [],
    ),
  )
}

/** The whole chatbot re-clustered as one window, as the background re-clustering does. */
export function recluster(
  conversations: readonly AnalysedConversation[],
  run: Run,
  cluster: (
    vectors: readonly Float32Array[],
    references: readonly Float32Array[],
  ) => number[] = windowClusters,
): Run {
  const { points, references } = clusteringInput(run.state, windowOf(conversations, run))
  const numbers = cluster(
    points.map((p) => p.embedding),
    references,
  )
  let next = 0
  const decision = decideRecluster(run.state, points, numbers, { newId: () => `r${next++}` })
  const topicOf = new Map(run.topicOf)
  for (const r of decision.reassigned) topicOf.set(pointKey(r), r.topicId)
  return { state: run.state, topicOf }
}

export interface Measure {
  readonly conversations: number
  readonly withRequest: number
  readonly topics: number
  readonly themes: number
  readonly largestThemeConversations: number
  readonly largestThemeTopics: number
  readonly largestThemeLabel: string
  readonly themeShareSum: number
  readonly other: number
  /** Conversations with a request by how many topics they have: 0 (all in "other"), 1, 2, 3, 4+. */
  readonly perConversation: number[]
  readonly replyTopics: { label: string; size: number; replies: number }[]
  /** How many terms the labels have, and those no two of the topic's conversations use. */
  readonly labelTerms: number
  readonly oneConversationTerms: { label: string; term: string; conversations: number }[]
  readonly duplicateLabels: number
  readonly themeList: { theme: Theme; conversations: number }[]
  readonly topicList: { id: string; label: string; size: number; members: string[] }[]
}

export function measure(conversations: readonly AnalysedConversation[], run: Run): Measure {
  const { state } = run
  const topicsOf = new Map<string, Set<string>>()
  const members = new Map<string, { c: AnalysedConversation; index: number }[]>()
  for (const c of conversations) {
    c.messages.forEach((m, j) => {
      if (!m.embedding) return
      const stored = run.topicOf.get(pointKey({ conversationId: c.id, messageId: String(j) })) ?? OTHER_TOPIC
      const topic = currentTopic(state, stored)
      const set = topicsOf.get(c.id) ?? new Set()
      set.add(topic)
      topicsOf.set(c.id, set)
      if (topic !== OTHER_TOPIC) members.set(topic, [...(members.get(topic) ?? []), { c, index: j }])
    })
  }
  const active = [...state.topics.values()].filter((t) => t.mergedInto === null && !t.retired && t.size > 0)
  const themes = groupThemes(active)
  const themeOf = new Map(themes.flatMap((th) => th.topicIds.map((id) => [id, th.id])))
  const withRequest = topicsOf.size
  const perTheme = new Map<string, number>()
  const perConversation = [0, 0, 0, 0, 0]
  let other = 0
  for (const topics of topicsOf.values()) {
    const real = [...topics].filter((t) => t !== OTHER_TOPIC)
    if (real.length === 0) other++
    perConversation[Math.min(real.length, 4)]!++
    for (const th of new Set(real.flatMap((t) => themeOf.get(t) ?? [])))
      perTheme.set(th, (perTheme.get(th) ?? 0) + 1)
  }
  const themeList = themes
    .map((theme) => ({ theme, conversations: perTheme.get(theme.id) ?? 0 }))
    .sort((a, b) => b.conversations - a.conversations)
  const largest = themeList[0]
  const replyTopics = active.flatMap((t) => {
    const list = members.get(t.id) ?? []
    const replies = list.filter((m) => isReply(m.c, m.index)).length
    return 2 * replies > list.length ? [{ label: t.label, size: list.length, replies }] : []
  })
  // A label's terms (labels.ts: words and bigrams of the members' terms) and how many of the topic's
  // conversations use each: a term of one conversation's messages alone names that conversation.
  const labelTerms = active.flatMap((t) => {
    const list = members.get(t.id) ?? []
    return t.label
      .split(/,\s*/)
      .filter((term) => term !== '')
      .map((term) => {
        const users = new Set(
          list.filter((m) => m.c.messages[m.index]!.terms?.includes(term)).map((m) => m.c.id),
        )
        return { label: t.label, term, conversations: users.size }
      })
  })
  const labels = active.map((t) => t.label.trim().toLowerCase())
  return {
    conversations: conversations.length,
    withRequest,
    topics: active.length,
    themes: themes.length,
    largestThemeConversations: largest && withRequest > 0 ? largest.conversations / withRequest : 0,
    largestThemeTopics: largest ? largest.theme.topicIds.length / Math.max(1, active.length) : 0,
    largestThemeLabel: largest?.theme.label ?? '',
    themeShareSum: withRequest > 0 ? themeList.reduce((s, t) => s + t.conversations, 0) / withRequest : 0,
    other: withRequest > 0 ? other / withRequest : 0,
    perConversation,
    replyTopics,
    labelTerms: labelTerms.length,
    oneConversationTerms: labelTerms.filter((t) => t.conversations <= 1),
    duplicateLabels: labels.length - new Set(labels).size,
    themeList,
    topicList: active.map((t) => ({
      id: t.id,
      label: t.label,
      size: (members.get(t.id) ?? []).length,
      members: (members.get(t.id) ?? []).map((m) => m.c.messages[m.index]!.text),
    })),
  }
}

/** A single-request set (bench/topics-offline.ts's, embedded there) as one-message conversations. */
function singleRequests(set: SetName, data: readonly Embedded[]): AnalysedConversation[] {
  return data.map((r, i) => ({
    id: String(i),
    set,
    messages: [
      {
        role: 'user' as const,
        text: r.text,
        ...(r.embedding ? { embedding: r.embedding, terms: r.terms ?? [] } : {}),
      },
    ],
  }))
}

const pct = (x: number) => `${(100 * x).toFixed(0)} %`

export function row(name: string, m: Measure): string {
  const dist = m.perConversation.map((n) => pct(n / Math.max(1, m.withRequest))).join(' / ')
  return `| ${name} | ${m.withRequest} of ${m.conversations} | ${m.topics} | ${m.themes} | ${pct(m.largestThemeConversations)} "${m.largestThemeLabel}" | ${pct(m.largestThemeTopics)} | ${pct(m.themeShareSum)} | ${pct(m.other)} | ${dist} | ${m.replyTopics.length} | ${m.oneConversationTerms.length} of ${m.labelTerms} | ${m.duplicateLabels} |`
}

async function main() {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '31' },
      batch: { type: 'string' },
      one: { type: 'boolean', default: false },
      show: { type: 'boolean', default: false },
      set: { type: 'string', multiple: true },
      candidate: { type: 'string' },
    },
  })
  const candidate = values.candidate ? WINDOW_CANDIDATES[values.candidate] : undefined
  if (values.candidate && !candidate)
    throw new Error(`--candidate: one of ${Object.keys(WINDOW_CANDIDATES).join(', ')}`)
  const single = (values.set ?? []) as SetName[]
  for (const s of single) if (!SETS.includes(s)) throw new Error(`--set: one of ${SETS.join(', ')}`)
  const all = single.length > 0 ? [] : await analysed()
  const chatbots =
    single.length > 0
      ? await Promise.all(
          single.map(async (set) => ({ name: set, conversations: singleRequests(set, await embedded(set)) })),
        )
      : values.one
        ? [{ name: 'all sets', conversations: all }]
        : [
            { name: 'A (development … fresh)', conversations: all.filter((c) => FIRST_CHATBOT.has(c.set)) },
            { name: 'B (fresh2 … fresh8)', conversations: all.filter((c) => !FIRST_CHATBOT.has(c.set)) },
          ]
  const batch = Number(values.batch ?? (single.length > 0 ? 50 : 5))
  console.log(
    `sets: ${(single.length > 0 ? single : openSets().map((s) => s.name)).join(
      ', ',
    )}; seed ${values.seed}, ${batch} conversations per placement`,
  )
  console.log(
    '| chatbot, stage | conversations with a request | topics | themes | largest theme, conversations | largest theme, topics | sum of theme shares | all in "other" | topics per conversation 0/1/2/3/4+ | reply topics | label terms of one conversation | duplicate labels |',
  )
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  const shown: string[] = []
  for (const chatbot of chatbots) {
    const random = seededRandom(Number(values.seed))
    const order = [...chatbot.conversations]
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    const placed = await place(order, batch)
    const afterPlacement = measure(order, placed)
    console.log(row(`${chatbot.name}, placed`, afterPlacement))
    const reclustered = recluster(order, placed, candidate)
    const after = measure(order, reclustered)
    console.log(row(`${chatbot.name}, re-clustered`, after))
    shown.push(`\n${chatbot.name}, re-clustered:`)
    for (const r of after.replyTopics) shown.push(`  reply topic "${r.label}": ${r.replies} of ${r.size}`)
    for (const t of after.oneConversationTerms)
      shown.push(`  label "${t.label}": "${t.term}" from ${t.conversations} conversation`)
    if (values.show) {
      const topicById = new Map(after.topicList.map((t) => [t.id, t]))
      for (const { theme, conversations } of after.themeList) {
        shown.push(
          `  theme "${theme.label}": ${conversations} conversations, ${theme.topicIds.length} topics`,
        )
        for (const id of theme.topicIds) {
          const t = topicById.get(id)!
          shown.push(
            `    "${t.label}" (${t.size}): ${t.members
              .slice(0, 4)
              .map((x) => JSON.stringify(x.slice(0, 60)))
              .join(' ')}`,
          )
        }
      }
    }
  }
  console.log(shown.join('\n'))
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) await main()
