import { isSocialFormula } from './social-formulas.ts'
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

/**
 * The thanks among the social acts (SOCIAL_ANCHORS keeps them in its list): a unit whose nearest social anchor
 * is one of these, at a social margin of SOCIAL_MARGIN or more, thanks (signals-v52, cues.ts thanksFirst).
 */
export const THANKS_ANCHORS: readonly string[] = [
  'thanks',
  'thank you',
  'thank you so much for your help',
  'thanks, that was helpful',
  'much appreciated',
  'great, thanks a lot',
]

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
  ...THANKS_ANCHORS,
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

/**
 * Give-ups and dismissals: closings that are not thanks. The end user drops the request, says it no longer
 * matters, or takes it to another channel, often at the end of a failed conversation. Without them such a
 * message read as unlike both sides, so a request, and made a topic after the conversation's first ("forget
 * it" was a topic's Needs attention example in trial5: bench/FINDINGS.md, "give-ups made a topic"). Written
 * from that definition in general English; none is a message of a data set.
 */
export const GIVE_UP_ANCHORS: readonly string[] = [
  "don't worry about it",
  "it doesn't matter anymore",
  "I'll sort it out myself",
  "not worth it, I'm done",
]

/** What the topic gate compares with the request anchors: social acts, closings and give-ups. */
export const TOPIC_SOCIAL_ANCHORS: readonly string[] = [
  ...SOCIAL_ANCHORS,
  ...CLOSING_ANCHORS,
  ...GIVE_UP_ANCHORS,
]

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

/**
 * A request after the conversation's first makes a topic below this margin (requestsMakingTopics). Chosen on the
 * signal sets' multi-turn traffic, confirmed on CLINC150 and DSTC11 requests asked second and GoEmotions'
 * thanks after a request (bench/FINDINGS.md, "Follow-ups and closings make no topic").
 */
export const FOLLOW_UP_MARGIN = 0.05

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

/** Texts longer than this many characters are split by sentence first, and a sentence longer is not split. */
const SPLIT_MAX_CHARS = 300

/**
 * A message's clauses: its sentences, and their parts split at commas, colons and dashes, each with a
 * letter. One clause (or none) for a message that does not split. A message longer than SPLIT_MAX_CHARS is
 * read sentence by sentence, each sentence as a message (topics20: it was one clause, so its own plans,
 * read by sentence in own-plans.ts, never matched one of its clauses); a sentence that long is one clause.
 */
export function clausesOf(text: string): string[] {
  if (text.length <= SPLIT_MAX_CHARS) return partsOf(text)
  return everySentenceOf(text).flatMap((s) => (s.length > SPLIT_MAX_CHARS ? [s.trim()] : partsOf(s)))
}

/**
 * Every sentence of a text, however many and however long (one for a text of one sentence): split after a
 * full stop, a question or exclamation mark, or an ellipsis, and at line breaks. Not the signals'
 * sentencesOf (signals/cues.ts), which reads at most a few of a long text's and none of a single sentence.
 */
export function everySentenceOf(text: string): string[] {
  return text.split(/(?<=[.!?\u2026])\s+|\n+/u).filter((s) => /\p{L}/u.test(s))
}

function partsOf(text: string): string[] {
  return text
    .split(/[.!?;:,\n\u2026]+|\s[-\u2013\u2014]+\s/u)
    .map((c) => c.trim())
    .filter((c) => /\p{L}/u.test(c))
}

/**
 * Whether a text is only data: every one of its words holds a digit ("CB-7781", "LS6 2QT", "201K",
 * "PX44019283GB", "12/03 14:30"). An order number, a postcode, a model or an amount names nothing a topic
 * could be about; it is an answer to what the bot asked, given at once or after a question the answers
 * rule did not read as one (rules-v8). Decided by the words' shape, no word list: a text with one word
 * without a digit ("fridge freezer FF550X", "status of WR-4410?") is left to the model. A text without a
 * letter ("12345") the analyzer does not read as a request at all; this takes the same view of codes.
 */
