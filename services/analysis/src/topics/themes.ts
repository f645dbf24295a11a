import { labelsAfter, similarities, wardMerges } from './agglomerative.ts'
import { uuidFromText } from './ids.ts'
import type { SimilarityMemo } from './similarity-memo.ts'
import type { Vector } from './vectors.ts'

/** What grouping needs of a topic: its centroid (unit vector), size, label and words. */
export interface ThemeTopic {
  readonly id: string
  readonly label: string
  readonly keywords: readonly string[]
  /** How many of its messages use each term (labels.ts). */
  readonly terms: ReadonlyMap<string, number>
  readonly centroid: Vector
  readonly size: number
}

export interface Theme {
  readonly id: string
  /** One or two words its topics share, the first capitalized: "Card", "Claim, policy". */
  readonly label: string
  /** Largest topic first. */
  readonly topicIds: string[]
}

/**
 * How groupThemes groups: part of the stored grouping's signature (theme-store.ts), so a chatbot's themes
 * are grouped anew by a changed rule at its next topic decision. 2: Ward, not average linkage. 3: at least
 * √(n/2) themes. 4: no theme named by a word no member used as a term of its own. 5: no theme of more than
 * MAX_THEME_TOPIC_SHARE of the topics; no themes when no cut keeps to that, or below four topics. 6: nor of more
 * than MAX_THEME_CONVERSATION_SHARE of the conversations with a topic.
 */
export const GROUPING_VERSION = 6

/** A handful: the Topics page's groups, not a second level of topics. */
export const MAX_THEMES = 12
/** Fewer topics than this make no themes: two or three topics need no grouping. */
const MIN_TOPICS_TO_GROUP = 4
/**
 * No theme holds more than this share of a chatbot's topics: a theme of nearly every topic tells a lead
 * nothing, and on small multi-turn chatbots the cut of best silhouette made 2–3 themes of 5–24 topics, one of
 * 60–91 % of them and of 86–96 % of the conversations (bench/FINDINGS.md "what a theme's share says").
 * Chosen on CLINC150 validation windows (bench:theme-worth), confirmed on DSTC11 and the signal sets'
 * multi-turn windows: bench/FINDINGS.md "When themes are worth showing".
 */
export const MAX_THEME_TOPIC_SHARE = 0.5

/**
 * Nor more than this share of the conversations with a topic (each counted in every theme it has a topic in, as
 * the dashboard counts a theme's conversations): on the signal sets' multi-turn windows a theme of at most half of
 * the topics still held up to 74 % of the conversations in 3 of 15 windows. Two thirds is where that problem was
 * stated (a theme of more tells a lead nothing), not a fit: CLINC150 validation windows (choose) cannot choose,
 * every bound from 0.6 up changing nothing there (a request is one conversation of one topic); confirmed on DSTC11
 * (no change) and the multi-turn windows (none above two thirds, themes on 11 of 15 against 12, domain NMI
 * 0.410 → 0.444).
 * A bound on the topics' messages instead made two themes all but impossible at 0.5 and fixed one window of three
 * at 2/3: bench/FINDINGS.md "a theme's share of conversations".
 */
export const MAX_THEME_CONVERSATION_SHARE = 2 / 3

/**
 * A chatbot's topics grouped into themes (issue 31, item 3). Pure and deterministic: the same topics (in
 * any order) and previous themes give the same themes.
 *
 * Grouping: the Ward dendrogram of the topics' centroids, cut where the mean silhouette (cosine) is
 * highest among `themeCounts(n)` groups (√(n/2) … min(MAX_THEMES, n / 2) for n topics) and no theme holds
 * more than MAX_THEME_TOPIC_SHARE of the topics nor MAX_THEME_CONVERSATION_SHARE of `conversations` (each a
 * conversation's topic ids; theme-store.ts reads them from the chatbot's window), ties to the coarser cut: how many themes comes from how
 * the chatbot's own topics lie, not from a constant fitted to a corpus. No themes (an empty list) below
 * four topics or when every cut leaves one theme with more than that share: topics that fall into no
 * groups beside one of nearly all of them are shown ungrouped. Ward, not average linkage: on a chatbot's multi-turn
 * traffic the topics lie about evenly apart, and average linkage's best cut was one theme of nearly every
 * topic beside a pair of outliers ("Book, order": 30 of 32 topics, every conversation; bench/FINDINGS.md
 * "Topics and themes on multi-turn traffic").
 *
 * Labels: the theme's members' words as one document, scored by class-based TF-IDF against the other
 * themes (as a topic's label against the other topics, labels.ts), single words only (a theme is broader
 * than its topics' phrases), times how many of its topics name the word in their label or keywords: the
 * word that is both the theme's own and most of its topics' comes first, and a second word is added when
 * the first leaves some of its topics out. Only words the members used as terms of their own count: a
 * word of a phrase ("who are you", the first words that name a request without a content word) names
 * no theme. No two themes share a label.
 *
 * Ids: a theme keeps the id of the previous theme it shares most topics with (each previous id used
 * once, the largest overlaps first); a new theme's id derives from its topics' ids.
 *
 * `memo`: the chatbot's similarity matrix of its last grouping, reused where exact (similarity-memo.ts);
 * the themes are the same with or without it.
 */
