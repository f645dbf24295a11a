/**
 * The local analyzer: sentiment and topics computed in-process, deterministic, no network, no model download
 * (everything ships inside npm packages).
 *
 * Sentiment: VADER (Hutto & Gilbert 2014) through `vader-sentiment`, the JavaScript port kept in the
 * vaderSentiment GitHub organization (Comcast; Apache-2.0, no dependencies, no install script). VADER is
 * exactly the rule set the issue asks for: a human-rated lexicon of 7,500 words, emoticons and slang,
 * negation ("not good", "never …"), boosters and dampeners ("very", "slightly"), ALL-CAPS emphasis,
 * "!!!"/"??" emphasis, contrast ("… but …"), idioms, and a compound score in −1..1. The port is complete but
 * looks unmaintained (a 2018-era babel/webpack bundle, no types, no emoji lexicon), hence the `VaderModule`
 * declaration below; if it ever breaks, the algorithm is small enough to vendor. Emoji, which that lexicon
 * lacks, are scored with winkNLP's emoji lexicon and added to VADER's raw sum before its normalization (VADER
 * 3.3 does the equivalent by spelling emoji out as words).
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
import { createRequire } from 'node:module'
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
import { type TopicMatcher, topicMatchers } from '../topic-matchers.ts'

/** Bump when this file's rules change results (the library versions are part of the version already). */
const RULES_VERSION = 1
const MAX_TOPICS = 5
const MAX_PHRASE_WORDS = 3
/** Longer content is analyzed by its first this many characters (a pasted log is not a conversation). */
export const MAX_ANALYZED_CHARS = 20_000
/** Yields to the event loop every this many messages of a large batch. */
const YIELD_EVERY = 200
/** VADER's normalization: compound = x / √(x² + α). */
const NORMALIZATION_ALPHA = 15
/** winkNLP's emoji scores are in −1..1; VADER's valences are on a ±4 scale. */
const EMOJI_VALENCE_SCALE = 4
const CACHE_LIMIT = 100_000

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
/** An emoji with its modifiers: variation selector, skin tone, ZWJ sequences. */
const EMOJI = /\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier}|\u200D\p{Extended_Pictographic})*/gu

interface VaderModule {
  SentimentIntensityAnalyzer: {
    polarity_scores(text: string): { neg: number; neu: number; pos: number; compound: number }
  }
}

const require = createRequire(import.meta.url)
const vader = (require('vader-sentiment') as VaderModule).SentimentIntensityAnalyzer
const versionOf = (pkg: string) => (require(`${pkg}/package.json`) as { version: string }).version

export const LOCAL_ANALYZER_INFO: AnalyzerInfo = {
  name: 'local-lexicon',
  version:
    `vader-sentiment@${versionOf('vader-sentiment')}+wink-nlp@${versionOf('wink-nlp')}` +
    `+wink-eng-lite-web-model@${versionOf('wink-eng-lite-web-model')}+v${RULES_VERSION}`,
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
        results.push(engine.analyze(message, matchers))
      }
      return results
    },
  }
}

class Engine {
  /** Sentence splitting, POS tags, lemmas: what key phrases need, nothing more. */
  readonly #nlp: WinkMethods = winkNLP(model, ['sbd', 'pos'])
  /** Scores single emoji with winkNLP's lexicon. */
  readonly #emojiNlp: WinkMethods = winkNLP(model, ['sentiment'])
  // Pure functions of their key, so caching (and clearing when full) cannot change a result.
  readonly #emojiValence = new Map<string, number>()
  readonly #sentimentWord = new Map<string, boolean>()

  analyze(message: MessageToAnalyze, matchers: readonly TopicMatcher[]): MessageAnalysis {
    const text = message.content.slice(0, MAX_ANALYZED_CHARS)
    if (text.trim() === '') {
      return { messageId: message.id, sentiment: { score: 0, label: 'neutral' }, topics: [] }
    }
    const score = this.#sentiment(text)
    const topics = this.#topics(text, matchers)
    return { messageId: message.id, sentiment: { score, label: labelFor(score) }, topics }
  }

  #sentiment(text: string): number {
    let emojiSum = 0
    const withoutEmoji = text.replace(EMOJI, (emoji) => {
      emojiSum += this.#emojiScore(emoji)
      return ' '
    })
    const compound = vader.polarity_scores(withoutEmoji).compound
    if (emojiSum === 0) return compound
    // Back from VADER's compound to its raw sum, add the emoji, normalize again.
    const c = Math.max(-0.9999, Math.min(0.9999, compound))
    const sum = (c * Math.sqrt(NORMALIZATION_ALPHA)) / Math.sqrt(1 - c * c) + emojiSum * EMOJI_VALENCE_SCALE
    return Math.round((sum / Math.sqrt(sum * sum + NORMALIZATION_ALPHA)) * 10_000) / 10_000
  }

  #emojiScore(emoji: string): number {
    let score = this.#emojiValence.get(emoji)
    if (score === undefined) {
      // winkNLP knows the emoji with or without its variation selector / skin tone.
      const doc = this.#emojiNlp.readDoc(emoji)
      score = doc.out(this.#emojiNlp.its.sentiment) as number
      if (score === 0 && emoji.length > 2) {
        const base = emoji.match(/\p{Extended_Pictographic}/u)?.[0]
        if (base) score = this.#emojiNlp.readDoc(base).out(this.#emojiNlp.its.sentiment) as number
      }
      remember(this.#emojiValence, emoji, score)
    }
    return score
  }

  /** Whether VADER's lexicon gives the word a sentiment: such a word alone is not a topic. */
  #isSentimentWord(word: string): boolean {
    let result = this.#sentimentWord.get(word)
    if (result === undefined) {
      result = vader.polarity_scores(word).compound !== 0
      remember(this.#sentimentWord, word, result)
    }
    return result
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
      let hits = 0
      let first = Number.POSITIVE_INFINITY
      for (const pattern of matcher.patterns) {
        for (const match of text.matchAll(pattern)) {
          hits++
          first = Math.min(first, match.index)
        }
      }
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

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(key, value)
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
