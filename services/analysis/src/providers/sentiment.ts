/**
 * Sentiment of one message as a compound score in −1..1: VADER's rules (vader.ts) with a support-domain
 * extension (support-lexicon.ts), plus emoji. Pure, synchronous and deterministic; shared by the analyzers.
 *
 * VADER (Hutto & Gilbert 2014) is a human-rated lexicon of 7,500 words, emoticons and slang with rules for
 * negation, boosters and dampeners, capitals, "!!!"/"??" and "but". It was rated on social media text, so
 * it reads most support complaints as neutral: "the app crashes when I upload a photo", "my order is late
 * again", "still not working" score 0. The extension adds what signals a problem in customer support as
 * lexicon entries (see support-lexicon.ts), so VADER's own rules still apply to them: "not broken" and "no
 * errors" flip, "really slow" is stronger, "fast but it crashes" leans on the part after "but". What it
 * measures: `npm run bench:sentiment`, bench/FINDINGS.md "Sentiment: complaints".
 *
 * Emoji, which VADER's lexicon lacks, are scored with winkNLP's emoji lexicon and added to VADER's raw sum
 * before its normalization (VADER 3.3 does the equivalent by spelling emoji out as words).
 */
import { createRequire } from 'node:module'
import model from 'wink-eng-lite-web-model'
import winkNLP, { type WinkMethods } from 'wink-nlp'
import { SUPPORT_RULES_VERSION, supportRules } from './support-lexicon.ts'
import { compound, type VaderRules, vaderRules, valenceSum } from './vader.ts'

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

/** Changes whenever a score can: the libraries' versions and the support rules' version. */
export const SENTIMENT_VERSION =
  `vader-sentiment@${versionOf('vader-sentiment')}+wink-nlp@${versionOf('wink-nlp')}` +
  `+wink-eng-lite-web-model@${versionOf('wink-eng-lite-web-model')}+support-v${SUPPORT_RULES_VERSION}`

export interface SentimentOptions {
  /** `vader`: VADER's rules alone, as scored before the support extension (for comparisons). */
  readonly rules?: 'support' | 'vader'
}

/** Loads VADER's lexicon and winkNLP's emoji lexicon (a few hundred ms, once per scorer). */
export function createSentimentScorer(options: SentimentOptions = {}): SentimentScorer {
  const base = vaderRules()
  const rules: VaderRules = options.rules === 'vader' ? base : supportRules(base)
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