export function groupThemes(
  topics: readonly ThemeTopic[],
  previous: readonly Theme[] = [],
  memo?: SimilarityMemo,
  conversations: readonly (readonly string[])[] = [],
): Theme[] {
  const sorted = [...topics].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const at = new Map(sorted.map((t, i) => [t.id, i]))
  const groups = shownCut(
    themeCuts(
      sorted.map((t) => t.centroid),
      memo,
    ),
    conversations
      .map((ids) => [...new Set(ids.flatMap((id) => (at.has(id) ? [at.get(id)!] : [])))])
      .filter((own) => own.length > 0),
  )?.labels
  if (groups === undefined) return []
  const members = new Map<number, ThemeTopic[]>()
  sorted.forEach((t, i) => {
    const list = members.get(groups[i]!) ?? []
    list.push(t)
    members.set(groups[i]!, list)
  })
  const bySize = (a: ThemeTopic, b: ThemeTopic) => b.size - a.size || (a.id < b.id ? -1 : 1)
  const themes = [...members.values()]
    .map((list) => list.sort(bySize))
    .sort((a, b) => total(b) - total(a) || (a[0]!.id < b[0]!.id ? -1 : 1))
  const labels = themeLabels(themes)
  const ids = themeIds(
    themes.map((list) => list.map((t) => t.id)),
    previous,
  )
  return themes.map((list, i) => ({ id: ids[i]!, label: labels[i]!, topicIds: list.map((t) => t.id) }))
}

const total = (list: readonly ThemeTopic[]) => list.reduce((s, t) => s + t.size, 0)

/**
 * The numbers of themes tried for n topics: from the rule of thumb k ≈ √(n/2) (Mardia, Kent and Bibby,
 * Multivariate Analysis, 1979), at least 2, up to min(MAX_THEMES, n / 2). Without the floor (2 … 12) the
 * silhouette, nearly flat on a chatbot's multi-turn topics (0.06–0.11 at every cut), chose 2 themes, one of
 * 97 % of the conversations, for 39 topics (bench/FINDINGS.md "How many themes"). Empty below four topics.
 */
export function themeCounts(n: number): number[] {
  if (n < MIN_TOPICS_TO_GROUP) return []
  const most = Math.min(MAX_THEMES, Math.floor(n / 2))
  const least = Math.min(most, Math.max(2, Math.round(Math.sqrt(n / 2))))
  return Array.from({ length: most - least + 1 }, (_, i) => least + i)
}

/** One way of cutting the Ward dendrogram: k groups, a group number per centroid, its mean silhouette. */
export interface ThemeCut {
  readonly k: number
  readonly labels: number[]
  readonly score: number
}

/**
 * Every cut tried for these centroids, one per themeCounts(n), coarsest first, each with its mean
 * silhouette (cosine). Cost for n centroids of d dimensions: the similarity matrix, n(n−1)/2 dot products
 * (those of centroids unchanged since the memo's last call reused), then O(n²) for Ward's chain and for
 * each tried cut's silhouettes (bench/theme-cost.ts).
 */
