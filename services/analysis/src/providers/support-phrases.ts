/**
 * The phrases of support complaints, merged into one token each before VADER scores a message, so each is
 * one lexicon entry (support-lexicon.ts) that VADER's rules treat as a word: a booster before it intensifies
 * it ("still not working"), capitals emphasize it, "but" weighs it. A merged token is spelled by its key
 * (`not_working`), in capitals when all its words were.
 */

/** Negations that, before what a product or service should do, report that it doesn't. */
// biome-ignore format: a word list
const NEGATORS: ReadonlySet<string> = new Set([
  'not', 'never', 'cannot', "can't", 'cant', "won't", 'wont', "doesn't", 'doesnt', "don't", 'dont', "didn't",
  'didnt', "isn't", 'isnt', "aren't", 'arent', "wasn't", 'wasnt', "weren't", 'werent', "hasn't", 'hasnt',
  "haven't", 'havent', "hadn't", 'hadnt', "couldn't", 'couldnt', "wouldn't", 'wouldnt',
])
/** Words that may stand between the negation and the verb: "can't even log in", "won't let me", "can't seem to". */
// biome-ignore format: a word list
const FILLERS: ReadonlySet<string> = new Set([
  'i', 'we', 'it', 'you', 'they', 'this', 'that', 'even', 'really', 'always', 'properly', 'seem', 'seems',
  'able', 'to', 'be', 'yet', 'been',
])
const MAX_FILLERS = 3
/** What a product or a service is expected to do or be, in all their forms. */
const FUNCTION_VERBS: ReadonlySet<string> = new Set([
  ...regular('work', 'load', 'open', 'start', 'connect', 'sync', 'respond', 'show', 'appear', 'update'),
  ...regular('deliver', 'print', 'play', 'download', 'upload', 'install', 'charge', 'accept', 'recognize'),
  ...regular('recognise', 'exist', 'help', 'fix', 'answer', 'call', 'access', 'transfer', 'withdraw', 'add'),
  ...regular('change', 'reset', 'verify', 'order', 'boot', 'refresh', 'process', 'register', 'activate'),
  ...regular('function', 'finish', 'complete', 'submit', 'arrive', 'receive', 'save', 'use', 'login'),
  ...['ship', 'ships', 'shipped', 'shipping', 'reply', 'replies', 'replied', 'replying', 'hear', 'heard'],
  ...['send', 'sends', 'sending', 'sent', 'get', 'gets', 'getting', 'got', 'gotten', 'come', 'comes'],
  ...['coming', 'came', 'pay', 'pays', 'paying', 'paid', 'run', 'runs', 'running', 'ran', 'let', 'lets'],
  ...['letting', 'go', 'goes', 'going', 'went', 'gone', ...regular('return')],
  ...['usable', 'available', 'accessible', 'valid', 'visible'],
])
/** Verbs of two words; the second word must follow ("log in", "go through", "show up", "turn on"). */
const PARTICLES: ReadonlyMap<string, string> = new Map([
  ...particle('in', 'log', 'logs', 'logging', 'logged', 'sign', 'signs', 'signing', 'signed'),
  ...particle('through', 'go', 'goes', 'going', 'went', 'gone', 'come', 'came'),
  ...particle('up', 'show', 'shows', 'showing', 'showed', 'shown'),
  ...particle('on', 'turn', 'turns', 'turning', 'turned'),
])
// biome-ignore format: a word list
const OUT_VERBS: ReadonlySet<string> = new Set([
  'logged', 'logging', 'logs', 'kicked', 'kicking', 'kicks', 'locked', 'locking', 'locks',
])
const CHARGED: ReadonlySet<string> = new Set(['charged', 'charging', 'billed', 'billing', 'debited'])
// biome-ignore format: a word list
const CHARGES: ReadonlySet<string> = new Set([
  'charged', 'charge', 'charges', 'charging', 'billed', 'billing', 'payment', 'payments', 'debit', 'transaction',
])
const TOOK: ReadonlySet<string> = new Set(['been', 'took', 'takes', 'taking'])
// biome-ignore format: a word list
const ABOUT: ReadonlySet<string> = new Set(['over', 'almost', 'nearly', 'about', 'like', 'literally', 'more', 'than'])
// biome-ignore format: a word list
const AMOUNTS: ReadonlySet<string> = new Set([
  'an', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'several', 'many',
])
// biome-ignore format: a word list
const TIME_UNITS: ReadonlySet<string> = new Set([
  'minute', 'minutes', 'mins', 'hour', 'hours', 'hrs', 'day', 'days', 'week', 'weeks', 'month', 'months',
])
const JOKE_OPENERS: ReadonlySet<string> = new Set(['is', 'what', 'such', 'total', 'complete', 'absolute'])
const DO: ReadonlySet<string> = new Set(['do', 'does', 'did', 'doing'])
const GREETING_TIMES: ReadonlySet<string> = new Set(['morning', 'afternoon', 'evening', 'day'])

interface Match {
  readonly key: string
  /** Index after the phrase's last token. */
  readonly end: number
}

/** `tokens` with each support phrase merged into one token (and curly apostrophes made straight). */
export function mergePhrases(tokens: string[]): string[] {
  const words = tokens.map((token) => token.replace(/[\u2018\u2019]/g, "'"))
  const lower = words.map((word) => word.toLowerCase())
  const merged: string[] = []
  for (let i = 0; i < words.length; ) {
    const match = phraseAt(lower, i)
    if (!match) {
      merged.push(words[i]!)
      i++
      continue
    }
    const shouted = words.slice(i, match.end).every((word) => /^[^a-z]*[A-Z]+[^a-z]*$/.test(word))
    merged.push(shouted ? match.key.toUpperCase() : match.key)
    i = match.end
  }
  return merged
}

