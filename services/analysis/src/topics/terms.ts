import model from 'wink-eng-lite-web-model'
import winkNLP, { type ItemSentence, type ItsFunction, type PartOfSpeech, type WinkMethods } from 'wink-nlp'

/**
 * The words a topic's label can be made of, from one end-user message: its content words (nouns, proper
 * nouns, verbs, adjectives; lower case, nouns and verbs by their lemma: "cancelling" → "cancel") and the
 * pairs of adjacent ones ("credit score", "reset password"), each once. A message with none ("hi",
 * "thanks!", "yes please") has nothing to be about and gets no topic.
 */
export interface TermExtractor {
  terms(text: string): string[]
}

/** Longer messages are read for terms by their start: a pasted log is not what a topic is named after. */
const MAX_CHARS = 1_000
const CONTENT_POS: ReadonlySet<PartOfSpeech> = new Set(['NOUN', 'PROPN', 'VERB', 'ADJ'])
const BRIDGE_POS: ReadonlySet<PartOfSpeech> = new Set(['DET', 'PRON'])

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

export function createTermExtractor(): TermExtractor {
  const nlp: WinkMethods = winkNLP(model, ['sbd', 'pos'])
  const its = nlp.its
  return {
    terms(text) {
      const sample = text.slice(0, MAX_CHARS)
      if (!/\p{L}/u.test(sample)) return []
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
      doc.sentences().each((sentence: ItemSentence) => {
        const [start, end] = sentence.out(its.span) as unknown as [number, number]
        let previous: { word: string; pos: PartOfSpeech; skipped: boolean } | undefined
        for (let i = start; i <= end; i++) {
          const word =
            type[i] === 'word' && CONTENT_POS.has(pos[i]!) && !stop[i]
              ? termOf(normal[i]!, pos[i]!, lemma[i])
              : undefined
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
      return [...found]
    },
  }
}

function termOf(normal: string, pos: PartOfSpeech, lemma: string | undefined): string | undefined {
  // Lemmas fold inflections ("crashes" → "crash"), not abbreviations ("app" stays, not "application").
  const folds = (pos === 'NOUN' || pos === 'VERB') && lemma !== undefined && lemma.length <= normal.length
  const word = folds ? lemma.toLowerCase() : normal
  if (word.length < 2 || !/\p{L}/u.test(word) || NOT_TOPICAL.has(word) || NOT_TOPICAL.has(normal))
    return undefined
  return word
}