export function themeCuts(centroids: readonly Vector[], memo?: SimilarityMemo): ThemeCut[] {
  const n = centroids.length
  if (n < MIN_TOPICS_TO_GROUP) return []
  const similarity = memo ? memo.similarities(centroids) : similarities(centroids)
  const merges = wardMerges(similarity, n)
  return themeCounts(n).map((k) => {
    const labels = labelsAfter(merges, n, n - k)
    return { k, labels, score: meanSilhouette(labels, k, similarity, n) }
  })
}

/** The cut of best mean silhouette, ties to the coarser; undefined when none was tried. */
export function bestCut(cuts: readonly ThemeCut[]): ThemeCut | undefined {
  let best: ThemeCut | undefined
  for (const cut of cuts) if (!best || cut.score > best.score) best = cut
  return best
}

/**
 * The cut shown as themes: of the cuts whose largest theme holds at most MAX_THEME_TOPIC_SHARE of the
 * topics and at most MAX_THEME_CONVERSATION_SHARE of the `conversations` (each the indices of its topics in the
 * cuts' order, none empty), the one of best silhouette (ties to the coarser); undefined when none does, so no
 * themes.
 */
export function shownCut(
  cuts: readonly ThemeCut[],
  conversations: readonly (readonly number[])[] = [],
): ThemeCut | undefined {
  return bestCut(
    cuts.filter(
      (cut) =>
        largestGroup(cut) <= MAX_THEME_TOPIC_SHARE * cut.labels.length &&
        largestConversations(cut, conversations) <= MAX_THEME_CONVERSATION_SHARE * conversations.length,
    ),
  )
}

/** How many of the conversations the cut's largest theme has a topic of (0 without conversations). */
function largestConversations(cut: ThemeCut, conversations: readonly (readonly number[])[]): number {
  const counts = new Array<number>(cut.k).fill(0)
  for (const topics of conversations)
    for (const theme of new Set(topics.map((t) => cut.labels[t]!))) counts[theme]!++
  return Math.max(0, ...counts)
}

function largestGroup(cut: ThemeCut): number {
  const sizes = new Array<number>(cut.k).fill(0)
  for (const l of cut.labels) sizes[l]!++
  return Math.max(...sizes)
}

/**
 * A group number per centroid: the Ward cut of best mean silhouette (cosine) among themeCounts(n) groups,
 * whatever its largest group; all 0 below four centroids (bench:theme-cuts compares cuts by it).
 */
export function clusterCentroids(centroids: readonly Vector[], memo?: SimilarityMemo): number[] {
  return bestCut(themeCuts(centroids, memo))?.labels ?? centroids.map(() => 0)
}

/** The mean silhouette (cosine distance) of all points; a point alone in its group scores 0. */
function meanSilhouette(labels: readonly number[], k: number, sim: Float32Array, n: number): number {
  const sizes = new Array<number>(k).fill(0)
  for (const l of labels) sizes[l]!++
  const sums = new Float64Array(k)
  let total = 0
  for (let i = 0; i < n; i++) {
    const own = labels[i]!
    if (sizes[own] === 1) continue
    sums.fill(0)
    // The diagonal is 0: a point's own similarity is left out of its group's sum.
    for (let j = 0; j < n; j++) sums[labels[j]!]! += sim[i * n + j]!
    const a = 1 - sums[own]! / (sizes[own]! - 1)
    let b = Number.POSITIVE_INFINITY
    for (let c = 0; c < k; c++) if (c !== own) b = Math.min(b, 1 - sums[c]! / sizes[c]!)
    const denominator = Math.max(a, b)
    total += denominator > 0 ? (b - a) / denominator : 0
  }
  return total / n
}

/** The words of a topic's label and keywords, single words (a bigram's words each). */
function wordsOf(topic: ThemeTopic): Set<string> {
  const words = new Set<string>()
  for (const phrase of [topic.label, ...topic.keywords]) {
    for (const w of phrase.toLowerCase().split(/[\s,]+/)) if (/\p{L}/u.test(w)) words.add(w)
  }
  return words
}

