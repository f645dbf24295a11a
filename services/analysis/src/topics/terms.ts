import stopwordsIso from 'stopwords-iso/stopwords-iso.json' with { type: 'json' }
import model from 'wink-eng-lite-web-model'
import winkNLP, { type ItemSentence, type ItsFunction, type PartOfSpeech, type WinkMethods } from 'wink-nlp'

/**
 * The words a topic's label can be made of, from one end-user message: its content words (nouns, proper
 * nouns, verbs, adjectives; lower case, nouns and verbs by their lemma: "cancelling" → "cancel") and the
 * pairs of adjacent ones ("credit score", "reset password"), each once. Terms only name topics: which
 * messages are requests, and so make topics, is the language model's decision (requests.ts), so a
 * request without such a word ("what time is it?", "who are you?") still gets terms to be named by:
 * the content words NOT_TOPICAL left out ("time"), else the nouns, verbs and adjectives winkNLP flags as
 * stop words ("call" in "is there someone I can call?", once named "is there someone i"), else its first
 * words ("who are you").
 *
 * A pronoun fused with its auxiliary is a function word, whatever the tagger makes of it: winkNLP splits
 * "it's", "don't", "you're", "i'll" into their words (stop words both), but reads "i'm" (and "i’m") as one
 * proper noun that is no stop word, and "im" as a noun, so "I'm waiting" once gave the term "i'm" and a
 * theme labelled "Pay, i'm" (bench/FINDINGS.md "Labels without pronouns").
 */
export interface TermExtractor {
  /**
   * The words a label may take from the text: never empty for a text with a letter. `language`: the
   * message's (language.ts); in a language other than English, its function words are no terms.
   */
  terms(text: string, language?: string): string[]
  /**
   * Its content words alone, NOT_TOPICAL's left out (empty for "hi", "what time is it?"), read as English:
   * its one caller, bench:requests, measures the English request gate.
   */
  contentTerms(text: string): string[]
}

/**
 * A language's function words (ISO 639-1 code → its words), for a message detected as another language
 * than English: winkNLP's English model tags "el", "la", "mi" of "quiero cambiar la fecha de mi billete"
 * as nouns, and trial6's Spanish chatbot got a topic labelled "el, la, tren" (bench/FINDINGS.md "lang2").
 * English keeps winkNLP's own stop words, as before; an undetermined message ("und") keeps every word.
 */
export type StopWordLists = Readonly<Record<string, readonly string[]>>

/**
 * stopwords-iso 1.1.0 (MIT, a JSON file of 58 languages' lists, no code, no dependencies; the lists of
 * several public collections merged per language), keyed by ISO 639-1 codes as tinyld names languages.
 */
export const STOPWORDS_ISO: StopWordLists = stopwordsIso

/** A text with no content word is named by at most this many of its first words. */
const FALLBACK_WORDS = 4