export function isDatum(text: string): boolean {
  const words = text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w))
  return words.length > 0 && words.every((w) => /\p{N}/u.test(w))
}

/** A request to place: what to place of it, and how clearly it asks. */
export interface PlacedRequest {
  readonly embedding: Vector
  /**
   * How clearly it asks (requestsMakingTopics): the social margin of the whole message, or for one social
   * as a whole but asking in a clause ("thanks! and how do I export?") the least of its asking clauses',
   * taken against requests of every kind (the support requests and `otherRequest`: "tell me a joke" asks as clearly as "I lost my
   * card"), not the support requests alone.
   */
  readonly margin: number
  /** Placed by its asking clauses, the whole being social ("hi, my card was declined"). */
  readonly byClauses?: true
}

/**
 * What to place of each text, given its embedding: the embedding itself when the whole is a request;
 * when the whole reads as social but a clause is a request ("hi, my card was declined"), the mean of its
 * request clauses' embeddings, so that the greeting does not pull the message away from its topic;
 * undefined for a social message and for data (isDatum: "CB-7781", or "thanks, CB-7781" by its clauses).
 * Clauses are embedded (with `embed`, the analyzer's cached model call) only for the texts judged social as
 * a whole that have several: those are few, so they cost little.
 */
export async function requestEmbeddings(
  texts: readonly string[],
  embeddings: readonly Vector[],
  anchors: GateAnchors,
  embed: (texts: readonly string[]) => Promise<Vector[]>,
  similarities: readonly Float64Array[] = embeddings.map((e) => gateSimilarities(e, anchors)),
  ownPlans: OwnPlans = NO_OWN_PLANS,
  socialFormula: SocialFormula = isSocialFormula,
): Promise<(PlacedRequest | undefined)[]> {
  const wholes = similarities.map((s) => sidesFrom(s, anchors))
  // Another language's thanks or greeting, and nothing else ("muchas gracias, eso es todo", "alles klar, danke"):
  // the model reads it as unlike its English social anchors, so as a request; the grammar says it is social
  // (social-formulas.ts). Read over the whole text: an acknowledgement beside the thanks is a clause of its own.
  const formulae = texts.map((t) => socialFormula(t))
  const split = texts.map((t, i) => (!formulae[i] && isSocial([wholes[i]!.margin]) ? clausesOf(t) : []))
  const clauseVectors = await embed(split.flatMap((c) => (c.length > 1 ? c : [])))
  let at = 0
  return wholes.map((whole, i) => {
    if (formulae[i]) return undefined
    if (!isSocial([whole.margin])) {
      return isDatum(texts[i]!) ? undefined : { embedding: embeddings[i]!, margin: whole.asks }
    }
    if (split[i]!.length < 2) return undefined
    const clauses = split[i]!.map((_, k) => ({ v: clauseVectors[at++]!, text: split[i]![k]! }))
    const plans = ownPlans(texts[i]!)
    const asking = clauses
      .map((c) => ({ ...c, sides: sidesFrom(gateSimilarities(c.v, anchors), anchors) }))
      .filter((c) => !clauseAsksNothing(c.text, c.sides.margin, plans, socialFormula))
    if (asking.length === 0) return undefined
    const sum = new Float32Array(asking[0]!.v.length)
    for (const c of asking) addInto(sum, c.v)
    return {
      embedding: normalized(sum),
      margin: Math.min(...asking.map((c) => c.sides.asks)),
      byClauses: true as const,
    }
  })
}

