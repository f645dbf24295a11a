import { addInto, dot, normalized, type Vector } from './vectors.ts'

/**
 * Whether an end user's message asks for something: only requests make topics (issue 31). Greetings,
 * thanks, acknowledgements, farewells, yes/no answers and pleasantries say nothing a topic could be
 * about, however often they recur ("thanks, that solved it!" and "ok I'll wait" once made topics).
 *
 * Decided with the language model, not a word list: a message's embedding is compared with two small
 * sets of anchor phrases, social acts and requests, written here as general English (none is taken from
 * an evaluation corpus). Its social margin is its similarity to the nearest social anchor minus that to
 * the nearest request anchor. It is social when that margin reaches SOCIAL_MARGIN, and a request
 * otherwise: a message unlike both (a complaint, praise of the product, a question on anything) counts,
 * so the doubt goes to keeping a topic. A message is scored whole and, when that is social and it has
 * several clauses, clause by clause: "hi, my card was declined" and "thanks! one more thing: how do I
 * export?" are requests by a clause, and are placed by those clauses. The margin was chosen on CLINC150's validation split and confirmed
 * on its test split, DSTC11 and GoEmotions (bench/requests.ts, bench/FINDINGS.md).
 */

/** Social acts: what a conversation is made of around its requests. */
export const SOCIAL_ANCHORS: readonly string[] = [
  // greetings and pleasantries
  'hi',
  'hello',
  'hey there',
  'good morning',
  'hello, how are you?',
  'hi, how is it going?',
  "I'm fine, and you?",
  'nice to meet you',
  // thanks
  'thanks',
  'thank you',
  'thank you so much for your help',
  'thanks, that was helpful',
  'much appreciated',
  'great, thanks a lot',
  // acknowledgements
  'ok',
  'okay cool',
  'got it',
  'alright, I see',
  'sounds good',
  'that makes sense',
  'perfect, that worked',
  'okay, I will try that',
  'sure, I can wait',
  'no problem',
  // farewells
  'bye',
  'goodbye',
  'see you later',
  'have a nice day',
  "that's all for now",
  // confirmations and answers
  'yes',
  'yes please',
  "yeah, that's right",
  'no',
  'no thanks',
  "nope, that's not it",
  'maybe',
  "I'm not sure",
  'that is true',
  "I don't know",
  // praise of the conversation itself
  'I appreciate it',
  'you are awesome',
]

/**
 * Closings: thanks with a reason, "it works now", "all sorted", "good to know". An end user ends most
 * multi-turn conversations so, and SOCIAL_ANCHORS alone let many pass as requests, which clustered into
 * a topic labelled "work, thank, thanks" (bench/FINDINGS.md, "Thanks made a topic"). Written in general
 * English like the others. For topics only: the signals' cues (signals/cues.ts) keep SOCIAL_ANCHORS,
 * on which their margins were chosen.
 */
export const CLOSING_ANCHORS: readonly string[] = [
  // thanks with a reason
  'cheers',
  'perfect, thank you',
  'thanks for sorting that out',
  "thank you, that's a relief",
  'wonderful, thank you for your help',
  'oh nice, that was really helpful',
  "yes, that's fine, thank you",
  'I can see it now, thanks',
  // the problem is solved
  'that fixed it, it works now',
  'that did the trick',
  'it works again',
  'all sorted now',
  'ok, done that',
  'found it',
  "that's a relief",
  // understood, and nothing more to ask
  "great, that's exactly what I needed",
  "ah ok, it's clear now",
  'good to know',
  'great, will do',
]

/** What the topic gate compares with the request anchors: social acts and closings. */
export const TOPIC_SOCIAL_ANCHORS: readonly string[] = [...SOCIAL_ANCHORS, ...CLOSING_ANCHORS]

/** Requests: asking how, for, why, or saying what is wrong, about nothing in particular. */
export const REQUEST_ANCHORS: readonly string[] = [
  'I need help with my account',
  'how do I change my settings?',
  'how can I do that?',
  'I want to cancel my order',
  'I would like to change my plan',
  'can you check the status of my request?',
  'could you send me a copy of the document?',
  'please update my address',
  'my payment is not working',
  'the app keeps crashing',
  'I have a problem with my device',
  "I can't log in",
  'where can I find my bill?',
  'why was I charged twice?',
  'what is the price of this?',
  'when will it arrive?',
  'is it possible to get a refund?',
  'what are your opening hours?',
  'tell me how this works',
  'I am looking for information about the service',
  'what should I do about this error?',
  'I lost my card',
  'set a reminder for tomorrow',
  'how much does it cost to ship abroad?',
]

/** Chosen on CLINC150's validation split: bench/FINDINGS.md, "Only requests make topics". */
export const SOCIAL_MARGIN = 0.2

export interface RequestAnchors {
  readonly social: readonly Vector[]
  readonly request: readonly Vector[]
}

/** Similarity to the nearest social anchor minus similarity to the nearest request anchor (unit vectors). */
export function socialMargin(embedding: Vector, anchors: RequestAnchors): number {
  return nearest(embedding, anchors.social) - nearest(embedding, anchors.request)
}

