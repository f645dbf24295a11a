/**
 * The support-domain extension of VADER: what signals a problem in a customer's message to a company, as
 * lexicon entries and boosters, so VADER's rules (negation, boosters, capitals, "but", punctuation) apply
 * to them as to its own words. Valences are on VADER's scale, next to its own ratings: "bad" −2.5, "fail"
 * −2.5, "broken" −2.1, "fails" −1.8, "problem" −1.7, "error" −1.7, "delay" −1.3, "missing" −1.2.
 *
 * Tuned on bench/data/support-sentiment/dev.tsv only; the test half and the UCI review sets measure it.
 */
import { mergePhrases } from './support-phrases.ts'
import type { VaderRules } from './vader.ts'

/**
 * Bump when a score can change: a valence or rule here or in support-phrases.ts, or a rule of vader.ts (our
 * port: the package's version no longer covers it). It versions every score (SENTIMENT_VERSION).
 */
export const SUPPORT_RULES_VERSION = 2

const B_INCR = 0.293

/** Words VADER lacks (or rated in another sense) that report a problem with a product or a service. */
// biome-ignore format: word lists by valence
const PROBLEM_WORDS: Readonly<Record<string, number>> = {
  ...forms(-2.5, 'unusable', 'garbage', 'rubbish', 'trash'),
  ...forms(-2, 'buggy', 'glitchy', 'laggy', 'unresponsive', 'overcharged', 'overcharging', 'scammed'),
  ...forms(-1.7, 'crashes', 'crashed', 'crashing'),
  ...forms(-1.5, 'bug', 'bugs', 'glitch', 'glitches', 'glitched', 'glitching', 'timeout', 'timeouts'),
  ...forms(-1.5, 'late', 'freezes', 'froze', 'frozen', 'freezing', 'lagging', 'lags', 'outage', 'outages'),
  ...forms(-1.2, 'slow', 'slower', 'locked', 'declined', 'bounced', 'unable', 'unauthorized', 'unauthorised'),
  ...forms(-1.2, 'blank', 'buffering', 'buffers', 'drains', 'draining'),
  ...forms(-1, 'waiting', 'nobody', 'forever', 'ages', 'dropping', 'dropped'),
  ...forms(-1, 'cracked', 'flickers', 'flickering'),
  // "I was promised …" in a support chat is a promise not kept (VADER: +1.5).
  promised: -1,
  'double-charged': -2,
  // Phrases that support-phrases.ts merges into one token.
  not_working: -1.8,
  logged_out: -1.5,
  timed_out: -1.5,
  on_hold: -1,
  charged_twice: -2,
  still_nothing: -1.5,
  supposed_to: -1,
  long_wait: -1.2,
  a_joke: -1.5,
  greyed_out: -1.2,
  in_circles: -1.2,
  how_many_times: -1.5,
  // Something done to the customer without their knowing or consent: "without warning", "without asking
  // me", "without my permission" (VADER's negation turns its "warning" positive).
  without_notice: -1.5,
  // A customer who says "elsewhere" to a company is going there: "I'll shop elsewhere", "take my business
  // elsewhere", "look elsewhere" (a threat to leave; VADER has no rating for it).
  elsewhere: -1.2,
}

/**
 * VADER words rated in a sense other than the one support chat uses: requests and politeness ("please
 * help", "I want to", "can I pay by card?", "can I cancel my order?", "how do I freeze my card?", "how do I
 * dispute a transaction?"; the events keep their rating: "my flight was cancelled"), the names of products
 * and features ("free shipping", "saved drafts", "customer support", "interest rate", "data processing
 * agreement", "is my card active", "clear the cache", "order number"), a price or a limit going up ("a
 * big increase", "can you increase my limit?": VADER rates "increase" +1.3), and degree adverbs rated as
 * adjectives ("pretty slow", "super slow": boosters below).
 */
// biome-ignore format: a word list
const NOT_SENTIMENT = [
  'please', 'pls', 'plz', 'help', 'want', 'free', 'save', 'saved', 'support', 'supported', 'interest',
  'agreement', 'active', 'clear', 'restore', 'share', 'care', 'number', 'pay', 'freeze', 'pretty', 'super',
  'cancel', 'dispute', 'increase', 'increased', 'increases',
]

/** Degree words of complaints; VADER's sign rule makes them intensify either way ("still love it"). */
// biome-ignore format: a word list
const BOOSTERS = forms(B_INCR, 'still', 'keeps', 'keep', 'kept', 'constantly', 'repeatedly', 'pretty', 'super')

/** Words that open a hypothetical: what follows is not a complaint ("what happens if a payment fails?"). */
const HYPOTHETICAL: ReadonlySet<string> = new Set(['if', 'unless', 'whether'])

/** VADER's rules with the support extension. */
export function supportRules(base: VaderRules): VaderRules {
  const lexicon = new Map(base.lexicon)
  for (const word of NOT_SENTIMENT) lexicon.delete(word)
  for (const [word, valence] of Object.entries(PROBLEM_WORDS)) lexicon.set(word, valence)
  const boosters = new Map([...base.boosters, ...Object.entries(BOOSTERS)])
  return {
    lexicon,
    boosters,
    rewrite: mergePhrases,
    negatingNo: true,
    afterBoosters: new Map([['again', B_INCR]]),
    hypothetical: HYPOTHETICAL,
  }
}

function forms(valence: number, ...words: string[]): Record<string, number> {
  return Object.fromEntries(words.map((word) => [word, valence]))
}