/** What a customer was not given: "without (any, prior, my) warning, notice, permission…", "without asking". */
const NOTICE_WORDS: ReadonlySet<string> = new Set([
  'warning',
  'notice',
  'notification',
  'permission',
  'consent',
  'explanation',
  'asking',
  'telling',
  'informing',
  'notifying',
  'agreement',
  'authorization',
  'authorisation',
])
const NOTICE_FILLERS: ReadonlySet<string> = new Set([
  'any',
  'prior',
  'advance',
  'my',
  'our',
  'proper',
  'a',
  'even',
])

function withoutNotice(w: readonly string[], at: number): Match | undefined {
  let k = at
  while (k < at + 2 && NOTICE_FILLERS.has(w[k] ?? '')) k++
  return NOTICE_WORDS.has(w[k] ?? '') ? { key: 'without_notice', end: k + 1 } : undefined
}

function phraseAt(w: readonly string[], i: number): Match | undefined {
  const word = w[i]!
  const next = w[i + 1]
  if (NEGATORS.has(word) || (word === 'no' && next === 'longer'))
    return notWorking(w, word === 'no' ? i + 2 : i + 1)
  if (OUT_VERBS.has(word)) {
    if (next === 'out') return { key: 'logged_out', end: i + 2 }
    if (next === 'me' && w[i + 2] === 'out') return { key: 'logged_out', end: i + 3 }
  }
  if ((word === 'timed' || word === 'times' || word === 'timing') && next === 'out') {
    return { key: 'timed_out', end: i + 2 }
  }
  if (word === 'without') return withoutNotice(w, i + 1)
  if (word === 'on' && next === 'hold') return { key: 'on_hold', end: i + 2 }
  if (CHARGED.has(word)) {
    const at = next === 'me' || next === 'us' ? i + 2 : i + 1
    if (w[at] === 'twice' || w[at] === 'double') return { key: 'charged_twice', end: at + 1 }
  }
  if ((word === 'double' || word === 'duplicate') && next !== undefined && CHARGES.has(next)) {
    return { key: 'charged_twice', end: i + 2 }
  }
  if (word === 'still' && next === 'nothing') return { key: 'still_nothing', end: i + 2 }
  if (word === 'supposed' && next === 'to') return { key: 'supposed_to', end: i + 2 }
  if (TOOK.has(word)) return longWait(w, i + 1)
  // VADER drops one-letter tokens: "is a joke" reaches here as "is joke".
  if (next === 'joke' && JOKE_OPENERS.has(word)) return { key: 'a_joke', end: i + 2 }
  if (DO.has(word) && next === 'nothing') return { key: 'not_working', end: i + 2 }
  if ((word === 'greyed' || word === 'grayed') && next === 'out') return { key: 'greyed_out', end: i + 2 }
  if (word === 'in' && next === 'circles') return { key: 'in_circles', end: i + 2 }
  if (word === 'how' && next === 'many' && w[i + 2] === 'times') return { key: 'how_many_times', end: i + 3 }
  if (word === 'good' && next !== undefined && GREETING_TIMES.has(next))
    return { key: 'greeting', end: i + 2 }
  if (word === 'hope' && (next === "you're" || next === 'you' || next === 'all')) return wellWishes(w, i + 1)
  if ((word === 'would' || word.endsWith("'d")) && next === 'like') return { key: 'request', end: i + 2 }
  return undefined
}

/** After a negation: up to 3 fillers, then a function verb ("doesn't work", "can't even log in"). */
function notWorking(w: readonly string[], start: number): Match | undefined {
  for (let at = start; at <= start + MAX_FILLERS && at < w.length; at++) {
    const word = w[at]!
    const particle = PARTICLES.get(word)
    if (particle !== undefined && w[at + 1] === particle) return { key: 'not_working', end: at + 2 }
    if (FUNCTION_VERBS.has(word)) return { key: 'not_working', end: at + 1 }
    if (!FILLERS.has(word)) return undefined
  }
  return undefined
}

/** "been 10 days", "took over a month", "taking 45 minutes" (VADER has dropped a lone "a" or "3"). */
function longWait(w: readonly string[], start: number): Match | undefined {
  let at = start
  while (at < start + 2 && ABOUT.has(w[at] ?? '')) at++
  const amount = w[at] ?? ''
  if (AMOUNTS.has(amount) || /^\d+$/.test(amount)) at++
  return TIME_UNITS.has(w[at] ?? '') ? { key: 'long_wait', end: at + 1 } : undefined
}

/** "hope you're well", "hope you are doing well", "hope all is well": a greeting, not a sentiment. */
function wellWishes(w: readonly string[], start: number): Match | undefined {
  for (let at = start; at < start + 4 && at < w.length; at++) {
    if (w[at] === 'well' || w[at] === 'good') return { key: 'greeting', end: at + 1 }
  }
  return undefined
}

function regular(...verbs: string[]): string[] {
  return verbs.flatMap((verb) => {
    const stem = verb.endsWith('e') ? verb.slice(0, -1) : verb
    return [verb, `${verb}s`, `${stem}ed`, `${stem}ing`]
  })
}

function particle(second: string, ...verbs: string[]): [string, string][] {
  return verbs.map((verb) => [verb, second])
}