function nearest(v: Vector, anchors: readonly Vector[]): number {
  let best = -Infinity
  for (const a of anchors) best = Math.max(best, dot(v, a))
  return best
}

/** A message is social when it and each of its clauses are: a request as soon as one is not. */
export function isSocial(margins: readonly number[], margin = SOCIAL_MARGIN): boolean {
  return margins.length > 0 && margins.every((m) => m >= margin)
}

/** Clauses longer than this many characters are not split further: a long message is rarely social. */
const SPLIT_MAX_CHARS = 300

/**
 * A message's clauses: its sentences, and their parts split at commas, colons and dashes, each with a
 * letter. One clause (or none) for a message that does not split, or is too long to be worth splitting.
 */
export function clausesOf(text: string): string[] {
  if (text.length > SPLIT_MAX_CHARS) return [text]
  return text
    .split(/[.!?;:,\n\u2026]+|\s[-\u2013\u2014]+\s/u)
    .map((c) => c.trim())
    .filter((c) => /\p{L}/u.test(c))
}

/**
 * What to place of each text, given its embedding: the embedding itself when the whole is a request;
 * when the whole reads as social but a clause is a request ("hi, my card was declined"), the mean of its
 * request clauses' embeddings, so that the greeting does not pull the message away from its topic;
 * undefined for a social message. Clauses are embedded (with `embed`, the analyzer's cached model call)
 * only for the texts judged social as a whole that have several: those are few, so they cost little.
 */
export async function requestEmbeddings(
  texts: readonly string[],
  embeddings: readonly Vector[],
  anchors: RequestAnchors,
  embed: (texts: readonly string[]) => Promise<Vector[]>,
): Promise<(Vector | undefined)[]> {
  const margins = embeddings.map((e) => socialMargin(e, anchors))
  const split = texts.map((t, i) => (isSocial([margins[i]!]) ? clausesOf(t) : []))
  const clauseVectors = await embed(split.flatMap((c) => (c.length > 1 ? c : [])))
  let at = 0
  return margins.map((whole, i) => {
    if (!isSocial([whole])) return embeddings[i]!
    if (split[i]!.length < 2) return undefined
    const clauses = split[i]!.map(() => clauseVectors[at++]!)
    const asking = clauses.filter((v) => !isSocial([socialMargin(v, anchors)]))
    if (asking.length === 0) return undefined
    const sum = new Float32Array(asking[0]!.length)
    for (const v of asking) addInto(sum, v)
    return normalized(sum)
  })
}

/**
 * An answer to the bot's own question is not a request (issue 31, rules-v5): "Tuesday, 10 if possible"
 * after "which suits you?", a postcode after "what's your postcode?", "yes, go ahead" after "shall I book
 * it?" once made topics, for each passes the gate read alone. A message answers the bot when the bot's
 * turn just before it asks for a detail, a choice or a go-ahead (a slot question), and the message reads
 * more as such an answer than as a request. The conversation's topic comes from its request; the answer
 * still counts for the signals, which read every message. Both decisions are the model's, on anchors in
 * general English (none taken from an evaluation corpus); the margins were chosen on the signal sets'
 * multi-turn traffic and confirmed on CLINC150 and DSTC11 requests put after a slot question
 * (bench/topics-multiturn.ts, bench/requests.ts; bench/FINDINGS.md, "Answers to the bot's questions").
 */

/** The bot asks for a detail, a choice or a go-ahead: its answer says which, not what is wanted. */
export const SLOT_QUESTION_ANCHORS: readonly string[] = [
  'what is your order number?',
  'could you give me your booking reference?',
  'what is your postcode?',
  'please enter your account number',
  'when would suit you?',
  'which day works best for you?',
  'what time would you like?',
  'which would you prefer?',
  'which one do you mean?',
  'which model do you have?',
  'how many people is it for?',
  'could you confirm your email address?',
  'what name is the booking under?',
  'could you send a photo of it?',
  'shall I book that for you?',
  'would you like me to go ahead?',
]

/**
 * Bot turns that ask for no detail: an open invitation, whose answer is the request ("how can I help you
 * today?", "anything else?", "could you rephrase that?"), and turns that inform and ask nothing.
 */
export const OPEN_TURN_ANCHORS: readonly string[] = [
  // invitations to say what is wanted, or to say it again
  'how can I help you today?',
  'what can I do for you?',
  'hello! what brings you here today?',
  'how may I assist you?',
  'what would you like help with?',
  'please choose one of the options below',
  'is there anything else I can help you with?',
  'can I help with anything else?',
  'anything else?',
  "sorry, I didn't understand. Could you rephrase that?",
  'could you say that another way?',
  'tell me what you need',
  // answers, news and apologies
  'your order has been shipped',
  'our opening hours are 9am to 5pm, Monday to Friday',
  "I've booked that for you",
  "sorry, I can't do that here",
  "I couldn't find an order with that number",
  'you can change this in your account settings',
  'a refund takes 3 to 5 working days',
  'the price is 20 pounds',
  "you'll receive a confirmation email shortly",
  'I am sorry to hear that',
]

