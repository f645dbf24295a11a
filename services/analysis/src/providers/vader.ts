/**
 * VADER's scoring rules (Hutto & Gilbert 2014), ported from `vader-sentiment` 1.1.3 (src/vaderSentiment.js,
 * Copyright 2018 Comcast Cable Communications Management, LLC, Apache-2.0) with the lexicon, the boosters
 * and the tokens as parameters, so a support-domain extension goes through the same negation, booster,
 * capitals, "but" and punctuation rules as VADER's own words. The package itself keeps its lexicon private
 * and scores with it alone; it stays a dependency for that lexicon (`vader_lexicon.txt`) and as the
 * reference: with `vaderRules()` this port scores exactly as the package does (vader.test.ts checks it).
 * Its quirks are kept on purpose (negation words match case-sensitively; "but" only in lower or upper case).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

export interface VaderRules {
  /** Lowercase word (or words joined by one space, for tokens a rewrite merged) → valence, −4..4. */
  readonly lexicon: ReadonlyMap<string, number>
  /** Lowercase word → how much it raises (or, negative, lowers) the intensity of a sentiment word after it. */
  readonly boosters: ReadonlyMap<string, number>
  /** Rewrites VADER's tokens before scoring (merging a phrase into one token, say); identity in VADER. */
  readonly rewrite?: (tokens: string[]) => string[]
  /** vaderSentiment 3.3's "no": not a sentiment before a sentiment word, which it negates ("no errors"). */
  readonly negatingNo?: boolean
  /** Lowercase word → intensity it adds to the sentiment word up to 3 tokens before it ("late again"). */
  readonly afterBoosters?: ReadonlyMap<string, number>
  /** Lowercase words opening a hypothetical: the sentiment of the 4 tokens after one is dropped. */
  readonly hypothetical?: ReadonlySet<string>
}

const B_INCR = 0.293
const B_DECR = -0.293
const C_INCR = 0.733
const N_SCALAR = -0.74
const NORMALIZATION_ALPHA = 15
/** As far as VADER's negation reaches (3 words before), and one more for the subject ("if my card is stolen"). */
const HYPOTHETICAL_SCOPE = 4
/** Python's string.punctuation, the characters VADER strips around words. */
const HAS_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/
// biome-ignore format: VADER's list, kept in its order
const PUNC_LIST = ['.', '!', '?', ',', ';', ':', '-', "'", '"', '!!', '!!!', '??', '???', '?!?', '!?!', '?!?!', '!?!?']
// biome-ignore format: VADER's list, kept in its order
const NEGATE: ReadonlySet<string> = new Set([
  'aint', 'arent', 'cannot', 'cant', 'couldnt', 'darent', 'didnt', 'doesnt', "ain't", "aren't", "can't",
  "couldn't", "daren't", "didn't", "doesn't", 'dont', 'hadnt', 'hasnt', 'havent', 'isnt', 'mightnt', 'mustnt',
  'neither', "don't", "hadn't", "hasn't", "haven't", "isn't", "mightn't", "mustn't", 'neednt', "needn't",
  'never', 'none', 'nope', 'nor', 'not', 'nothing', 'nowhere', 'oughtnt', 'shant', 'shouldnt', 'uhuh',
  'wasnt', 'werent', "oughtn't", "shan't", "shouldn't", 'uh-uh', "wasn't", "weren't", 'without', 'wont',
  'wouldnt', "won't", "wouldn't", 'rarely', 'seldom', 'despite',
])
// biome-ignore format: VADER's list, kept in its order
const BOOSTER_WORDS = [
  'absolutely', 'amazingly', 'awfully', 'completely', 'considerably', 'decidedly', 'deeply', 'effing',
  'enormously', 'entirely', 'especially', 'exceptionally', 'extremely', 'fabulously', 'flipping', 'flippin',
  'fricking', 'frickin', 'frigging', 'friggin', 'fully', 'fucking', 'greatly', 'hella', 'highly', 'hugely',
  'incredibly', 'intensely', 'majorly', 'more', 'most', 'particularly', 'purely', 'quite', 'really',
  'remarkably', 'so', 'substantially', 'thoroughly', 'totally', 'tremendously', 'uber', 'unbelievably',
  'unusually', 'utterly', 'very',
]
// biome-ignore format: VADER's list, kept in its order
const DAMPENER_WORDS = [
  'almost', 'barely', 'hardly', 'just enough', 'kind of', 'kinda', 'kindof', 'kind-of', 'less', 'little',
  'marginally', 'occasionally', 'partly', 'scarcely', 'slightly', 'somewhat', 'sort of', 'sorta', 'sortof',
  'sort-of',
]
const SPECIAL_CASE_IDIOMS: ReadonlyMap<string, number> = new Map([
  ['the shit', 3],
  ['the bomb', 3],
  ['bad ass', 1.5],
  ['yeah right', -2],
  ['cut the mustard', 2],
  ['kiss of death', -1.5],
  ['hand to mouth', -2],
])

