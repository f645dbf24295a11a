/**
 * signals-v45: what a message is about, as the content words it uses: every word that is not a function word
 * of English (an article, pronoun, preposition, conjunction, auxiliary, question word, quantifier, a light
 * verb or a discourse adverb), lower-cased, a plural's "s" taken off, each kept as a fingerprint (saidOf's), so
 * that two requests can be compared by the words they do not share without keeping their text (detect.ts,
 * repetition). A closed class of the language, not words of a domain or of a data set.
 */

/** English's closed classes, and the light verbs and discourse adverbs that carry no subject of their own. */
const FUNCTION_WORDS = new Set(
  `a an the this that these those it its it's i i'm i've i'd i'll me my mine myself you you're your yours
  yourself we we're our ours us he him his she her hers they them their theirs one ones what what's whats which
  who whom whose when where why how there here whether if or and but nor so because as than then though
  although while to of in on at by for from with without into onto about above below over under after before
  between through during until till up down out off again also too just only even still already very really
  quite rather much many more most less least some any all both each every either neither no not yes yeah
  ok okay please thanks thank hi hello hey well oh right sure now soon later ever never always
  am is are was were be been being do does did doing done have has had having can could will would shall
  should may might must need get gets got getting go goes going went gone make made let lets else own other another
  same such something anything nothing anyone someone everyone thing things way like`.split(/\s+/u),
)

/** A fingerprint of each distinct content word of the text (at most its first maxChars characters). */
export function termsOf(text: string, maxChars: number): string[] {
  const words =
    text
      .slice(0, maxChars)
      .toLowerCase()
      .replace(/[‘’ʼ]/gu, "'")
      .match(/[\p{L}\p{N}']+/gu) ?? []
  const out = new Set<string>()
  for (const raw of words) {
    const word = raw.replace(/^'+|'+$/gu, '').replace(/'s$/u, '')
    if (word.length === 0 || FUNCTION_WORDS.has(word)) continue
    out.add(fingerprintOf(stemOf(word)))
  }
  return [...out]
}

/** A plural made singular, roughly: "batteries" → "battery", "dogs" → "dog"; "glass", "bus" left. */
function stemOf(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.length > 3 && word.endsWith('s') && !/(?:ss|us|is)$/u.test(word)) return word.slice(0, -1)
  return word
}

/** FNV-1a, 8 hex digits: the same word gives the same fingerprint. */
export function fingerprintOf(text: string): string {
  let h = 0x811c9dc5
  for (const ch of text) {
    h ^= ch.codePointAt(0)!
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, '0')
}

/**
 * signals-v73: the words of a message by their case, each lower-cased and kept as a fingerprint: `capitals`, the
 * words written wholly in capitals ("TWICE", "CHANGE", "NO"), and `cased`, the words written otherwise ("twice",
 * "Leeds"). A word has two letters or more; a token with a digit is a code, not a word ("RIDE10", "PT-4471",
 * "IF-2291-KQ"). "OK" is that word's ordinary spelling, so its capitals say nothing: it is read as cased. A word
 * in capitals that the conversation wrote before in ordinary case is no acronym or name but the same word said
 * louder (detect.ts, frustration).
 */
export function casingOf(text: string, maxChars: number): { capitals: string[]; cased: string[] } {
  const capitals = new Set<string>()
  const cased = new Set<string>()
  for (const token of text.slice(0, maxChars).match(/[\p{L}\p{N}'‘’ʼ-]+/gu) ?? []) {
    if (/\p{N}/u.test(token)) continue
    for (const part of token.split('-')) {
      const word = part.replace(/[‘’ʼ]/gu, "'").replace(/^'+|'+$/gu, '')
      if ((word.match(/\p{L}/gu) ?? []).length < 2) continue
      const lower = word.toLowerCase()
      const inCapitals = word === word.toUpperCase() && word !== lower && lower !== 'ok'
      ;(inCapitals ? capitals : cased).add(fingerprintOf(lower))
    }
  }
  return { capitals: [...capitals], cased: [...cased] }
}