/**
 * How clearly a follow-up asks in its clearest clause (issue 31 item 4, topics9): for each text of several
 * clauses (clausesOf), the least `asks` margin of its clauses that are neither social nor data, Infinity
 * when none is; undefined for a text of one clause. The gate reads the clauses of a message social as a
 * whole only, so a success report with a thanks ("done, the light is blue now. thanks!": 0.028 as a whole,
 * its clauses 0.310, 0.059, 0.703) asked clearly enough as a whole to make a topic after a request.
 * requestsMakingTopics takes the greater of the two: a later message makes a topic only when it asks both
 * as a whole and in one of its clauses. Embeds only the texts it is given (the analyzer: later requests
 * that ask as a whole).
 *
 * `below`: a text's clauses are read in order, and no more of them once one asks with a margin under it:
 * the least is then under it as well, and the text's value is that clause's (not the least of all). The
 * analyzer passes FOLLOW_UP_MARGIN, the one bound it compares the value with, so its decisions are those of
 * reading every clause, while the model embeds the clauses after the first that asks for none of the texts
 * (on the signal sets' multi-turn traffic the clauses were a tenth of the model's texts: bench/clause-cost.ts).
 * A round embeds the next clause of each text still undecided, in one call.
 */
export async function clauseAsks(
  texts: readonly string[],
  anchors: GateAnchors,
  embed: (texts: readonly string[]) => Promise<Vector[]>,
  below = -Infinity,
  ownPlans: OwnPlans = NO_OWN_PLANS,
  socialFormula: SocialFormula = isSocialFormula,
): Promise<(number | undefined)[]> {
  const split = texts.map((t) => clausesOf(t))
  const plans = texts.map((t) => ownPlans(t))
  // A text of one clause that is the end user's own plan or another language's thanks asks in none: no model
  // call needed.
  const least: (number | undefined)[] = split.map((c, i) =>
    c.length > 1 || (c.length === 1 && grammarAsksNothing(c[0]!, plans[i]!, socialFormula))
      ? Infinity
      : undefined,
  )
  let open = split.flatMap((c, i) => (c.length > 1 ? [i] : []))
  for (let k = 0; open.length > 0; k++) {
    const vectors = await embed(open.map((i) => split[i]![k]!))
    for (const [j, i] of open.entries()) {
      const text = split[i]![k]!
      const sides = sidesFrom(gateSimilarities(vectors[j]!, anchors), anchors)
      if (!clauseAsksNothing(text, sides.margin, plans[i]!, socialFormula))
        least[i] = Math.min(least[i]!, sides.asks)
    }
    open = open.filter((i) => k + 1 < split[i]!.length && !(least[i]! < below))
  }
  return least
}

/**
 * Whether a clause of a message asks nothing: the model reads it as social (`margin`, its social margin against the
 * support requests, reaches SOCIAL_MARGIN), it is data (isDatum), or its grammar says so (grammarAsksNothing). The
 * one test of a clause for both readers of clauses: requestEmbeddings, placing a message social as a whole by the
 * clauses that ask, and clauseAsks, finding how clearly a follow-up asks in its clearest.
 */
export function clauseAsksNothing(
  clause: string,
  margin: number,
  plans: ReadonlySet<string>,
  socialFormula: SocialFormula,
): boolean {
  return isSocial([margin]) || isDatum(clause) || grammarAsksNothing(clause, plans, socialFormula)
}

/**
 * Whether a clause's grammar says it asks nothing, read without the model: it is one of the end user's own plans
 * (`plans`, the text's OwnPlans) or another language's social formula.
 */
function grammarAsksNothing(
  clause: string,
  plans: ReadonlySet<string>,
  socialFormula: SocialFormula,
): boolean {
  return plans.has(clause) || socialFormula(clause)
}

/**
 * The clauses of a text (clausesOf's) that are the end user's own plan to reach someone another way ("whatever,
 * I'll call"): they ask in none of them (topics/own-plans.ts reads them from the grammar; passed in, since it
 * reads the signals' cues, which read this file's anchors). By default none is.
 */
export type OwnPlans = (text: string) => ReadonlySet<string>
const NO_OWN_PLANS: OwnPlans = () => new Set()

/**
 * Whether a clause is another language's social formula (social-formulas.ts isSocialFormula, the default): it asks
 * nothing, and a message of such clauses only is no request. Passed in so that the bench can read the gate without it.
 */