const require = createRequire(import.meta.url)

/** VADER's own rules: its lexicon (read from the package, 7,500 entries, a few ms) and boosters. */
export function vaderRules(): VaderRules {
  const lexicon = new Map<string, number>()
  // word, mean valence, standard deviation, the ten raters' scores; a later duplicate wins, as in the package.
  for (const line of readFileSync(require.resolve('vader-sentiment/vader_lexicon.txt'), 'utf8').split('\n')) {
    const [word, valence] = line.split('\t')
    if (word && valence !== undefined) lexicon.set(word, Number(valence))
  }
  const boosters = new Map<string, number>()
  for (const word of BOOSTER_WORDS) boosters.set(word, B_INCR)
  for (const word of DAMPENER_WORDS) boosters.set(word, B_DECR)
  return { lexicon, boosters }
}

/** VADER's compound score, −1..1, rounded to 4 decimals as the package does. */
export function compound(sum: number): number {
  const score = Math.max(-1, Math.min(1, sum / Math.sqrt(sum * sum + NORMALIZATION_ALPHA)))
  return Number.parseFloat(score.toFixed(4))
}

/** The unnormalized sum of the text's valences with its punctuation emphasis: `compound` of it is VADER's. */
export function valenceSum(text: string, rules: VaderRules): number {
  const original = tokenize(text)
  const capDifferential = isCapDifferential(original)
  const words = rules.rewrite ? rules.rewrite(original) : original
  const sentiments: number[] = []
  for (let i = 0; i < words.length; i++) {
    const lower = words[i]!.toLowerCase()
    if ((lower === 'kind' && words[i + 1]?.toLowerCase() === 'of') || rules.boosters.has(lower)) {
      sentiments.push(0)
      continue
    }
    sentiments.push(valenceAt(words, i, rules, capDifferential))
  }
  if (rules.afterBoosters) boostBefore(words, sentiments, rules.afterBoosters)
  if (rules.hypothetical) dropHypothetical(words, sentiments, rules.hypothetical)
  butCheck(words, sentiments)
  let sum = 0
  for (const s of sentiments) sum += s
  if (sum > 0) sum += punctuationEmphasis(text)
  else if (sum < 0) sum -= punctuationEmphasis(text)
  return sum
}

/** Whitespace-separated tokens of 2+ characters, stripped of one leading or trailing VADER punctuation mark. */
export function tokenize(text: string): string[] {
  const tokens: string[] = []
  for (const token of text.split(/\s/)) {
    if (token.length > 1) tokens.push(stripPunctuation(token))
  }
  return tokens
}

function stripPunctuation(token: string): string {
  for (const mark of PUNC_LIST) {
    const word = token.startsWith(mark)
      ? token.slice(mark.length)
      : token.endsWith(mark)
        ? token.slice(0, -mark.length)
        : undefined
    if (word !== undefined && word.length > 1 && !HAS_PUNCTUATION.test(word)) return word
  }
  return token
}

function valenceAt(words: readonly string[], index: number, rules: VaderRules, capDifferential: boolean) {
  const item = words[index]!
  const lower = item.toLowerCase()
  let valence = rules.lexicon.get(lower)
  if (valence === undefined) return 0
  if (rules.negatingNo) {
    if (lower === 'no' && rules.lexicon.has(words[index + 1]?.toLowerCase() ?? '')) valence = 0
    if (precededByNo(words, index)) valence = rules.lexicon.get(lower)! * N_SCALAR
  }
  if (capDifferential && isUpper(item)) valence += valence > 0 ? C_INCR : -C_INCR
  for (let start = 0; start < 3; start++) {
    const before = words[index - (start + 1)]
    if (index > start && before !== undefined && !rules.lexicon.has(before.toLowerCase())) {
      let s = scalar(before, valence, capDifferential, rules.boosters)
      if (start === 1 && s !== 0) s *= 0.95
      else if (start === 2 && s !== 0) s *= 0.9
      valence = neverCheck(valence + s, words, start, index)
      if (start === 2) valence = idiomsCheck(valence, words, index, rules.boosters)
    }
  }
  return leastCheck(valence, words, index, rules.lexicon)
}

/** vaderSentiment 3.3: "no" one or two words before, or three with "or"/"nor" between ("no bugs or errors"). */
function precededByNo(words: readonly string[], i: number): boolean {
  const at = (j: number) => words[j]?.toLowerCase()
  return (
    at(i - 1) === 'no' ||
    at(i - 2) === 'no' ||
    (at(i - 3) === 'no' && (at(i - 1) === 'or' || at(i - 1) === 'nor'))
  )
}