/** Longer messages are read for terms by their start: a pasted log is not what a topic is named after. */
const MAX_CHARS = 1_000
const CONTENT_POS: ReadonlySet<PartOfSpeech> = new Set(['NOUN', 'PROPN', 'VERB', 'ADJ'])
const BRIDGE_POS: ReadonlySet<PartOfSpeech> = new Set(['DET', 'PRON'])
/** An apostrophe inside a word: "i'm", "ma'am", "rock'n'roll" (a possessive's winkNLP splits off). */
const INNER_APOSTROPHE = /^(\p{L}+)['\u2019]\p{L}/u
/**
 * "I'm" written without its apostrophe, which winkNLP does not split (it does "iam", "ive", "youre",
 * "dont"): one form of the closed class of English pronoun-auxiliary contractions, not a word list fitted to
 * a corpus.
 */
const FUSED_WITHOUT_APOSTROPHE: ReadonlySet<string> = new Set(['im'])

/**
 * Words that carry no topic of their own in a support chat, which winkNLP's stop words leave in:
 * courtesy and chit-chat, time words, and the verbs every request is phrased with ("I want to…",
 * "can you help me…").
 */
const NOT_TOPICAL: ReadonlySet<string> = new Set([
  ...['anyone', 'anything', 'bit', 'bye', 'everyone', 'everything', 'guys', 'hello', 'hey', 'hi', 'kind'],
  ...['lot', 'lots', 'nothing', 'ok', 'okay', 'please', 'someone', 'something', 'sort', 'stuff', 'thank'],
  ...['thanks', 'thing', 'things', 'way', 'yes', 'yeah', 'sure', 'good', 'great', 'nice', 'bad', 'able'],
  ...['day', 'days', 'evening', 'hour', 'hours', 'minute', 'minutes', 'moment', 'month', 'months', 'morning'],
  ...['night', 'second', 'seconds', 'time', 'times', 'today', 'tomorrow', 'tonight', 'week', 'weeks'],
  ...['year', 'years', 'yesterday', 'now', 'right'],
  ...['be', 'have', 'do', 'get', 'got', 'want', 'need', 'know', 'like', 'help', 'tell', 'let', 'make', 'go'],
  ...['see', 'try', 'think', 'say', 'give', 'take', 'look', 'use', 'wonder', 'would', 'could', 'should'],
  ...['can', 'will', 'may', 'might', 'must', 'ask', 'find', 'show', 'mean', 'come'],
])

export function createTermExtractor(stopWordLists: StopWordLists = STOPWORDS_ISO): TermExtractor {
  const nlp: WinkMethods = winkNLP(model, ['sbd', 'pos'])
  const foreign = new Map<string, ReadonlySet<string>>()
  /** The function words of a message's language, when it is neither English nor undetermined. */
  const functionWordsOf = (language: string | undefined): ReadonlySet<string> | undefined => {
    if (language === undefined || language === 'en' || !Object.hasOwn(stopWordLists, language))
      return undefined
    let words = foreign.get(language)
    if (!words) {
      words = new Set(stopWordLists[language]!.map((w) => w.toLowerCase()))
      foreign.set(language, words)
    }
    return words
  }
  const its = nlp.its
  const stopWords = new Map<string, boolean>()
  // The tagger's own stop-word flag for a word read alone ("i", "you": yes; "ma", "rock": no); few distinct.
  const isStopWord = (word: string): boolean => {
    let stop = stopWords.get(word)
    if (stop === undefined) {
      stop = (nlp.readDoc(word).tokens().out(its.stopWordFlag) as boolean[]).every(Boolean)
      if (stopWords.size < 1_000) stopWords.set(word, stop)
    }
    return stop
  }
  /** "i'm", "i’m", "im": a pronoun and its auxiliary the tagger left as one word. */
  const fusedFunctionWord = (normal: string): boolean => {
    if (FUSED_WITHOUT_APOSTROPHE.has(normal)) return true
    const base = INNER_APOSTROPHE.exec(normal)?.[1]
    return base !== undefined && isStopWord(base)
  }
  function extract(
    text: string,
    language: string | undefined,
  ): {
    content: string[]
    untopical: string[]
    stopContent: string[]
    words: string[]
  } {
    const none = { content: [], untopical: [], stopContent: [], words: [] }
    const sample = text.slice(0, MAX_CHARS)
    if (!/\p{L}/u.test(sample)) return none
    // Text in capitals only is shouting: tagged as is, every word would be a proper noun.
    const doc = nlp.readDoc(/\p{Ll}/u.test(sample) ? sample : sample.toLowerCase())
    const tokens = doc.tokens()
    const normal = tokens.out(its.normal) as string[]
    const type = tokens.out(its.type) as string[]
    const pos = tokens.out(its.pos) as PartOfSpeech[]
    const stop = tokens.out(its.stopWordFlag) as boolean[]
    // winkNLP's typings give its.lemma a signature `out` does not accept; it works as any its function.
    const lemma = tokens.out(its.lemma as unknown as ItsFunction<string>) as string[]
    const found = new Set<string>()
    const untopical = new Map<string, PartOfSpeech>()
    // Content words the tagger flags as stop words ("call" in "is there someone I can call?").
    const stopContent = new Map<string, PartOfSpeech>()
    // A word of the message's own language's list is a function word, whatever the English tagger made of
    // it: no term, nor a stop word named for want of others; the first words name the message without them,
    // or with them when it has nothing else.
    const functionWords = functionWordsOf(language)
    const functional = normal.map((w) => functionWords?.has(w) === true)
    const allWords = normal.filter((w, i) => type[i] === 'word' && /\p{L}/u.test(w))
    const ownWords = normal.filter((w, i) => type[i] === 'word' && /\p{L}/u.test(w) && !functional[i])
    const words = ownWords.length > 0 ? ownWords : allWords
    doc.sentences().each((sentence: ItemSentence) => {
      const [start, end] = sentence.out(its.span) as unknown as [number, number]
      let previous: { word: string; pos: PartOfSpeech; skipped: boolean } | undefined
      for (let i = start; i <= end; i++) {
        const content =
          type[i] === 'word' &&
          CONTENT_POS.has(pos[i]!) &&
          !stop[i] &&
          !functional[i] &&
          !fusedFunctionWord(normal[i]!)
        const word = content ? termOf(normal[i]!, pos[i]!, lemma[i]) : undefined
        if (content && word === undefined && /\p{L}/u.test(normal[i]!))
          untopical.set(foldOf(normal[i]!, pos[i]!, lemma[i]), pos[i]!)
        const flagged = type[i] === 'word' && CONTENT_POS.has(pos[i]!) && stop[i] && !functional[i]
        if (flagged && /\p{L}{2}/u.test(normal[i]!)) {
          const folded = foldOf(normal[i]!, pos[i]!, lemma[i])
          if (!NOT_TOPICAL.has(folded) && !NOT_TOPICAL.has(normal[i]!)) stopContent.set(folded, pos[i]!)
        }
        if (word === undefined) {
          // "reset my password", "cancel the order": a verb and its object across one determiner.
          const bridge = previous?.pos === 'VERB' && !previous.skipped && BRIDGE_POS.has(pos[i]!)
          previous = bridge && previous ? { ...previous, skipped: true } : undefined
          continue
        }
        found.add(word)
        const pairs = previous && previous.word !== word && (!previous.skipped || pos[i] === 'NOUN')
        if (pairs) found.add(`${previous!.word} ${word}`)
        previous = { word, pos: pos[i]!, skipped: false }
      }
    })
    // The request's own verbs ("want", "know") name it last: its nouns and adjectives ("time") first.
    const named = [...untopical].flatMap(([w, p]) => (p === 'VERB' ? [] : [w]))
    const flagged = [...stopContent].flatMap(([w, p]) => (p === 'VERB' ? [] : [w]))
    return {
      content: [...found],
      untopical: named.length > 0 ? named : [...untopical.keys()],
      stopContent: flagged.length > 0 ? flagged : [...stopContent.keys()],
      words,
    }
  }
  return {
    contentTerms: (text) => extract(text, undefined).content,
    terms(text, language) {
      const { content, untopical, stopContent, words } = extract(text, language)
      if (content.length > 0) return content
      if (untopical.length > 0) return untopical
      if (stopContent.length > 0) return stopContent
      return words.length > 0 ? [words.slice(0, FALLBACK_WORDS).join(' ')] : []
    },
  }
}

function foldOf(normal: string, pos: PartOfSpeech, lemma: string | undefined): string {
  // Lemmas fold inflections ("crashes" → "crash"), not abbreviations ("app" stays, not "application").
  const folds = (pos === 'NOUN' || pos === 'VERB') && lemma !== undefined && lemma.length <= normal.length
  return folds ? lemma.toLowerCase() : normal
}

function termOf(normal: string, pos: PartOfSpeech, lemma: string | undefined): string | undefined {
  const word = foldOf(normal, pos, lemma)
  if (word.length < 2 || !/\p{L}/u.test(word) || NOT_TOPICAL.has(word) || NOT_TOPICAL.has(normal))
    return undefined
  return word
}
