import { unitsOf } from '../signals/cues.ts'
import { clausesOf, REQUEST_ANCHORS } from './requests.ts'
import { dot, type Vector } from './vectors.ts'

/**
 * An answer to the bot's own question is not a request (issue 31 item 4, rules-v6): "Tuesday, 10 if
 * possible" after "which suits you?", a postcode after "what's your postcode?", "yes, go ahead" after
 * "shall I book it?" once made topics, for each passes the request gate read alone. A message answers the
 * bot when the bot's turn just before it in the conversation asks for a detail, a choice or a go-ahead (a
 * slot question), and the message reads more as such an answer than as a request. The conversation's
 * topic comes from its request; the answer still counts for the signals, which read every message.
 *
 * The two halves are decided apart, each once: whether a bot's turn asks for a detail when that turn is
 * analysed (its slot question, the vector of its most slot-like sentence, is stored with its result), and
 * whether an end user's message answers it when that message is analysed, with the slot question of the
 * turn before it read from the same batch or, when the turn came in an earlier capture, from the stored
 * conversation (job-runner.ts). So a conversation captured message by message, in one request, or analysed
 * again gets the same decisions. Both halves are the model's, on anchors in general English (none taken
 * from an evaluation corpus); the margins were chosen on the signal sets' multi-turn traffic and confirmed
 * on CLINC150 and DSTC11 requests put after a slot question (bench/topics-multiturn.ts, bench/requests.ts;
 * bench/FINDINGS.md, "Answers to the bot's questions").
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
 * The units of a bot's turn that may ask: of the units the signals embed for it (signals/cues.ts unitsOf:
 * the whole turn, then its sentences when it has several), its sentences, or the whole turn when it is one
 * sentence; of those, the ones with a question mark when it has any ("Sorry about that! Could you give me
 * your order number?"; a menu after "what can I help you with?" is not asked about), else all ("Please
 * enter your order number."). The same texts as the signals': embedding them costs the model nothing more
 * (the analyzer's embeddings are cached by text).
 */
export function askingUnits(text: string): string[] {
  const units = unitsOf({ role: 'assistant', content: text })
  const sentences = units.length > 1 ? units.slice(1) : units
  const questions = sentences.filter((s) => s.includes('?'))
  return questions.length > 0 ? questions : sentences
}

/**
 * The most slot-like of a turn's units, and how much nearer a slot question than an open or informing
 * turn it lies; undefined for a turn without a unit.
 */
export function slotQuestion(
  units: readonly Vector[],
  anchors: ReplyAnchors,
): { margin: number; question: Vector } | undefined {
  let best: { margin: number; question: Vector } | undefined
  for (const s of units) {
    const margin = nearest(s, anchors.slot) - nearest(s, anchors.open)
    if (!best || margin > best.margin) best = { margin, question: s }
  }
  return best
}

/** The slot question a turn asks (its most slot-like unit), when it asks one: SLOT_MARGIN. */
export function askedSlot(units: readonly Vector[], anchors: ReplyAnchors): Vector | undefined {
  const found = slotQuestion(units, anchors)
  return found && found.margin >= SLOT_MARGIN ? found.question : undefined
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
 * Which of the texts answer the slot question asked just before them (`asked[i]`, absent when the message
 * follows no slot question): the message, whole and each of its clauses, reads as its answer
 * (REPLY_MARGIN): "830. can the same mechanic do it?" asks in a clause. Only the clauses of the messages
 * that read as answers whole are embedded: they are few.
 */
export async function answersToSlotQuestions(
  texts: readonly string[],
  embeddings: readonly Vector[],
  asked: readonly (Vector | undefined)[],
  anchors: ReplyAnchors,
  embed: (texts: readonly string[]) => Promise<Vector[]>,
): Promise<boolean[]> {
  const candidate = texts.map((_, i) => {
    const q = asked[i]
    return q !== undefined && replyMargin(embeddings[i]!, q, anchors) >= REPLY_MARGIN
  })
  const clauses = texts.map((t, i) => (candidate[i] ? clausesOf(t) : []))
  const clauseVectors = await embed(clauses.flatMap((c) => (c.length > 1 ? c : [])))
  let at = 0
  return candidate.map((c, i) => {
    if (!c) return false
    if (clauses[i]!.length < 2) return true
    return clauses[i]!.map(() => clauseVectors[at++]!).every(
      (v) => replyMargin(v, asked[i]!, anchors) >= REPLY_MARGIN,
    )
  })
}

function nearest(v: Vector, anchors: readonly Vector[]): number {
  let best = -Infinity
  for (const a of anchors) best = Math.max(best, dot(v, a))
  return best
}