function scalar(word: string, valence: number, capDifferential: boolean, boosters: VaderRules['boosters']) {
  let s = boosters.get(word.toLowerCase()) ?? 0
  if (s === 0) return 0
  if (valence < 0) s *= -1
  if (capDifferential && isUpper(word)) s += valence > 0 ? C_INCR : -C_INCR
  return s
}

function neverCheck(valence: number, words: readonly string[], start: number, index: number): number {
  const w = (offset: number) => words[index - offset]
  if (start === 0 && negated(w(1))) return valence * N_SCALAR
  if (start === 1) {
    if (w(2) === 'never' && (w(1) === 'so' || w(1) === 'this')) return valence * 1.5
    if (negated(w(2))) return valence * N_SCALAR
  }
  if (start === 2) {
    if ((w(3) === 'never' && (w(2) === 'so' || w(2) === 'this')) || w(1) === 'so' || w(1) === 'this') {
      return valence * 1.25
    }
    if (negated(w(3))) return valence * N_SCALAR
  }
  return valence
}

function negated(word: string | undefined): boolean {
  return word !== undefined && (NEGATE.has(word) || word.includes("n't"))
}

function idiomsCheck(valence: number, words: readonly string[], i: number, boosters: VaderRules['boosters']) {
  // The package joins `undefined` words too ("undefined the shit"): harmless, and kept for equal results.
  const w = (j: number) => String(words[j])
  const threeTwo = `${w(i - 3)} ${w(i - 2)}`
  const twoOne = `${w(i - 2)} ${w(i - 1)}`
  for (const sequence of [
    `${w(i - 1)} ${w(i)}`,
    `${twoOne} ${w(i)}`,
    twoOne,
    `${threeTwo} ${w(i - 1)}`,
    threeTwo,
  ]) {
    const idiom = SPECIAL_CASE_IDIOMS.get(sequence)
    if (idiom !== undefined) {
      valence = idiom
      break
    }
  }
  if (words.length - 1 > i) valence = SPECIAL_CASE_IDIOMS.get(`${w(i)} ${w(i + 1)}`) ?? valence
  if (words.length - 1 > i + 1)
    valence = SPECIAL_CASE_IDIOMS.get(`${w(i)} ${w(i + 1)} ${w(i + 2)}`) ?? valence
  if (boosters.has(threeTwo) || boosters.has(twoOne)) valence += B_DECR
  return valence
}

function leastCheck(valence: number, words: readonly string[], i: number, lexicon: VaderRules['lexicon']) {
  if (i > 0 && words[i - 1]!.toLowerCase() === 'least' && !lexicon.has('least')) {
    const twoBefore = words[i - 2]?.toLowerCase()
    if (i === 1 || (twoBefore !== 'at' && twoBefore !== 'very')) return valence * N_SCALAR
  }
  return valence
}

/** "late again": the word adds its intensity to the nearest sentiment word up to 3 tokens before it. */
function boostBefore(
  words: readonly string[],
  sentiments: number[],
  afterBoosters: ReadonlyMap<string, number>,
) {
  for (let i = 1; i < words.length; i++) {
    const boost = afterBoosters.get(words[i]!.toLowerCase())
    if (boost === undefined || sentiments[i] !== 0) continue
    for (let j = i - 1; j >= Math.max(0, i - 3); j--) {
      const s = sentiments[j]!
      if (s === 0) continue
      sentiments[j] = s + (s > 0 ? boost : -boost)
      break
    }
  }
}

/** "what happens if a payment fails?": what the 4 tokens after "if" say did not happen. */
function dropHypothetical(words: readonly string[], sentiments: number[], openers: ReadonlySet<string>) {
  for (let i = 0; i < words.length; i++) {
    if (!openers.has(words[i]!.toLowerCase())) continue
    for (let j = i + 1; j <= i + HYPOTHETICAL_SCOPE && j < sentiments.length; j++) sentiments[j] = 0
  }
}

function butCheck(words: readonly string[], sentiments: number[]): void {
  let but = words.indexOf('but')
  if (but === -1) but = words.indexOf('BUT')
  if (but === -1) return
  for (let i = 0; i < sentiments.length; i++) {
    if (i < but) sentiments[i]! *= 0.5
    else if (i > but) sentiments[i]! *= 1.5
  }
}

function punctuationEmphasis(text: string): number {
  let exclamations = 0
  let questions = 0
  for (const c of text) {
    if (c === '!') exclamations++
    else if (c === '?') questions++
  }
  const questionEmphasis = questions > 3 ? 0.96 : questions > 1 ? questions * 0.18 : 0
  return Math.min(exclamations, 4) * 0.292 + questionEmphasis
}

function isCapDifferential(words: readonly string[]): boolean {
  let caps = 0
  for (const word of words) if (isUpper(word)) caps++
  const differential = words.length - caps
  return differential > 0 && differential < words.length
}

function isUpper(word: string): boolean {
  return /^[^a-z]*[A-Z]+[^a-z]*$/.test(word)
}
