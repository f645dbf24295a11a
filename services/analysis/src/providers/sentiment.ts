/**
 * Sentiment of one message as a compound score in −1..1: VADER's rules (vader.ts) plus emoji. Pure,
 * synchronous and deterministic; shared by the analyzers.
 *
 * VADER (Hutto & Gilbert 2014) is a human-rated lexicon of 7,500 words, emoticons and slang with rules for
 * negation, boosters and dampeners, capitals, "!!!"/"??" and "but".
 *
 * Emoji, which VADER's lexicon lacks, are scored with winkNLP's emoji lexicon and added to VADER's raw sum
 * before its normalization (VADER 3.3 does the equivalent by spelling emoji out as words).
 */
import { createRequire } from 'node:module'
import model from 'wink-eng-lite-web-model'
import winkNLP, { type WinkMethods } from 'wink-nlp'
import { compound, vaderRules, valenceSum } from './vader.ts'

export interface SentimentScorer {
  /** −1 (most negative) .. 1 (most positive); 0 for empty text or text without sentiment. */
  score(text: string): number
}

/** Longer text is scored by its first this many characters (a pasted log is not a conversation). */
export const MAX_SCORED_CHARS = 20_000
/** winkNLP's emoji scores are in −1..1; VADER's valences are on a ±4 scale. */
const EMOJI_VALENCE_SCALE = 4
const CACHE_LIMIT = 100_000
/** An emoji with its modifiers: variation selector, skin tone, ZWJ sequences. */
const EMOJI = /\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier}|\u200D\p{Extended_Pictographic})*/gu

const require = createRequire(import.meta.url)
const versionOf = (pkg: string) => (require(`${pkg}/package.json`) as { version: string }).version

/** Changes whenever a score can: the libraries' versions. */
export const SENTIMENT_VERSION =
  `vader-sentiment@${versionOf('vader-sentiment')}+wink-nlp@${versionOf('wink-nlp')}` +
  `+wink-eng-lite-web-model@${versionOf('wink-eng-lite-web-model')}`

/** Loads VADER's lexicon and winkNLP's emoji lexicon (a few hundred ms, once per scorer). */
export function createSentimentScorer(): SentimentScorer {
  const rules = vaderRules()
  const emojiNlp: WinkMethods = winkNLP(model, ['sentiment'])
  // A pure function of its key, so caching (and clearing when full) cannot change a result.
  const emojiValence = new Map<string, number>()

  const emojiScore = (emoji: string): number => {
    let score = emojiValence.get(emoji)
    if (score === undefined) {
      // winkNLP knows the emoji with or without its variation selector / skin tone.
      score = emojiNlp.readDoc(emoji).out(emojiNlp.its.sentiment) as number
      if (score === 0 && emoji.length > 2) {
        const base = emoji.match(/\p{Extended_Pictographic}/u)?.[0]
        if (base) score = emojiNlp.readDoc(base).out(emojiNlp.its.sentiment) as number
      }
      if (emojiValence.size >= CACHE_LIMIT) emojiValence.clear()
      emojiValence.set(emoji, score)
    }
    return score
  }

  return {
    score(text) {
      let emojiSum = 0
      const withoutEmoji = text.slice(0, MAX_SCORED_CHARS).replace(EMOJI, (emoji) => {
        emojiSum += emojiScore(emoji)
        return ' '
      })
      return compound(valenceSum(withoutEmoji, rules) + emojiSum * EMOJI_VALENCE_SCALE)
    },
  }
}
