/** How often each term occurs in a topic's messages (a message counts a term once). */
export type TermCounts = Map<string, number>

export interface TopicLabel {
  /** Up to three of the keywords, the most distinctive first: "reset password, login". */
  readonly label: string
  /** The topic's most distinctive terms, most distinctive first (at most KEYWORDS). */
  readonly keywords: string[]
}

const KEYWORDS = 10
const LABEL_TERMS = 3

/** What c-TF-IDF needs of all of a chatbot's topics: each term's count over all of them, and their mean size. */
export interface TermCorpus {
  readonly frequency: ReadonlyMap<string, number>
  readonly averageTermsPerTopic: number
}

export function termCorpus(topics: Iterable<TermCounts>): TermCorpus {
  const frequency = new Map<string, number>()
  let total = 0
  let count = 0
  for (const terms of topics) {
    count++
    for (const [term, n] of terms) {
      frequency.set(term, (frequency.get(term) ?? 0) + n)
      total += n
    }
  }
  return { frequency, averageTermsPerTopic: count === 0 ? 0 : total / count }
}

/**
 * A topic's label from its members' own words, by class-based TF-IDF (Grootendorst, BERTopic): all of a
 * topic's messages form one document, and a term scores its frequency in the topic times
 * log(1 + A / f), A the average number of terms per topic and f the term's frequency over all topics, so
 * a word every topic uses ("account", "help") ranks below the words that tell this topic apart. Terms
 * seen in only one message are passed over while others remain: one message's words are not a topic's.
 * Bigrams ("reset password") are terms too; a label keeps a bigram rather than its words alone.
 */
export function labelTopic(terms: TermCounts, corpus: TermCorpus): TopicLabel {
  let total = 0
  for (const n of terms.values()) total += n
  if (total === 0) return { label: '', keywords: [] }
  const scored = [...terms]
    .map(([term, n]) => {
      const f = Math.max(corpus.frequency.get(term) ?? 0, n)
      return { term, n, score: (n / total) * Math.log(1 + corpus.averageTermsPerTopic / f) }
    })
    // Ties by term so that the label never depends on the order terms were first seen.
    .sort((a, b) => b.score - a.score || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
  const repeated = scored.filter((s) => s.n >= 2)
  const ranked = repeated.length > 0 ? repeated : scored
  const keywords = ranked.slice(0, KEYWORDS).map((s) => s.term)
  return { label: labelOf(keywords), keywords }
}

/**
 * A label no other topic of the chatbot has (`taken`): the topic's own label when free, else its label
 * of one keyword more, and so on, else that label numbered. Two topics whose first words agree ("card,
 * lost" and "card, lost, stolen") then still read apart on the Topics page and in its tables.
 */
export function distinctLabel(topic: TopicLabel, taken: ReadonlySet<string>): string {
  // Labels compare as a reader does: "Refunds" and "refunds " are one label.
  const keys = new Set([...taken].map(labelKey))
  const free = (label: string) => !keys.has(labelKey(label))
  if (free(topic.label)) return topic.label
  for (let terms = LABEL_TERMS + 1; terms <= topic.keywords.length; terms++) {
    const longer = labelOf(topic.keywords, terms)
    if (free(longer)) return longer
  }
  for (let n = 2; ; n++) if (free(`${topic.label} (${n})`)) return `${topic.label} (${n})`
}

/**
 * Each member's terms with those an earlier member of the same conversation already gave left out: a
 * topic counts a term once per conversation. On multi-turn traffic an end user repeats a name or a detail
 * over their messages ("my dad", "dad's flat"), and two messages of one conversation would pass labelTopic's
 * "seen in more than one message" and name the topic after one person's conversation ("change, letter,
 * dad"; bench/FINDINGS.md "Topics and themes on multi-turn traffic").
 */
export function termsOncePerConversation(
  members: readonly { readonly conversationId: string; readonly terms: readonly string[] }[],
): string[][] {
  const seen = new Map<string, Set<string>>()
  return members.map((m) => {
    const own = seen.get(m.conversationId) ?? new Set<string>()
    seen.set(m.conversationId, own)
    const fresh = m.terms.filter((t) => !own.has(t))
    for (const t of fresh) own.add(t)
    return fresh
  })
}

/** A label as compared for sameness: trimmed, spaces collapsed, lower case. */
export function labelKey(label: string): string {
  return label.trim().replace(/\s+/g, ' ').toLowerCase()
}

/** The first keywords, a bigram taking the place of a word of it already chosen and words of a chosen bigram left out. */
function labelOf(keywords: readonly string[], terms = LABEL_TERMS): string {
  const picked: string[] = []
  for (const term of keywords) {
    if (picked.length >= terms) break
    const words = term.split(' ')
    if (words.length === 1) {
      if (picked.some((p) => p.split(' ').includes(term))) continue
      picked.push(term)
      continue
    }
    // The bigram stands for each of its words already chosen, in the place of the first of them.
    const first = picked.findIndex((p) => words.includes(p))
    const rest = picked.filter((p) => !words.includes(p))
    if (first < 0) rest.push(term)
    else rest.splice(Math.min(first, rest.length), 0, term)
    picked.splice(0, picked.length, ...rest)
  }
  return [...new Set(picked)].join(', ')
}
