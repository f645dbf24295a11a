/**
 * The local analyzer: sentiment and topics computed in-process, deterministic, no network, no model download
 * (everything ships inside npm packages).
 *
 * Sentiment: sentiment.ts (VADER with a support-domain extension, plus emoji), shared with the other
 * analyzers; its version is part of this analyzer's.
 *
 * Topics: winkNLP (`wink-nlp` + `wink-eng-lite-web-model`, MIT, actively released, typed, no install
 * scripts, the model is in the package) tokenizes, splits sentences, tags parts of speech and lemmatizes;
 * key phrases are its noun chunks. First come the chatbot's own labels (settings.topics; a keyword matches
 * case-insensitively as a whole word or phrase).
 *
 * Why not winkNLP alone, which also scores sentiment with negation: it has no intensity handling ("very
 * good" = "good", "!!!" and caps ignored), it averages rather than sums, and its word lexicon holds emoji
 * names with emoji valences ("umbrella", "key", "star" +0.5, "waiting" +0.5, "cat" −0.5), which mis-scores
 * ordinary support messages ("my refund for the broken umbrella has not arrived" comes out positive).
 * `retext-keywords`/`retext-pos` would bring a whole unified pipeline for topics only, and retext's own
 * sentiment plugin is marked legacy.
 */
import model from 'wink-eng-lite-web-model'
import winkNLP, { type ItemSentence, type ItsFunction, type PartOfSpeech, type WinkMethods } from 'wink-nlp'
import {
  type Analyzer,
  AnalyzerError,
  type AnalyzerInfo,
  labelFor,
  type MessageAnalysis,
  type MessageToAnalyze,
} from '../analyzer.ts'
import { languageOf } from '../language.ts'
import { keywordHits, type TopicMatcher, topicMatchers } from '../topic-matchers.ts'
import { createSentimentScorer, SENTIMENT_VERSION, type SentimentScorer } from './sentiment.ts'
import { vaderRules } from './vader.ts'

/** Bump when this file's topic rules change results (the library versions are part of the version already). */
const RULES_VERSION = 2
const MAX_TOPICS = 5
const MAX_PHRASE_WORDS = 3
/** Longer content is analyzed by its first this many characters (a pasted log is not a conversation). */
export const MAX_ANALYZED_CHARS = 20_000
/** Yields to the event loop every this many messages of a large batch. */
const YIELD_EVERY = 200

/** Nouns too generic to be a topic, and time words (winkNLP's stopword list has none of these). */
const GENERIC_NOUNS: ReadonlySet<string> = new Set([
  'anyone',
  'anything',
  'bit',
  'bye',
  'day',
  'days',
  'evening',
  'everyone',
  'everything',
  'guys',
  'hello',
  'hey',
  'hi',
  'hour',
  'hours',
  'kind',
  'lot',
  'lots',
  'minute',
  'minutes',
  'moment',
  'month',
  'months',
  'morning',
  'night',
  'nothing',
  'ok',
  'okay',
  'please',
  'second',
  'seconds',
  'someone',
  'something',
  'sort',
  'stuff',
  'thank',
  'thanks',
  'thing',
  'things',
  'time',
  'times',
  'today',
  'tomorrow',
  'tonight',
  'way',
  'week',
  'weeks',
  'year',
  'years',
  'yes',
  'yesterday',
])
const PHRASE_POS: ReadonlySet<PartOfSpeech> = new Set(['ADJ', 'NOUN', 'PROPN'])
/** The sentiment version names the winkNLP packages the topics run on too. */
export const LOCAL_ANALYZER_INFO: AnalyzerInfo = {
  name: 'local-lexicon',
  version: `${SENTIMENT_VERSION}+v${RULES_VERSION}`,
}

interface Tokens {
  readonly normal: string[]
  readonly type: string[]
  readonly pos: PartOfSpeech[]
  readonly stop: boolean[]
  readonly lemma: string[]
}

/** Builds the local analyzer; loading the model is synchronous (a few hundred ms, once). */
export function createLocalAnalyzer(): Analyzer {
  const engine = new Engine()
  return {
    info: LOCAL_ANALYZER_INFO,
    async analyzeMessages(messages, context, signal) {
      const matchers = topicMatchers(context.topics)
      const results: MessageAnalysis[] = []
      for (let i = 0; i < messages.length; i++) {
        if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
        if (signal?.aborted) throw new AnalyzerError('timeout', 'analysis aborted', true)
        const message = messages[i]!
        if (typeof message.content !== 'string') {
          throw new AnalyzerError('invalid_input', `message ${String(message.id)} has no text content`, false)
        }
        results.push({ ...engine.analyze(message, matchers), ...languageOf(message) })
      }
      return results
    },
  }
}

class Engine {
  /** Sentence splitting, POS tags, lemmas: what key phrases need, nothing more. */
  readonly #nlp: WinkMethods = winkNLP(model, ['sbd', 'pos'])
  readonly #sentiment: SentimentScorer = createSentimentScorer()
  /**
   * VADER's own lexicon, without the support extension: a problem VADER does not rate ("bug", "outage")
   * names what a conversation is about and stays a possible topic, as before the extension.
   */
  readonly #vaderLexicon = vaderRules().lexicon