function themeLabels(themes: readonly (readonly ThemeTopic[])[]): string[] {
  // Each theme is one document of its topics' single-word terms (class-based TF-IDF, labels.ts
  // termCorpus), but only the counts of the words its topics name are read: one pass over the topics'
  // terms counts those, and no map of every term is built per theme (the counts are integers, so the
  // sums, and the scores, are the same whatever the order).
  const wordsByTheme = themes.map((list) => list.map(wordsOf))
  const named = wordsByTheme.map((topicWords) => new Set(topicWords.flatMap((w) => [...w])))
  const anyNamed = new Set(named.flatMap((words) => [...words]))
  const frequency = new Map<string, number>()
  const counts = themes.map(() => new Map<string, number>())
  const sizes = themes.map((list, i) => {
    let size = 0
    for (const t of list) {
      for (const [term, n] of t.terms) {
        if (term.includes(' ')) continue
        size += n
        if (!anyNamed.has(term)) continue
        frequency.set(term, (frequency.get(term) ?? 0) + n)
        if (named[i]!.has(term)) counts[i]!.set(term, (counts[i]!.get(term) ?? 0) + n)
      }
    }
    return size
  })
  const averageTermsPerTheme = themes.length === 0 ? 0 : sizes.reduce((a, b) => a + b, 0) / themes.length
  const taken = new Set<string>()
  return themes.map((_list, i) => {
    const size = sizes[i]!
    const doc = counts[i]!
    const topicWords = wordsByTheme[i]!
    const score = (w: string) => {
      const n = doc.get(w) ?? 0
      const f = Math.max(frequency.get(w) ?? 0, n)
      return size === 0 || f === 0 ? 0 : (n / size) * Math.log(1 + averageTermsPerTheme / f)
    }
    const candidates = [...new Set(topicWords.flatMap((w) => [...w]))]
    const covering = (w: string, among: readonly Set<string>[]) => among.filter((s) => s.has(w)).length
    const rank = (among: readonly Set<string>[]) =>
      candidates
        .map((w) => ({ w, c: covering(w, among), s: score(w) }))
        // s = 0: no member used the word as a term of its own, a word of a phrase ("who are you", the
        // first words naming a request without a content word, terms.ts): a function word, no theme's name.
        .filter((x) => x.c > 0 && x.s > 0)
        .sort((a, b) => b.c * b.s - a.c * a.s || b.c - a.c || (a.w < b.w ? -1 : 1))
        .map((x) => x.w)
    const ranked = rank(topicWords)
    if (ranked.length === 0) return distinct('Topics', taken)
    const first = ranked[0]!
    const words = [first]
    const left = topicWords.filter((s) => !s.has(first))
    if (left.length > 0) {
      const second = rank(left)[0]
      if (second !== undefined) words.push(second)
    }
    let label = capitalized(words.join(', '))
    // Another theme has it: one more of its words, else a number.
    for (const w of ranked) {
      if (!taken.has(label)) break
      if (!words.includes(w)) {
        words.push(w)
        label = capitalized(words.join(', '))
      }
    }
    return distinct(label, taken)
  })
}

function distinct(label: string, taken: Set<string>): string {
  let out = label
  for (let n = 2; taken.has(out); n++) out = `${label} (${n})`
  taken.add(out)
  return out
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** Each group's id: the previous theme's it shares most topics with, else one from its topics' ids. */
function themeIds(groups: readonly string[][], previous: readonly Theme[]): string[] {
  const pairs: { g: number; p: number; overlap: number }[] = []
  groups.forEach((topics, g) => {
    const own = new Set(topics)
    previous.forEach((theme, p) => {
      const overlap = theme.topicIds.filter((id) => own.has(id)).length
      if (overlap > 0) pairs.push({ g, p, overlap })
    })
  })
  pairs.sort((a, b) => b.overlap - a.overlap || (previous[a.p]!.id < previous[b.p]!.id ? -1 : 1) || a.g - b.g)
  const ids: (string | undefined)[] = groups.map(() => undefined)
  const used = new Set<number>()
  for (const { g, p } of pairs) {
    if (ids[g] !== undefined || used.has(p)) continue
    ids[g] = previous[p]!.id
    used.add(p)
  }
  const reserved = new Set(ids.filter((id) => id !== undefined))
  return groups.map((topics, g) => {
    if (ids[g] !== undefined) return ids[g]!
    let id = uuidFromText(`theme\u0000${[...topics].sort().join('\u0000')}`)
    for (let n = 2; reserved.has(id); n++) id = uuidFromText(`theme\u0000${n}\u0000${topics.join('\u0000')}`)
    reserved.add(id)
    return id
  })
}