export type SocialFormula = (clause: string) => boolean

/** The gate's anchors: social acts, support requests, and requests of every other kind. */
export type GateAnchors = RequestAnchors & { readonly otherRequest: readonly Vector[] }

/**
 * A text's similarity to each of the gate's anchors, in order: `social`'s, then `request`'s, then
 * `otherRequest`'s. Computed once for a whole message: the gate reads them (sidesFrom), and the analyzer
 * hands the social and request anchors' on to the signal cues (MessageAnalysis.anchorSimilarities).
 */
export function gateSimilarities(v: Vector, anchors: GateAnchors): Float64Array {
  const out = new Float64Array(anchors.social.length + anchors.request.length + anchors.otherRequest.length)
  let at = 0
  for (const group of [anchors.social, anchors.request, anchors.otherRequest])
    for (const a of group) out[at++] = dot(v, a)
  return out
}

/**
 * A text's social margin against the support requests (`margin`, socialMargin) and against requests of every
 * kind (`asks`: the support requests and `otherRequest`), from its similarity to each anchor once
 * (gateSimilarities): the nearest social anchor is the same for both, and the nearest request of every kind is
 * the nearer of the two groups' nearest. The same numbers as socialMargin(v, anchors) and socialMargin(v, {
 * social, request: [...request, ...otherRequest] }) (the maximum of a list is the maximum of its parts' maxima),
 * at 61 + 24 + 12 dot products instead of 61 + 24 + 61 + 36 (issue 31).
 */
function sidesFrom(
  similarities: Float64Array,
  anchors: GateAnchors,
): { readonly margin: number; readonly asks: number } {
  const s = anchors.social.length
  const r = s + anchors.request.length
  const social = maxOf(similarities, 0, s)
  const request = maxOf(similarities, s, r)
  return {
    margin: social - request,
    asks: social - Math.max(request, maxOf(similarities, r, similarities.length)),
  }
}

function maxOf(values: Float64Array, from: number, to: number): number {
  let best = -Infinity
  for (let i = from; i < to; i++) best = Math.max(best, values[i]!)
  return best
}

/**
 * A conversation's later messages make a topic only when they clearly ask (issue 31 item 4, rules-v7).
 * The gate above gives the doubt to keeping: a message like neither its social nor its request anchors
 * counts as a request. That is right for the message that says what a conversation is about, and wrong
 * for what follows it: an end user's report of what they did ("ordered, thanks", "got it, its unlocked"),
 * a closing of several social clauses ("found it, done. thanks"), a follow-up that means nothing read
 * alone ("done. still nothing"), a call for a person ("agent") or an insult
 * ("useless") all pass it, and on multi-turn traffic they gathered into the largest topic, "thanks,
 * thank, gray" (bench/FINDINGS.md, "Thanks still made a topic"). So the doubt goes to keeping only for
 * the conversation's first request; a request after it makes a topic of its own only when its margin is
 * below FOLLOW_UP_MARGIN ("thanks. and can they see my analytics?" asks again), and otherwise none:
 * the conversation keeps the topic it has, and the message's words name no topic. The signals still
 * read every message.
 *
 * `messages`: a batch's messages in order, each with its PlacedRequest margin (undefined for one that is
 * no request: social, an answer to the bot's question, not an end user's); a conversation's first message
 * in the batch (a job's) says whether a request of it came before (`requestedBefore`: an earlier
 * capture's, read from the stored results), and a batch may hold several conversations. Returns which
 * make a topic.
 */
export function requestsMakingTopics(
  messages: readonly {
    readonly margin: number | undefined
    readonly requestedBefore?: boolean | undefined
  }[],
  margin = FOLLOW_UP_MARGIN,
): boolean[] {
  let requested = false
  return messages.map((m) => {
    if (m.requestedBefore !== undefined) requested = m.requestedBefore
    if (m.margin === undefined) return false
    const asks = !requested || m.margin < margin
    requested = true
    return asks
  })
}