  analyze(message: MessageToAnalyze, matchers: readonly TopicMatcher[]): MessageAnalysis {
    const text = message.content.slice(0, MAX_ANALYZED_CHARS)
    if (text.trim() === '') {
      return { messageId: message.id, sentiment: { score: 0, label: 'neutral' }, topics: [] }
    }
    const score = this.#sentiment.score(text)
    const topics = this.#topics(text, matchers)
    return { messageId: message.id, sentiment: { score, label: labelFor(score) }, topics }
  }

  /** Whether VADER's lexicon gives the word a sentiment: such a word alone is not a topic. */
  #isSentimentWord(word: string): boolean {
    const valence = this.#vaderLexicon.get(word)
    return valence !== undefined && valence !== 0
  }

  #topics(text: string, matchers: readonly TopicMatcher[]): string[] {
    const topics: string[] = []
    const seen = new Set<string>()
    /** A key phrase that is just a matched keyword says nothing its label did not. */
    const matchedKeywords = new Set<string>()
    const add = (topic: string, isLabel: boolean) => {
      if (topics.length >= MAX_TOPICS || topic === '' || seen.has(topic)) return
      if (!isLabel && matchedKeywords.has(topic)) return
      seen.add(topic)
      topics.push(topic)
    }

    // The chatbot's own labels: most keyword hits first, then earliest mention, then their order in settings.
    const labelHits: { label: string; hits: number; first: number; order: number }[] = []
    for (let m = 0; m < matchers.length; m++) {
      const matcher = matchers[m]!
      const { hits, first } = keywordHits(text, matcher)
      if (hits > 0) {
        labelHits.push({ label: matcher.label, hits, first, order: m })
        for (const keyword of matcher.keywords) matchedKeywords.add(keyword)
      }
    }
    labelHits.sort((a, b) => b.hits - a.hits || a.first - b.first || a.order - b.order)
    for (const { label } of labelHits) add(label, true)
    if (topics.length >= MAX_TOPICS) return topics

    // Key phrases: noun chunks (adjectives and nouns ending in a noun, the last 3 words of a longer run), most
    // frequent first, then in order of appearance; then the bare nouns of chunks with adjectives
    // ("broken umbrella" → "umbrella"), so a topic also aggregates across differently described mentions.
    const t = this.#tokens(text)
    const counts = new Map<string, { count: number; first: number }>()
    const cores: string[] = []
    for (const [start, end] of t.spans) {
      let chunk: number[] = []
      const flush = () => {
        while (chunk.length > 0 && t.pos[chunk[chunk.length - 1]!] === 'ADJ') chunk.pop()
        const words = chunk.slice(-MAX_PHRASE_WORDS)
        chunk = []
        if (words.length === 0) return
        if (words.length === 1 && this.#isSentimentWord(t.normal[words[0]!]!)) return
        const phrase = phraseOf(t, words)
        const entry = counts.get(phrase)
        if (entry) entry.count++
        else counts.set(phrase, { count: 1, first: words[0]! })
        const nouns = words.slice(words.findLastIndex((i) => t.pos[i] === 'ADJ') + 1)
        if (nouns.length < words.length) cores.push(phraseOf(t, nouns))
      }
      for (let i = start; i <= end; i++) {
        if (isPhraseToken(t, i)) chunk.push(i)
        else flush()
      }
      flush()
    }
    const ranked = [...counts].sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first)
    for (const [phrase] of ranked) add(phrase, false)
    for (const core of cores) add(core, false)
    return topics
  }

  #tokens(text: string): Tokens & { spans: [number, number][] } {
    // Text in capitals only is shouting: tagged as is, every word would be a proper noun.
    const doc = this.#nlp.readDoc(/\p{Ll}/u.test(text) ? text : text.toLowerCase())
    const its = this.#nlp.its
    const all = doc.tokens()
    const spans: [number, number][] = []
    doc.sentences().each((sentence: ItemSentence) => {
      spans.push(sentence.out(its.span) as unknown as [number, number])
    })
    return {
      spans,
      normal: all.out(its.normal) as string[],
      type: all.out(its.type) as string[],
      pos: all.out(its.pos) as PartOfSpeech[],
      stop: all.out(its.stopWordFlag) as boolean[],
      // winkNLP's typings give its.lemma a signature `out` does not accept; it works as any its function.
      lemma: all.out(its.lemma as unknown as ItsFunction<string>) as string[],
    }
  }
}

function isPhraseToken(t: Tokens, i: number): boolean {
  const normal = t.normal[i]!
  return (
    t.type[i] === 'word' &&
    PHRASE_POS.has(t.pos[i]!) &&
    !t.stop[i] &&
    normal.length > 1 &&
    /\p{L}/u.test(normal) &&
    !GENERIC_NOUNS.has(normal)
  )
}

/** The words' normal (lowercase) forms, the head (last word) lemmatized when it is a common noun. */
function phraseOf(t: Tokens, words: readonly number[]): string {
  const last = words[words.length - 1]!
  return words
    .map((i) => (i === last && t.pos[i] === 'NOUN' && t.lemma[i] ? t.lemma[i]! : t.normal[i]!))
    .join(' ')
}