/** An end user's answer to a slot question: a detail, a choice, a yes. */
export const ANSWER_ANCHORS: readonly string[] = [
  'it is 12345',
  'my order number is AB-1234',
  'Tuesday at 10am',
  'next friday',
  'the blue one',
  'the second option',
  'yes, go ahead',
  'yes please, book it',
  'two people',
  'my email is name@example.com',
  'the one I bought last week',
  'John Smith',
]

/**
 * What an answer is told from besides REQUEST_ANCHORS (support requests): requests of every other kind,
 * for information, facts, words, or for something to be done, so that "how do you say fast in Spanish?"
 * after a slot question is not taken for an answer. Written in general English; which kinds were
 * missing was seen on CLINC150's validation split (bench/FINDINGS.md, "Answers to the bot's questions").
 */
export const OTHER_REQUEST_ANCHORS: readonly string[] = [
  'what does this word mean?',
  'how do you say thank you in Spanish?',
  'what is the weather like tomorrow?',
  'what is the capital of France?',
  'how many calories are in an apple?',
  'tell me a joke',
  'play some music',
  'remind me to call my mother',
  'find me a flight to Paris',
  'book a table for two tonight',
  'I want to know my account balance',
  'can you explain how this works?',
]

/** What an answer to a slot question is told from: requests of every kind. */
export const REPLY_REQUEST_ANCHORS: readonly string[] = [...REQUEST_ANCHORS, ...OTHER_REQUEST_ANCHORS]

/** A bot's turn asks for a detail when one of its questions lies this much nearer a slot question. */
export const SLOT_MARGIN = 0.15
/** A message after such a turn answers it when it lies this much nearer an answer than a request. */
export const REPLY_MARGIN = 0

export interface ReplyAnchors {
  readonly slot: readonly Vector[]
  readonly open: readonly Vector[]
  readonly answer: readonly Vector[]
  readonly request: readonly Vector[]
}

/**
 * The sentences of a bot's turn that may ask: those ending in a question mark when it has any ("Sorry
 * about that! Could you give me your order number?"; a menu after "what can I help you with?" is not
 * asked about), else all of them ("Please enter your order number.").
 */
export function askingSentences(text: string): string[] {
  const sentences = text
    .split(/(?<=[.!?])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => /\p{L}/u.test(s))
  const questions = sentences.filter((s) => s.includes('?'))
  return questions.length > 0 ? questions : sentences
}

/**
 * The most slot-like of a turn's sentences, and how much nearer a slot question than an open or
 * informing turn it lies; undefined for a turn without a sentence.
 */
export function slotQuestion(
  sentences: readonly Vector[],
  anchors: ReplyAnchors,
): { margin: number; question: Vector } | undefined {
  let best: { margin: number; question: Vector } | undefined
  for (const s of sentences) {
    const margin = nearest(s, anchors.slot) - nearest(s, anchors.open)
    if (!best || margin > best.margin) best = { margin, question: s }
  }
  return best
}

/**
 * How much more a message reads as an answer to `question` than as a request: the mean of its
 * similarity to the nearest answer anchor and to the question itself ("friday please" is like "which
 * day would suit you?"; "how do you say fast in Spanish?" is not), minus its similarity to the nearest
 * request anchor.
 */
export function replyMargin(embedding: Vector, question: Vector, anchors: ReplyAnchors): number {
  return (
    (nearest(embedding, anchors.answer) + dot(embedding, question)) / 2 - nearest(embedding, anchors.request)
  )
}

/**
 * Which of the texts answer the bot's turn before them (`asked[i]`, absent when the message does not
 * follow a bot's turn): the turn asks for a detail (SLOT_MARGIN) and the message, whole and each of its
 * clauses, reads as its answer (REPLY_MARGIN): "830. can the same mechanic do it?" asks in a clause.
 */
export async function answersToSlotQuestions(
  texts: readonly string[],
  embeddings: readonly Vector[],
  asked: readonly (string | undefined)[],
  anchors: ReplyAnchors,
  embed: (texts: readonly string[]) => Promise<Vector[]>,
): Promise<boolean[]> {
  const sentences = asked.map((a) => (a === undefined ? [] : askingSentences(a)))
  const sentenceVectors = await embed(sentences.flat())
  let at = 0
  const questions = sentences.map((s) => {
    const found = slotQuestion(
      s.map(() => sentenceVectors[at++]!),
      anchors,
    )
    return found && found.margin >= SLOT_MARGIN ? found.question : undefined
  })
  const candidate = texts.map((_, i) => {
    const q = questions[i]
    return q !== undefined && replyMargin(embeddings[i]!, q, anchors) >= REPLY_MARGIN
  })
  const clauses = texts.map((t, i) => (candidate[i] ? clausesOf(t) : []))
  const clauseVectors = await embed(clauses.flatMap((c) => (c.length > 1 ? c : [])))
  at = 0
  return candidate.map((c, i) => {
    if (!c) return false
    if (clauses[i]!.length < 2) return true
    return clauses[i]!.map(() => clauseVectors[at++]!).every(
      (v) => replyMargin(v, questions[i]!, anchors) >= REPLY_MARGIN,
    )
  })
}
