import type { MessageRole } from '../analyzer.ts'
import { REQUEST_ANCHORS, SOCIAL_ANCHORS, SOCIAL_MARGIN, THANKS_ANCHORS } from '../topics/requests.ts'
import { addInto, dot, normalized, type Vector } from '../topics/vectors.ts'
import {
  ANSWER_ANCHORS,
  CLARIFICATION_ANCHORS,
  ESCALATION_COMPLAINT_ANCHORS,
  ESCALATION_CONTRAST_ANCHORS,
  ESCALATION_REQUEST_ANCHORS,
  FAILURE_ANCHORS,
  FRUSTRATION_ANCHORS,
  FRUSTRATION_CONTRAST_ANCHORS,
  HANDOVER_ANCHORS,
  REASK_ANCHORS,
  RESOLUTION_ANCHORS,
  RESOLUTION_CONTRAST_ANCHORS,
} from './anchors.ts'
import { GENERIC_REQUESTS } from './generic-requests.ts'
import { casingOf, fingerprintOf, termsOf } from './terms.ts'

/**
 * What one message says towards the signals, as margins: its similarity to the nearest anchor of a cue
 * minus its similarity to the nearest anchor of that cue's contrast set (anchors.ts). Positive: nearer
 * the cue. Stored with the message's result (analysis_results.cues), so that a conversation's signals
 * can be decided again from them as messages arrive and as time passes (detect.ts).
 */
export interface MessageCues {
  /** requests.ts's social margin of the whole message: ≥ SOCIAL_MARGIN is a greeting, thanks, yes… */
  readonly social: number
  /** End user: asks for a person. */
  readonly escalation?: number
  /** End user: anger, annoyance or disappointment at the service. */
  readonly frustration?: number
  /** End user: confirms it worked, or thanks. */
  readonly resolution?: number
  /**
   * End user: the message ends on something still open: its last sentence (of several) is nearer a
   * request, a report or a "still not working" than a thanks or a social act ("thanks, but it still
   * fails"; "thanks. but the option is greyed out"), or (signals-v14) a sentence after its first is a
   * question, or (signals-v32, addsOf) opens on a connective that adds a new matter ("ok thanks. also the
   * grass is soggy…"). A thanks that goes on to a new problem or question resolves nothing.
   */
  readonly openTail?: boolean
  /**
   * End user: the message ends on a question mark, a question left waiting if nothing answers it ("and
   * online?"): read from the punctuation, as short questions lie near the social anchors; or (signals-v21,
   * questionOf) it opens on a question word without the mark ("which ones fit the gti then"), or (signals-v98,
   * invertedOf) on an auxiliary or modal and then a pronoun ("do i need to drain the water system before i bring it").
   */
  readonly question?: boolean
  /** End user (signals-v78): a question mark doubled or beside an exclamation mark (marksDoubledOf: "water damage??"). */
  readonly marksDoubled?: boolean
  /** Assistant: hands over to a person. */
  readonly handover?: number
  /**
   * Assistant (signals-v20): the learned handover head read on each unit (the whole message first, then
   * each of its sentences), each with that unit's handover margin (as `handover` reads it: at most 0 under
   * HANDOVER_NEAR), when the scorer has the head (the local model). A handover fires on a unit whose head
   * and margin together say so (detect.ts, handoverSaid): a case passed to a team that will call or email
   * lies as near the answers as the handover anchors. Signals-v35: a unit that tells the end user to act
   * (userActsOf) says so.
   */
  readonly handoverUnits?: readonly HandoverUnit[]
  /** Assistant: cannot help, did not understand, has no answer. */
  readonly failure?: number
  /**
   * Assistant: asks the end user to say it again (the clarification anchors against answers). End user
   * (signals-v10): asks the assistant to say it again ("sorry, could you repeat that?"): the same anchors
   * against any request or social act; the assistant then saying the same again is no repetition.
   */
  readonly clarification?: number
  /**
   * End user (signals-v11): says it is asking again, the answer having missed it ("I literally just said
   * the email never comes"): the re-ask anchors against any request or social act. A request this
   * similar to an earlier one (THRESHOLDS.repetitionAsked) that says so is repetition (detect.ts).
   */
  readonly reasks?: number
  /**
   * End user (signals-v17): opens by granting the answer and contesting it ("yes, but…", "right but…",
   * "I know…": asksAgainOf). A request marked so, at least THRESHOLDS.repetitionMarked similar to an
   * earlier one, is repetition (detect.ts).
   */
  readonly asksAgain?: boolean
  /**
   * End user (signals-v17): says it asked or said so before ("I asked…", "as I said": askedBeforeOf), or
   * (signals-v63) that it is asking ("I'm asking…", "my question is…"): weighs as the re-ask cue at its
   * threshold does.
   */
  readonly askedBefore?: boolean
  /**
   * End user (signals-v38): opens by denying or refusing ("no, not the smell…", "I didn't cancel…", "I
   * don't need a mat…", signals-v68 "we didn't…": contestsOf). After an answer that asked nothing, a request so opening at least
   * THRESHOLDS.repetitionAsked similar to an earlier one sets the answer aside: repetition (detect.ts).
   */
  readonly contests?: boolean
  /**
   * End user (signals-v57): asks that the person named before contact it, by a pronoun ("then get him to ring me",
   * "Can he call me on Monday then?": callsBackOf). Right after an answer to a request for a person that neither
   * handed over nor took it up, it asks for that person again: repetition (detect.ts).
   */
  readonly callsBack?: boolean
  /**
   * End user (signals-v85): asks that someone other than itself, the assistant or a person named before by a
   * pronoun call, e-mail or otherwise contact it ("can someone from the shop ring me about the viv", "can claire
   * ring me today?", "would it be possible for someone to call me": asksContactOf): a request for a person
   * (detect.ts, escalation).
   */
  readonly asksContact?: boolean
  /**
   * End user (signals-v39): draws a consequence from the answer, a clause ending on "then" ("so i just keep
   * waiting then", "what am i paying for then??": followsOnOf). Such a request builds on the answer, so it
   * is not read as ignoring it (detect.ts, the margin tiers of repetition).
   */
  readonly followsOn?: boolean
  /**
   * End user (signals-v52): opens on a thanks and goes on without "but" ("thanks. also, do you take glass?",
   * "ok thanks. can we bring our dog?": thanksFirstOf). Its first sentence of several is nearest a thanks among
   * the social anchors (requests.ts, THANKS_ANCHORS) at a social margin of SOCIAL_MARGIN or more; "thanks, but
   * that's not what I asked" goes on with "but". Such a request builds on the answer, as followsOn's does.
   */
  readonly thanksFirst?: boolean
  /**
   * End user (signals-v67): its last sentence says what the end user will do, in the first person future ("I'll
   * bring them to the branch on Saturday.", "Very good. I shall pay at the bar.", "ok. will tell the police":
   * plansOf). After an answer that neither failed nor handed over, such a last word takes the answer: the
   * conversation does not end on an unanswered request, however near the request anchors it lies (detect.ts).
   */
  readonly plans?: boolean
  /**
   * End user (signals-v41): the question form the message opens on, as a fingerprint (asksAsOf: "when", "how much",
   * "can i cancel"). A request ending on "then" that asks in the form of the earlier request it is compared
   * with asks it again ("when will my sofa be delivered?", "so when is it coming then?"): followsOn does
   * not hold for that pair (detect.ts).
   */
  readonly asksAs?: string
  /** Assistant: says in so many words that it cannot, does not know or did not understand (inabilityOf). */
  readonly inability?: boolean
  /**
   * Assistant (signals-v31): says in so many words that it cannot put the end user through to anyone ("I
   * can't transfer you to a person from here", "I'm not able to connect you to our assessors":
   * refusesHandoverOf). Such a message is a failure to hand over, not a handover, whatever channel it then
   * points to (detect.ts).
   */
  readonly refusesHandover?: boolean
  /**
   * Assistant (signals-v56): opens by saying what it is, the first person with a noun phrase ("I'm the studio's
   * virtual assistant.", "I'm a virtual assistant made with Rasa.": saysWhatItIsOf). In reply to a question about
   * what the assistant is, no handover (detect.ts).
   */
  readonly saysWhatItIs?: boolean
  /**
   * Assistant (signals-v24): asks the end user for something (asksOf): a question, a menu to choose from,
   * a detail it needs. Two such messages this similar with a reply between (THRESHOLDS.botAsksAgain) are
   * the assistant asking again (detect.ts, repetition).
   */
  readonly asks?: boolean
  /**
   * Assistant: a fingerprint of each of its sentences (saidOf), so that the bot saying again part of an
   * earlier message is found (detect.ts, repetition) without keeping its text.
   */
  readonly said?: readonly string[]
  /**
   * Assistant (signals-v40): a fingerprint of each thing it asks for by name, "your" or "the" and up to two
   * words after it in a sentence that asks (asksForOf: "What's your account number?", "I'll need your
   * account number"), so that the same detail asked for twice in other words is found (detect.ts,
   * repetition) without keeping its text.
   */
  readonly asksFor?: readonly string[]
  /**
   * Assistant (signals-v41): asks, and states the value of a thing it names ("I have your email address as sam@…, is that
   * right?", "your order number is 1234", "is your booking reference BK7781?": statesValueOf). Such a message
   * checks a detail it was given; it does not ask for it again (detect.ts, repetition). Answers state values
   * too ("Your new total is £265."): set only on a message that asks (asksOf).
   */
  readonly statesValue?: boolean
  /**
   * Both (signals-v45): a fingerprint of each content word (terms.ts, termsOf), so that a request can be compared
   * with an earlier one and the answer between by the words they do not share (detect.ts, repetition: the next
   * question in the same form, "what time do you open on saturday?", "We open at 9am…", "what time do you close?").
   */
  readonly terms?: readonly string[]
  /**
   * End user (signals-v73): a fingerprint of each word the message writes wholly in capitals (terms.ts, casingOf:
   * "ive paid it TWICE", "omg NO"), when there is one; detect.ts compares them with `cased` of the messages before.
   */
  readonly capitals?: readonly string[]
  /**
   * Both (signals-v73): a fingerprint of each word the message writes in ordinary case (terms.ts, casingOf), function
   * words too: a later word in capitals that is one of them is the same word said louder, not an acronym or a name.
   */
  readonly cased?: readonly string[]
  /**
   * End user (signals-v74): the content words (as `terms`) of its last sentence of several when that sentence ends on a
   * question mark: the part of the message that asks, after an acknowledgement or a remark ("Great. And the cellar
   * engineer?", "That covers one of three, sort of. Where are the drawings…?"), compared with an earlier request as
   * the whole message's words are (detect.ts, repetition: asksOver).
   */
  readonly lastQuestionTerms?: readonly string[]
  /**
   * End user: the learned frustration head read on each unit (the whole message first, then each of its
   * sentences), each with that unit's own frustration margin, when the scorer has the head (the local
   * model). Frustration fires on a unit whose head and margin both say so (detect.ts): a long factual
   * message with one angry sentence is frustrated.
   */
  readonly frustrationUnits?: readonly FrustrationUnit[]
  /**
   * End user (signals-v18): the learned escalation head read on each unit (the whole message first, then
   * each of its sentences), each with that unit's own escalation margin, when the scorer has the head (the
   * local model). Escalation fires on a unit whose head and margin together say so (detect.ts): a request
   * for a person in one sentence of a long, polite message lies under the anchors' threshold.
   */
  readonly escalationUnits?: readonly EscalationUnit[]
  /** End user: the learned emotion heads' frustration and gratitude (0..1, 0.5 expressed), when the analyzer has them. */
  readonly emotionFrustration?: number
  readonly gratitude?: number
  /**
   * End user (signals-v77): the learned gratitude head on the message's last sentence, when it has two or more
   * and the scorer has the head (the local model): a closing that thanks in its last word ("ah ok did the gift
   * card. cheers": the whole 0.20, "cheers" 0.76), which the whole's reading dilutes (detect.ts, resolution).
   */
  readonly gratitudeLast?: number
  /**
   * End user: the strongest of the GoEmotions heads anger, annoyance and disappointment (0..1, 0.5
   * expressed). Stored with the cues; frustration reads the frustration head alone since signals-v8.
   */
  readonly displeasure?: number
  /**
   * End user (signals-v59): the GoEmotions head sadness on the whole message (0..1, 0.5 expressed): a sad
   * subject, which is no frustration, read where the frustration head is not asked (detect.ts, frustrationParting).
   */
  readonly sadness?: number
  /** End user: the chatbot's own signals (settings.signals.custom), by id. */
  readonly custom?: Readonly<Record<string, number>>
}

/** One unit of an end-user message (the whole, or one sentence): a learned head and the cue's margin on it. */
export interface HeadUnit {
  /** The learned head on the unit's embedding (0..1). */
  readonly head: number
  /** The unit's margin for the same cue (nearest anchor minus nearest contrast). */
  readonly margin: number
}
/**
 * One unit of an end-user message: the escalation head and margin on it, and (signals-v47) whether it is
 * put as a statement, not as a request (statementOf: "nobody answers the office phone", "no call no text.",
 * "ref PT-4471"): a person named in a report, or a fragment, asks for no one.
 */
export interface EscalationUnit extends HeadUnit {
  readonly statement?: true
  /** signals-v54: the unit asks what the assistant is (asksWhatItIsOf: "are you a bot or a real person"). */
  readonly asksWhat?: true
  /**
   * signals-v65: when the unit's nearest contrast anchor is a complaint about the chat (anchors.ts,
   * ESCALATION_COMPLAINT_ANCHORS), its margin against the other contrasts: a complaint beside a request ("this
   * bot is useless, get me a person") leans to the complaint, but the complaint does not cancel the request
   * (detect.ts, escalationAsked).
   */
  readonly pastComplaint?: number
}
/**
 * One unit of an assistant message: the handover head and margin on it, and (signals-v35) whether it tells
 * the end user to act (userActsOf: "You can speak to an adviser on…", "Our disputes team can be contacted by
 * post"): then it points the end user elsewhere, it does not pass the conversation on.
 */
export interface HandoverUnit extends HeadUnit {
  readonly userActs?: true
  /**
   * signals-v48: the unit says someone other than the assistant will contact the end user (contactsUserOf:
   * "our dispatch team will email you", "…our site manager, who'll ring you", "I've asked our engineer to
   * email you").
   */
  readonly contacts?: true
  /**
   * signals-v86: the unit says the assistant passes the end user on to someone (transfersOf: "Transferring you to the
   * Warrington depot now.", "Connecting you now…", "I'll put you through to a member of the team.", "Let me bring in
   * one of our tailors.").
   */
  readonly transfers?: true
  /**
   * signals-v72: the unit lies under HANDOVER_NEAR from every handover anchor (its margin counts at most 0, signals-v11):
   * it hands nothing over by the handover head either (detect.ts, handoverSaid and handoverReplyHead).
   */
  readonly far?: true
}
/**
 * One unit of an end-user message: the frustration head and margin on it, and (signals-v37) the strongest of
 * the learned emotion heads anger, annoyance and disappointment on it (0..1, 0.5 expressed), when the scorer
 * has them: a second reading of the unit, trained on general comments rather than support messages
 * (detect.ts, THRESHOLDS.frustrationFirstDispleasure).
 */
export interface FrustrationUnit extends HeadUnit {
  readonly displeasure?: number
  /** signals-v64: the unit is written in capitals (shoutsOf: "THIS IS THE SECOND TIME WITH YOU LOT"). */
  readonly shouts?: true
}

/** A learned head on one embedding (SemanticAbilities.frustrationOf, escalationOf). */
export type LearnedHead = (embedding: Vector) => number
/** The learned frustration head on one embedding (SemanticAbilities.frustrationOf). */
export type FrustrationHead = LearnedHead

/** A chatbot's own signal: a label and example phrases (settings.signals.custom). */
export interface CustomSignal {
  /** `custom:` and the label's slug. */
  readonly name: string
  readonly label: string
  readonly examples: readonly string[]
}

/** A message's cues, and the embedding of the whole message (repetition compares them). */
export interface ScoredMessage {
  readonly cues: MessageCues
  readonly vector: Vector
}

export type Embed = (texts: readonly string[]) => Promise<Vector[]>

interface AnchorSet {
  readonly cue: readonly Vector[]
  readonly contrast: readonly Vector[]
}

export interface SignalAnchors {
  readonly social: readonly Vector[]
  readonly request: readonly Vector[]
  /** A chatbot's own signals' background beside social and request (generic-requests.ts, signals-v43). */
  readonly generic: readonly Vector[]
  /**
   * signals-v65: with `complaints`, the contrast's complaints about the chat (anchors.ts,
   * ESCALATION_COMPLAINT_ANCHORS), and `pastComplaints`, the same set less them (EscalationUnit.pastComplaint).
   */
  readonly escalation: AnchorSet & {
    readonly complaints?: readonly Vector[]
    readonly pastComplaints?: AnchorSet
  }
  readonly frustration: AnchorSet
  readonly resolution: AnchorSet
  readonly handover: AnchorSet
  readonly failure: AnchorSet
  readonly clarification: AnchorSet
  readonly reask: AnchorSet
}

/** What the built-in cues read (cuesFrom): every anchor but the chatbots' own signals' generic background. */
export type BuiltinAnchors = Omit<SignalAnchors, 'generic'>

/** The built-in cues' anchor groups, in the order builtinAnchorsOf reads their vectors. */
const BUILTIN_ANCHOR_GROUPS = [
  SOCIAL_ANCHORS,
  REQUEST_ANCHORS,
  ESCALATION_REQUEST_ANCHORS,
  ESCALATION_CONTRAST_ANCHORS,
  FRUSTRATION_ANCHORS,
  FRUSTRATION_CONTRAST_ANCHORS,
  RESOLUTION_ANCHORS,
  RESOLUTION_CONTRAST_ANCHORS,
  HANDOVER_ANCHORS,
  ANSWER_ANCHORS,
  FAILURE_ANCHORS,
  CLARIFICATION_ANCHORS,
  REASK_ANCHORS,
]
const BUILTIN_ANCHOR_TEXTS = BUILTIN_ANCHOR_GROUPS.flat()

/**
 * Embeds every anchor once (the analyzer's model): then each message costs a few dot products. All in one
 * call: one round trip to the model's thread instead of one per anchor (some 190; the first job waited for
 * them all). The model runs each text alone (embedding-model.ts), so an anchor's vector does not depend on
 * the others in the call: the same vectors as embedded one by one.
 */
export async function embedSignalAnchors(embed: Embed): Promise<SignalAnchors> {
  const vectors = await embed([...BUILTIN_ANCHOR_TEXTS, ...GENERIC_REQUESTS])
  return {
    ...builtinAnchorsOf(vectors),
    generic: vectors.slice(BUILTIN_ANCHOR_TEXTS.length),
  }
}

/**
 * embedSignalAnchors without the generic background (GENERIC_REQUESTS, 150 of its 395 texts), which only a
 * chatbot's own signals read: the service embeds it when a chatbot first has some (withGenericRequests,
 * signals/scorer.ts). The same vectors, the model embedding each text alone.
 */
export async function embedBuiltinAnchors(embed: Embed): Promise<BuiltinAnchors> {
  return builtinAnchorsOf(await embed(BUILTIN_ANCHOR_TEXTS))
}

/** The built-in anchors with the generic background embedded: what customSignalOf reads. */
export async function withGenericRequests(anchors: BuiltinAnchors, embed: Embed): Promise<SignalAnchors> {
  return { ...anchors, generic: await embed(GENERIC_REQUESTS) }
}

/** The built-in anchors from the vectors of BUILTIN_ANCHOR_TEXTS (and of anything after them). */
function builtinAnchorsOf(vectors: readonly Vector[]): BuiltinAnchors {
  let at = 0
  const [social, request, esc, escNot, fru, fruNot, res, resNot, hand, answer, fail, clar, reask] =
    BUILTIN_ANCHOR_GROUPS.map((g) => {
      const out = vectors.slice(at, at + g.length)
      at += g.length
      return out
    }) as Vector[][]
  const background = [...social!, ...request!]
  return {
    social: social!,
    request: request!,
    escalation: {
      cue: esc!,
      contrast: [...escNot!, ...background],
      // ESCALATION_CONTRAST_ANCHORS ends with ESCALATION_COMPLAINT_ANCHORS.
      complaints: escNot!.slice(escNot!.length - ESCALATION_COMPLAINT_ANCHORS.length),
      pastComplaints: {
        cue: esc!,
        contrast: [...escNot!.slice(0, escNot!.length - ESCALATION_COMPLAINT_ANCHORS.length), ...background],
      },
    },
    frustration: { cue: fru!, contrast: [...fruNot!, ...background] },
    resolution: { cue: res!, contrast: [...resNot!, ...request!] },
    handover: { cue: hand!, contrast: [...answer!, ...fail!] },
    failure: { cue: fail!, contrast: [...answer!, ...hand!, ...clar!] },
    clarification: { cue: clar!, contrast: answer! },
    reask: { cue: reask!, contrast: background },
  }
}

export function nearest(v: Vector, anchors: readonly Vector[]): number {
  let best = -Infinity
  for (const a of anchors) best = Math.max(best, dot(v, a))
  return best
}

/** The mean similarity of the k nearest anchors (all of them when fewer). */
export function nearestMean(v: Vector, anchors: readonly Vector[], k: number): number {
  return meanOfTop(
    anchors.map((a) => dot(v, a)),
    k,
  )
}

/** The mean of the k largest values (all of them when fewer; −Infinity of none), summed largest first. */
function meanOfTop(values: Iterable<number>, k: number): number {
  const top: number[] = []
  for (const x of values) {
    if (top.length < k) top.push(x)
    else {
      const low = top.indexOf(Math.min(...top))
      if (x > top[low]!) top[low] = x
    }
  }
  top.sort((a, b) => b - a)
  return top.length === 0 ? -Infinity : top.reduce((sum, x) => sum + x, 0) / top.length
}

/**
 * A chatbot's own signal, embedded: its centre, the normalised mean of its examples and its label (the
 * owner wrote the label to name the request, and it carries fewer of the domain's nouns than the examples),
 * and its background: the social and generic request anchors, and one real query per CLINC150 intent
 * (generic-requests.ts) except those nearer the centre than the farthest example, which are paraphrases of
 * the signal itself ("i need to report that my card is lost" for "reports a lost or stolen card"), not
 * background. signals-v43 (bench/FINDINGS.md, "custom signals, a centre and a wider background").
 */
export function customSignalOf(
  name: string,
  label: Vector,
  examples: readonly Vector[],
  anchors: SignalAnchors,
): CustomExamples {
  const sum = new Float32Array(label.length)
  for (const v of [...examples, label]) addInto(sum, v)
  const centre = normalized(sum)
  const farthest = Math.min(...examples.map((e) => dot(e, centre)))
  const generic = anchors.generic.filter((a) => dot(a, centre) < farthest)
  return { name, centre, background: [...anchors.social, ...anchors.request, ...generic] }
}

/** customSignalOf with the signal's label and examples embedded by `embed`. */
export async function embedCustomSignal(
  embed: Embed,
  signal: Pick<CustomSignal, 'name' | 'label' | 'examples'>,
  anchors: SignalAnchors,
): Promise<CustomExamples> {
  const [label, ...examples] = await embed([signal.label, ...signal.examples])
  return customSignalOf(signal.name, label!, examples, anchors)
}

/**
 * A chatbot's own signal's margin for one embedded unit: its similarity to the signal's centre minus its
 * mean similarity to the CUSTOM_NEAREST nearest of the signal's background. Positive: nearer the signal
 * than anything generic. The centre rather than the nearest examples, and a background with real queries
 * of many domains, so that a message of the chatbot's domain that shares a noun with one example ("where
 * is my gas meter?" with "here is my meter reading") finds a nearer generic query.
 */
export function customMargin(v: Vector, signal: CustomExamples): number {
  return customMarginBy(similarityTo(v), signal)
}
/** Chosen on the development sets (custom.json, custom-dev2.json): 3 over 1 and 2 by AUC on both. */
const CUSTOM_NEAREST = 3

/**
 * customMargin with the unit's similarities: the background's are shared by every custom signal of the
 * chatbot (and the social and request anchors' with the built-in cues), so each is computed once a unit.
 */
function customMarginBy(similarity: (anchor: Vector) => number, signal: CustomExamples): number {
  return similarity(signal.centre) - meanOfTop(signal.background.map(similarity), CUSTOM_NEAREST)
}

/** A unit's similarity to an anchor, each computed once (or given: `known`). */
function similarityTo(v: Vector, known = new Map<Vector, number>()): (anchor: Vector) => number {
  return (anchor) => {
    let similarity = known.get(anchor)
    if (similarity === undefined) {
      similarity = dot(v, anchor)
      known.set(anchor, similarity)
    }
    return similarity
  }
}

/**
 * A message's whole unit's similarities to the social and request anchors, computed elsewhere with the same
 * vectors (providers/semantic.ts: the topics' request gate, in the analyzer thread): `social[k]` is its dot
 * product with SOCIAL_ANCHORS[k]'s vector, `request[k]` with REQUEST_ANCHORS[k]'s.
 */
export interface GivenSimilarities {
  readonly social: ArrayLike<number>
  readonly request: ArrayLike<number>
}

/** The memo similarityTo starts from, keyed by this scorer's anchor vectors. */
function knownOf(anchors: BuiltinAnchors, given: GivenSimilarities | undefined): Map<Vector, number> {
  const known = new Map<Vector, number>()
  // Of other anchors (another revision's lists): not read, computed here.
  if (given?.social.length !== anchors.social.length || given.request.length !== anchors.request.length)
    return known
  for (const [k, a] of anchors.social.entries()) known.set(a, given.social[k]!)
  for (const [k, a] of anchors.request.entries()) known.set(a, given.request[k]!)
  return known
}

/** nearest() with the unit's similarities. */
function nearestBy(similarity: (anchor: Vector) => number, anchors: readonly Vector[]): number {
  let best = -Infinity
  for (const a of anchors) best = Math.max(best, similarity(a))
  return best
}

/** margin() with the unit's similarities. */
function marginBy(similarity: (anchor: Vector) => number, set: AnchorSet): number {
  return nearestBy(similarity, set.cue) - nearestBy(similarity, set.contrast)
}

/** Longer messages are scored by their first this many characters. */
const MAX_CHARS = 1_000
/** Sentences of a message scored on their own, at most. */
const MAX_SENTENCES = 5

/**
 * The message's sentences (at most MAX_SENTENCES), when it has more than one. A semicolon ends a clause
 * as a full stop does ("I've passed your case to our team; someone will reply here within 2 hours"), and
 * a comma before "but" starts a new one ("thanks, but it still fails"): what follows it is said on its own.
 */
export function sentencesOf(text: string): string[] {
  const sentences = text
    .slice(0, MAX_CHARS)
    .split(/(?<=[.!?\u2026])\s+|\n+|,\s+(?=but\b)/iu)
    .map((s) => s.trim())
    .filter((s) => /\p{L}/u.test(s))
  return sentences.length > 1 ? sentences.slice(0, MAX_SENTENCES) : []
}

export interface CueInput {
  readonly role: MessageRole
  readonly content: string
}

/** What cuesOf must embed for each message: the whole text first, then its sentences. */
export function unitsOf(m: CueInput): string[] {
  if (m.role !== 'user' && m.role !== 'assistant') return []
  const text = m.content.slice(0, MAX_CHARS).trim()
  if (!/\p{L}/u.test(text)) return []
  return [text, ...sentencesOf(text)]
}

/** Rounded to 3 decimals: stored, and compared across runs (a replay, a re-analysis). */
const round = (x: number) => Math.round(x * 1000) / 1000

/**
 * The cues of each message (undefined for a message with no letter, or of another role than the end
 * user's and the assistant's). The whole message and each of its sentences are scored; a cue takes the
 * best unit ("I want a person. This is useless." is both escalation and frustration), except the social
 * margin and resolution, which take the whole message ("thanks! but it still fails" is no resolution).
 */
export async function cuesOf(
  messages: readonly CueInput[],
  anchors: BuiltinAnchors,
  embed: Embed,
  custom: readonly CustomExamples[] = [],
  head?: FrustrationHead,
  escalationHead?: LearnedHead,
  handoverHead?: LearnedHead,
  displeasureHead?: LearnedHead,
  gratitudeHead?: LearnedHead,
): Promise<(ScoredMessage | undefined)[]> {
  const units = messages.map(unitsOf)
  return cuesFrom(
    messages,
    units,
    await embed(units.flat()),
    anchors,
    custom,
    head,
    escalationHead,
    handoverHead,
    displeasureHead,
    undefined,
    gratitudeHead,
  )
}

/** A chatbot's own signal, embedded (customSignalOf). */
export interface CustomExamples {
  readonly name: string
  readonly centre: Vector
  readonly background: readonly Vector[]
}

/**
 * cuesOf with the units (unitsOf of each message) already embedded: `vectors` is their flat list, in order.
 * With the learned frustration head (`head`), an end user's message also gets each unit's head and margin
 * (frustrationUnits); with the learned escalation head (`escalationHead`), the same for escalation
 * (escalationUnits); with the learned handover head (`handoverHead`), an assistant's message gets each
 * unit's handover head and margin (handoverUnits); with the learned emotion heads (`displeasureHead`,
 * signals-v37), each unit of an end user's message its displeasure (FrustrationUnit.displeasure). `given`: each
 * message's whole unit's similarities to the social and request anchors, when computed already (the same cues).
 * With the learned gratitude head (`gratitudeHead`, signals-v77), an end user's message of two or more
 * sentences its last sentence's gratitude (gratitudeLast).
 */
export function cuesFrom(
  messages: readonly CueInput[],
  units: readonly (readonly string[])[],
  vectors: readonly Vector[],
  anchors: BuiltinAnchors,
  custom: readonly CustomExamples[] = [],
  head?: FrustrationHead,
  escalationHead?: LearnedHead,
  handoverHead?: LearnedHead,
  displeasureHead?: LearnedHead,
  given?: readonly (GivenSimilarities | undefined)[],
  gratitudeHead?: LearnedHead,
): (ScoredMessage | undefined)[] {
  let at = 0
  return messages.map((m, i) => {
    const n = units[i]!.length
    const vs = vectors.slice(at, at + n)
    at += n
    if (n === 0) return undefined
    const whole = vs[0]!
    // Each unit's similarity to each anchor computed once: the anchor sets share many anchors (the
    // social and request anchors are in three of them). The same dot products, the same margins. The whole
    // message's to the social and request anchors may be given (the topics' gate computed them).
    const similarities = vs.map((v, k) => similarityTo(v, k === 0 ? knownOf(anchors, given?.[i]) : undefined))
    const margins = (set: AnchorSet) => similarities.map((sim) => marginBy(sim, set))
    const best = (set: AnchorSet) => round(Math.max(...margins(set)))
    const social = round(
      nearestBy(similarities[0]!, anchors.social) - nearestBy(similarities[0]!, anchors.request),
    )
    if (m.role === 'assistant') {
      const inability = inabilityOf(m.content)
      const asksFor = asksForOf(m.content)
      const asks = asksOf(m.content.slice(0, MAX_CHARS))
      // A unit near no handover anchor at all (under HANDOVER_NEAR) hands nothing over, however far it
      // lies from the answers: between two distant sets the margin is noise (signals-v11).
      const far = similarities.map((sim) => nearestBy(sim, anchors.handover.cue) < HANDOVER_NEAR)
      const handover = similarities.map((sim, k) => {
        const margin = marginBy(sim, anchors.handover)
        return far[k] ? Math.min(margin, 0) : margin
      })
      const cues = {
        social,
        handover: round(Math.max(...handover)),
        ...(handoverHead
          ? {
              handoverUnits: vs.map((v, k) => ({
                head: round(handoverHead(v)),
                margin: round(handover[k]!),
                ...(userActsOf(units[i]![k]!) ? { userActs: true as const } : {}),
                ...(contactsUserOf(units[i]![k]!) ? { contacts: true as const } : {}),
                ...(transfersOf(units[i]![k]!) ? { transfers: true as const } : {}),
                ...(far[k] ? { far: true as const } : {}),
              })),
            }
          : {}),
        // signals-v46: a sentence read as a failure on its own counts only when the message says no somewhere
        // (saysNoOf); the whole message is read as before.
        failure: saysNoOf(m.content) ? best(anchors.failure) : round(margins(anchors.failure)[0]!),
        clarification: best(anchors.clarification),
        ...(inability ? { inability } : {}),
        ...(refusesHandoverOf(m.content.slice(0, MAX_CHARS)) ? { refusesHandover: true } : {}),
        ...(saysWhatItIsOf(m.content) ? { saysWhatItIs: true as const } : {}),
        ...(asks ? { asks } : {}),
        said: saidOf(m.content),
        ...(asksFor.length > 0 ? { asksFor } : {}),
        ...(asks && statesValueOf(m.content.slice(0, MAX_CHARS)) ? { statesValue: true } : {}),
        terms: termsOf(m.content, MAX_CHARS),
        cased: casingOf(m.content, MAX_CHARS).cased,
      }
      return { cues, vector: whole }
    }
    const tail = similarities.length > 1 ? similarities.at(-1)! : undefined
    // signals-v14: or a sentence after the first asks a question, whatever follows it ("ok I'll do that,
    // thanks! oh and do you fix old ones? got one from years ago"): a thanks that goes on to ask resolves nothing.
    // signals-v98: a question without its mark too, read from the inversion ("amazing ty. oh can i bring my bike on it").
    const asksAfter = units[i]!.slice(2).some((sentence) => /\?\s*$/u.test(sentence) || invertedOf(sentence))
    // signals-v32: or a sentence after the first opens on a connective that adds a new matter ("ok thanks. also
    // the grass over the soakaway is soggy…", "ty! another thing, my promo code…": addsOf).
    const addsAfter = units[i]!.slice(2).some(addsOf)
    const openTail =
      tail !== undefined &&
      (asksAfter ||
        addsAfter ||
        (marginBy(tail, anchors.resolution) < 0 &&
          nearestBy(tail, anchors.social) < nearestBy(tail, anchors.request)))
    const frustration = margins(anchors.frustration)
    const escalation = margins(anchors.escalation)
    const pastComplaint = similarities.map((sim) => pastComplaintOf(sim, anchors.escalation))
    const asksAs = asksAsOf(m.content.slice(0, MAX_CHARS))
    const casing = casingOf(m.content, MAX_CHARS)
    const lastQuestionTerms = lastQuestionTermsOf(units[i]!)
    const cues: MessageCues = {
      social,
      escalation: round(Math.max(...escalation)),
      clarification: best({
        cue: anchors.clarification.cue,
        contrast: [...anchors.request, ...anchors.social],
      }),
      reasks: best(anchors.reask),
      ...(asksAgainOf(m.content) ? { asksAgain: true } : {}),
      ...(askedBeforeOf(m.content) ? { askedBefore: true } : {}),
      ...(contestsOf(m.content) ? { contests: true } : {}),
      ...(callsBackOf(m.content.slice(0, MAX_CHARS)) ? { callsBack: true } : {}),
      ...(asksContactOf(m.content.slice(0, MAX_CHARS)) ? { asksContact: true } : {}),
      ...(followsOnOf(m.content) ? { followsOn: true } : {}),
      ...(thanksFirstOf(units[i]!, similarities, anchors) ? { thanksFirst: true } : {}),
      ...(plansOf(units[i]!) ? { plans: true } : {}),
      ...(asksAs !== undefined ? { asksAs } : {}),
      frustration: round(Math.max(...frustration)),
      resolution: round(marginBy(similarities[0]!, anchors.resolution)),
      ...(openTail ? { openTail } : {}),
      ...(gratitudeHead && n > 2 ? { gratitudeLast: round(gratitudeHead(vs.at(-1)!)) } : {}),
      ...(head
        ? {
            frustrationUnits: vs.map((v, k) => ({
              head: round(head(v)),
              margin: round(frustration[k]!),
              ...(displeasureHead ? { displeasure: round(displeasureHead(v)) } : {}),
              ...(shoutsOf(units[i]![k]!) ? { shouts: true as const } : {}),
            })),
          }
        : {}),
      ...(escalationHead
        ? {
            escalationUnits: vs.map((v, k) => ({
              head: round(escalationHead(v)),
              margin: round(escalation[k]!),
              ...(pastComplaint[k] !== undefined ? { pastComplaint: round(pastComplaint[k]!) } : {}),
              ...(statementOf(units[i]![k]!) ? { statement: true as const } : {}),
              ...(asksWhatItIsOf(units[i]![k]!) ? { asksWhat: true as const } : {}),
            })),
          }
        : {}),
      ...(questionOf(m.content.slice(0, MAX_CHARS)) ? { question: true } : {}),
      ...(marksDoubledOf(m.content.slice(0, MAX_CHARS)) ? { marksDoubled: true } : {}),
      terms: termsOf(m.content, MAX_CHARS),
      ...(casing.capitals.length > 0 ? { capitals: casing.capitals } : {}),
      cased: casing.cased,
      ...(lastQuestionTerms.length > 0 ? { lastQuestionTerms } : {}),
    }
    if (custom.length === 0) return { cues, vector: whole }
    const scores: Record<string, number> = {}
    for (const c of custom) {
      scores[c.name] = round(Math.max(...similarities.map((sim) => customMarginBy(sim, c))))
    }
    return { cues: { ...cues, custom: scores }, vector: whole }
  })
}

/**
 * signals-v65: a unit's escalation margin against the contrast less its complaints about the chat, when the
 * nearest contrast anchor is one of them (EscalationUnit.pastComplaint); undefined otherwise.
 */
function pastComplaintOf(
  similarity: (anchor: Vector) => number,
  set: BuiltinAnchors['escalation'],
): number | undefined {
  if (set.complaints === undefined || set.pastComplaints === undefined) return undefined
  if (nearestBy(similarity, set.complaints) < nearestBy(similarity, set.contrast)) return undefined
  return marginBy(similarity, set.pastComplaints)
}

/**
 * signals-v11: an assistant unit less similar than this to every handover anchor is no handover (its
 * margin counts at most 0). On the union of the six development sets no unit of a true handover lies
 * under 0.38; the units under 0.35 that read as handovers were answers ("If your vet recommends a renal
 * diet, we stock a few; would you like to see them?", 0.29; "Make sure the scooter is parked inside a
 * green parking zone", 0.25). 0.3 and 0.35 give the same errors; 0.4 loses a handover at 0.40.
 */
export const HANDOVER_NEAR = 0.3

/**
 * signals-v64: the unit is written in capitals, shouted: its words written wholly in capitals (two letters or more,
 * every letter upper case, no digit) hold at least `minLetters` letters and at least `minShare` of the unit's
 * letters. MiniLM is uncased, so the heads read "THIS IS THE THIRD TIME" as "this is the third time"; the case
 * is read here, from the text. Not a lone acronym or code ("FYI the PIN is 1234", "reg is KP09 XRT": a code
 * has digits, an acronym too few letters of the unit), and not a script without case (its letters are not upper
 * case). The bounds chosen inside a plateau of the older half (4–20 letters and a share of 0.3–1 give the same
 * errors there); the newer half's errors are the same at every value (bench/FINDINGS.md, frust11).
 */
export function shoutsOf(text: string, minLetters = SHOUT_LETTERS, minShare = SHOUT_SHARE): boolean {
  // Most units have fewer capitals than that at all: one scan for them first.
  if ((text.match(/\p{Lu}/gu)?.length ?? 0) < minLetters) return false
  const letters = text.match(/\p{L}/gu)?.length ?? 0
  let shouted = 0
  for (const [word] of text.matchAll(/[\p{L}\p{N}'’]+/gu)) {
    if (/\p{N}/u.test(word)) continue
    const wordLetters = word.match(/\p{L}/gu) ?? []
    if (wordLetters.length >= 2 && wordLetters.every((l) => /\p{Lu}/u.test(l))) shouted += wordLetters.length
  }
  return shouted >= minLetters && shouted / letters >= minShare
}
/** shoutsOf's bounds: letters in words written in capitals, and their share of the unit's letters. */
export const SHOUT_LETTERS = 8
export const SHOUT_SHARE = 0.5

/** Sentences shorter than this many words are not fingerprinted: "Sure!", "Done." recur by nature. */
const SAID_MIN_WORDS = 4

/**
 * A fingerprint (FNV-1a, 8 hex digits) of each sentence of an assistant message of at least
 * SAID_MIN_WORDS words, its letters and digits lower-cased: the same sentence said again gives the same
 * fingerprint, whatever its punctuation, spacing or the sentences around it.
 */
export function saidOf(text: string): string[] {
  const sentences = sentencesOf(text)
  const out: string[] = []
  for (const sentence of sentences.length > 0 ? sentences : [text.slice(0, MAX_CHARS)]) {
    const words = sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
    if (words.length < SAID_MIN_WORDS) continue
    out.push(fingerprintOf(words.join(' ')))
  }
  return out
}

/**
 * signals-v40: what the assistant asks for by name: in each sentence that asks (asksOf), "your" or "the" and
 * the one or two words after it within the clause ("Could you give me your account number?", "To find your
 * invoices I'll need your account number." share "account number"), as fingerprints (saidOf's). Two asks
 * worded apart lie far apart as whole messages (0.26 for that pair) while naming the same thing.
 */
export function asksForOf(text: string): string[] {
  const out = new Set<string>()
  const sentences = sentencesOf(text)
  for (const sentence of sentences.length > 0 ? sentences : [text.slice(0, MAX_CHARS)]) {
    if (!asksOf(sentence)) continue
    for (const named of sentence
      .toLowerCase()
      .matchAll(/\b(?:your|the)\s+(\p{L}+(?:\s+of\s+\p{L}+|\s+\p{L}+)?)/gu))
      out.add(fingerprintOf(named[1]!))
  }
  return [...out]
}

/**
 * signals-v41: the assistant states the value of a thing it names: "your" or "the", one to three words, then (after
 * "is", "as", "was" or a colon, or at once) a value: a token with a digit or an "@" (of three characters or more
 * when it follows the name at once: not "your next 2 boxes"; not a list's number, "your device:\n1. Windows"),
 * or after "is", "as" or "was" a capitalised word ("I have your email address as sam@example.com, is that right?", "Got it, your order number
 * is 1234.", "Is your booking reference BK7781?", "Can I confirm your full name is Priya Shah?"). A bot that
 * repeats the detail it was given checks it; one that asks for it again names it without a value. The grammar
 * of a confirmation, not words of a domain.
 */
export function statesValueOf(text: string): boolean {
  return STATES_VALUE.test(text)
}

/** Not a list item's number ("1. Windows", "2) Mac"): a value it is not. */
const NOT_LIST_NUMBER = String.raw`(?!\d{1,2}[.)](?:\s|$))`

const STATES_VALUE = new RegExp(
  String.raw`\b(?:[Yy]our|[Tt]he)\s+\p{L}+(?:\s+\p{L}+){0,2}?` +
    String.raw`(?:\s+(?:is|as|was)\s+${NOT_LIST_NUMBER}(?:\p{Lu}\p{L}+|[^\s\d]*\d|[^\s@]+@)` +
    String.raw`|[ \t]*:[ \t]*${NOT_LIST_NUMBER}(?:[^\s\d]*\d|[^\s@]+@)` +
    String.raw`|\s+${NOT_LIST_NUMBER}(?=[^\s\d]*\d)[^\s,.?!;:]{3,})`,
  'u',
)

/** Lower-cased, curly apostrophes made straight, a space each side (so \b and " " match at the ends). */
function paddedLower(text: string): string {
  return ` ${text.toLowerCase().replace(/[‘’ʼ]/gu, "'")} `
}

/**
 * What follows "i" in a first-person present or future "cannot" ("I can't", "I'm unable to", "I won't be
 * able to"…), as alternatives of a regular expression's source: inabilityOf also takes the past ("I was
 * unable to", "I wasn't able to"), refusesHandoverOf does not.
 */
const CANNOT_FORMS =
  " can't| cannot| can not| couldn't| could not| won't be able to| will not be able to|'m unable to| am unable to|'m not able to| am not able to"
/** signals-v53: an adverb of degree between a negation and its verb ("didn't quite", "don't really", "not fully"). */
const DEGREE = '(?:quite|really|fully|entirely|totally|completely|exactly|actually)'
/** "I didn't (quite) understand / get / catch / follow", "I don't (really) know", "I don't recognise". */
const NEGATED_KNOWING = new RegExp(
  `\\bi (?:don't|do not|didn't|did not)(?: ${DEGREE})? (?:know|understand|get|catch|follow|recogni[sz]e)\\b`,
  'u',
)
/** "I'm not (quite) understanding / following", "I'm not (entirely) sure". */
const NOT_UNDERSTANDING = new RegExp(
  `\\bi(?:'m| am) not(?: ${DEGREE})? (?:understanding|following|sure)\\b`,
  'u',
)
/** A first-person inability, present, future or past, then its verb (captured). */
const CANNOT = new RegExp(
  `\\bi(?:${CANNOT_FORMS}| was unable to| wasn't able to| was not able to) (\\w+)`,
  'gu',
)
/** A first-person "cannot", at most one word, a verb of passing on and, within three words, its preposition. */
const REFUSES_HANDOVER = new RegExp(
  `\\bi(?:${CANNOT_FORMS})(?: \\w+)? (?:transfer|put|connect|pass|hand|escalate|forward)\\b(?: \\w+){0,3}? (?:to|through|over|with|on)\\b`,
  'u',
)

/**
 * First-person inability, read from the words: the assistant says that it cannot ("I can't", "I'm
 * unable to", "I'm not able to", "I couldn't"), does not know or did not understand ("I don't know",
 * "I didn't understand / get / catch / follow"), is not sure, has no information, details, data,
 * access or answer (signals-v34: or anything else it has not, "I don't have counter rates"), or (signals-v13)
 * can only answer, help or deal with something else ("Sorry, I can only help with deliveries": the bot's scope
 * stated to say no; signals-v34, "that's outside what I can help with", "not something I can advise on").
 * signals-v53: an adverb of degree in the negation ("I didn't quite follow that"), the progressive ("I'm not
 * understanding"), "beyond me", the scope in other tenses ("not something I've been trained on yet") and a
 * search that found no answer ("No good match found in KB.").
 * The grammar of the bot-failure definition, not words of a domain: a short failure stated in the domain's
 * words ("I'm unable to advise on overseas applications") has an embedding nearer the domain than any
 * failure anchor (bench/FINDINGS.md), but says "I'm unable to". Idioms of eagerness ("I can't wait to
 * help", "I couldn't agree more", "I can't thank you enough") are not inability.
 */
export function inabilityOf(text: string): boolean {
  const t = paddedLower(text)
  for (const m of t.matchAll(CANNOT)) if (!EAGER.has(m[1]!)) return true
  return (
    // signals-v53: an adverb of degree may stand between the negation and the verb ("I didn't quite follow
    // that", "I'm sorry, I didn't quite understand that" (Rasa's documented rephrase prompt), "I don't really
    // know"), and the verb may be in the progressive ("I'm not understanding", Watson Assistant's default).
    NEGATED_KNOWING.test(t) ||
    NOT_UNDERSTANDING.test(t) ||
    /\bi(?:'m| am) (?:not sure|afraid i (?:don't|do not))\b/u.test(t) ||
    // signals-v53: "beyond me", the first person as what a matter lies beyond ("that one's beyond me for now").
    /\bbeyond me\b/u.test(t) ||
    // signals-v53: the bot's search found no answer, said without a subject ("No good match found in KB.",
    // QnA Maker's default answer; "no matching results were found").
    /\bno (?:good |matching |relevant |exact )?(?:answers?|match(?:es)?|results?) (?:(?:was|were|could be) )?found\b/u.test(
      t,
    ) ||
    /\bi (?:can|am able to) only (?:answer|help|assist|deal)\b/u.test(t) ||
    /\bi (?:don't|do not) have (?:any |the |that |this |enough |much )?(?:[\w-]+ )?(?:information|info|details|data|access|answer|knowledge|visibility)\b/u.test(
      t,
    ) ||
    /\bi have no (?:[\w-]+ )?(?:information|info|details|data|access|answer|knowledge|idea)\b/u.test(t) ||
    // signals-v34: whatever the bot has not ("I don't have counter rates, sorry", "I don't have troubleshooting
    // steps for…"): "I" is the bot's own knowledge, where "we don't have it in blue" is the company's stock;
    // not "I don't have to…", nor "I don't have your…" (a detail it asks for).
    /\bi (?:don't|do not) have (?!to\b|your\b)/u.test(t) ||
    // signals-v34: the bot's scope stated to say no, in a clause ("that's outside what I can help with",
    // "not something I can advise on"): such a sentence lies as near the answers as the failure anchors
    // (−0.14 … +0.06 on the development sets), its "I can help" read and its negation not.
    // signals-v55: "i'm able to" written as "i" then "'m" ("isn't something I'm able to do"): until v54 the forms
    // followed "i " with a space, so their "'m able to" could never match.
    /(?:\bnot |n't )(?:something|anything) i(?: can| could| am able to|'m able to)\b|\b(?:beyond|outside(?: of)?) what i(?: can| could| am able to|'m able to)\b/u.test(
      t,
    ) ||
    // signals-v53: the same scope in other tenses and verbs of the bot's own knowing or making: "not
    // something I've been trained on yet", "not something I know about", "not anything I was built for".
    /(?:\bnot |n't )(?:something|anything) (?:that )?i(?:'ve| have| was| am|'m)? (?:(?:been |yet )?(?:trained|taught|built|designed|set up|programmed)|(?:learned|learnt) about|know (?:about|of)|know)\b/u.test(
      t,
    ) ||
    // signals-v21: no one to hand over to, said of the people ("there's nobody available on chat", "our
    // team isn't available at weekends"): the model reads the negation weakly, so these lie near handovers.
    /\b(?:nobody|no one|no-one|no (?:agents?|advisers?|advisors?|staff|operators?|colleagues?|humans?|people))\b(?: \w+){0,2} (?:is |are )?(?:currently )?available\b/u.test(
      t,
    ) ||
    /\b(?:team|agents?|advisers?|advisors?|staff|operators?|colleagues?|humans?|people)\b(?: \w+)? (?:isn't|is not|aren't|are not) (?:currently )?available\b/u.test(
      t,
    )
  )
}
/**
 * signals-v46: the message says no: a negation of English grammar ("not", "no", "never", "nothing", "nobody",
 * "none", "nowhere", "neither", "nor", "cannot", "unable", or a verb with "n't"). Saying it cannot help, did not
 * understand or has no answer is saying no; a short sentence of an answer ("Try these steps:", "We can do
 * that!", "Reply YES to claim.", "I understand the frustration.") can lie nearer a failure phrase than any
 * answer on its own (0.08 … 0.16 on the development sets), and its message, which says no nowhere, is an
 * answer. A fallback that pairs its "no" with advice ("No results for 'cmyk'. Try different keywords.") says
 * no in the other sentence, so the message, not the sentence, is read.
 */
export function saysNoOf(text: string): boolean {
  return /\b(?:not|no|never|nothing|nobody|none|nowhere|neither|nor|cannot|unable)\b|n't\b/u.test(
    paddedLower(text),
  )
}

/**
 * signals-v35: the assistant tells the end user to act, read from the words: "you" with a modal of ability
 * or obligation ("you can speak to an adviser on…", "you'll need to fill in the form", "you won't go back on
 * the list"), or a team or a line that "can be contacted" or "can be reached". The end user is pointed
 * somewhere, or told what happens to them; no one takes the conversation over, as the team's conventions
 * say of a phone number or a team named by the bot (bench/data/signals/README.md). Not an imperative ("Please
 * hold while I transfer you") nor a passive of passing on ("you will be connected to an adviser").
 */
export function userActsOf(unit: string): boolean {
  const t = paddedLower(unit)
  return (
    /\byou (?:can|could|may|might|should|need to|have to|won't|will not)\b|\byou(?:'ll| will) need to\b/u.test(
      t,
    ) || /\b(?:can|may) be (?:contacted|reached)\b/u.test(t)
  )
}

/**
 * signals-v86: the assistant passes the end user on, read from the words: transfer, connect or pass "you" to someone,
 * through or over, or now; put "you through"; bring in someone ("one of", "someone", "our", "a"): "Transferring you to the
 * Warrington depot now.", "Connecting you now…", "I'll put you through to a member of the team.", "Let me bring in
 * one of our tailors." Not after a negation or an inability in the same sentence ("I can't put you through right
 * now", "I'm not able to connect you to an agent": refusesHandoverOf's failure to hand over). Every such sentence of
 * the development sets lies in a conversation labelled escalation; the verbs of passing a person on, no word of a
 * domain.
 */
export function transfersOf(unit: string): boolean {
  const t = paddedLower(unit)
  const transfer = TRANSFERS.exec(t)
  return transfer !== null && !/\b(?:not|never|unable|cannot)\b|n't\b/u.test(t.slice(0, transfer.index))
}
const TRANSFERS =
  /\b(?:transferr?(?:ing)?|connect(?:ing)?|pass(?:ing)?)\s+you\s+(?:to|now|through|over)\b|\bput(?:ting)?\s+you\s+through\b|\bbring(?:ing)?\s+in\s+(?:one of|someone|somebody|our|a|an)\b/u

/** A verb of reaching someone: call, ring, phone, email, text, message, contact, write or reply to, get back to, be or get in touch with. */
const CONTACT_VERB =
  '(?:call|ring|phone|e-?mail|text|message|contact|write to|reply to|get back to|be in touch with|get in touch with)'

/**
 * signals-v48: the assistant says someone other than itself will contact the end user, read from the words:
 * a subject that is not the assistant, the company's "we", the end user, an elided subject ("…and will email
 * you") or a thing ("it", "this", "that"), then "will", "'ll" or "is/are going to" ("they're", "she's") and a verb of reaching
 * (CONTACT_VERB) with "you" ("our dispatch team will email you", "…our site manager, who'll ring you",
 * "someone will call you"), or the assistant having asked or arranged for someone to do so ("I've asked our
 * engineer, Graham, to email you a quote"). The sets' conventions (bench/data/signals/README.md) read a team or
 * person who will call, email or reply as a hand-over; the grammar of who acts towards whom, no word of a domain.
 */
export function contactsUserOf(unit: string): boolean {
  const t = paddedLower(unit)
  return (
    THIRD_PARTY_CONTACTS.test(t) || ASKED_TO_CONTACT.test(t) || (!t.includes('?') && ASKS_TO_CONTACT.test(t))
  )
}
// signals-v85: the subject may close an apposition ("Our local caretaker, Ewan, will call you"), and the verb of
// reaching may follow another done first ("they'll contact the old supplier and email you").
const THIRD_PARTY_CONTACTS = new RegExp(
  String.raw`\b(?!(?:i|we|you|and|or|but|then|also|it|this|that)\b)[a-z]+,?(?:\s+will|'ll|(?:\s+(?:is|are)|'re|'s) going to)\s+(?:(?:\w+\s+)?|[^.?!;]{1,60}?\band\s+(?:\w+\s+)?)${CONTACT_VERB}\s+you\b`,
  'u',
)
/** signals-v85: a verb of reaching with "you", or with its object before "to you" ("to email them to you"). */
const TO_CONTACT_YOU = String.raw`\bto\s+${CONTACT_VERB}\s+(?:(?:it|them|this|that|these|those)\s+to\s+)?you\b`
const ASKED_TO_CONTACT = new RegExp(
  String.raw`\b(?:asked|arranged for|requested|told)\s+(?!me\b|us\b)[^.?!;]{1,60}?${TO_CONTACT_YOU}`,
  'u',
)
// signals-v85: "ask", "arrange for", "request", "tell" or "get" someone to do so, said as a plan ("I'll ask the
// workshop to call you."), not offered in a question ("Would you like me to ask someone to call you?").
const ASKS_TO_CONTACT = new RegExp(
  String.raw`\b(?:ask|arrange for|request|tell|get)\s+(?!me\b|us\b)[^.?!;]{1,60}?${TO_CONTACT_YOU}`,
  'u',
)

/**
 * signals-v57: the end user asks that the person it named before contact it, by a pronoun: "get / ask / have / tell
 * him, her or them (…) to" and a verb of reaching (CONTACT_VERB, signals-v48's) with "me" or "us" ("then get him
 * to ring me", "please ask her or her manager to ring me"), or "can / could / will / would he, she or they" and
 * that verb ("Can he call me on Monday then?"). The escalation head reads such a sentence as asking for no one
 * (the person is a pronoun: 0.06 to 0.10 on the sets); the pronoun stands for the person asked for before, so
 * after an answer that did not take that up the end user asks for them again (detect.ts). The grammar of
 * reference, the verbs signals-v48 chose for the assistant's side; no word of a domain.
 */
export function callsBackOf(text: string): boolean {
  const t = paddedLower(text)
  return CAUSED_TO_CONTACT.test(t) || ASKED_IF_CONTACTS.test(t)
}
const CAUSED_TO_CONTACT = new RegExp(
  String.raw`\b(?:get|ask|have|tell)\s+(?:him|her|them)\b[^.?!;]{0,30}?\b(?:to\s+)?${CONTACT_VERB}\s+(?:me|us)\b`,
  'u',
)
const ASKED_IF_CONTACTS = new RegExp(
  String.raw`\b(?:can|could|will|would)\s+(?:he|she|they)\s+(?:please\s+)?${CONTACT_VERB}\s+(?:me|us)\b`,
  'u',
)

/**
 * signals-v85: the end user asks that someone contact it, read from the words, sentence by sentence: a question
 * or request whose subject is not the end user, the assistant, a thing or a person named before by a pronoun (he,
 * she, they: callsBackOf reads those), then a verb of reaching (CONTACT_VERB) with "me" or "us": "can / could /
 * would / will <someone> … ring me" ("can someone from the shop ring me about the 4ft viv", "Can the driver who
 * brought her ring me?"), "I'd like / I want / I need / get / have / ask / tell <someone> to call me" (not after
 * a negation: "I don't want anyone to ring me"), "for someone to call me", "someone who could email me". A person
 * who will reach the end user is a hand-over by the sets' conventions (bench/data/signals/README.md), so asking
 * for one asks for a person; the grammar of who acts towards whom, signals-v48's verbs, no word of a domain.
 */
export function asksContactOf(text: string): boolean {
  return (sentencesOf(text).length > 0 ? sentencesOf(text) : [text]).some((sentence) => {
    const t = paddedLower(sentence)
    if (MODAL_CONTACTS_ME.test(t) || SOMEONE_WHO_CONTACTS.test(t)) return true
    const wants = WANTS_CONTACT.exec(t)
    return wants !== null && !/\b(?:not|never|no)\b|n't\b/u.test(t.slice(0, wants.index))
  })
}
/** A subject that is neither the end user, the assistant, a thing nor a pronoun for a person named before. */
const CONTACTING_SUBJECT = String.raw`(?!(?:i|we|you|it|this|that|he|she|they|him|her|them|me|us)\b)[a-z][\w'-]*`
const MODAL_CONTACTS_ME = new RegExp(
  String.raw`\b(?:can|could|would|will)\s+${CONTACTING_SUBJECT}(?:\s+(?!(?:to|for)\b)[\w'-]+){0,6}?\s+${CONTACT_VERB}\s+(?:me|us)\b`,
  'u',
)
const WANTS_CONTACT = new RegExp(
  String.raw`\b(?:like|want|need|get|have|ask|tell)\s+${CONTACTING_SUBJECT}(?:\s+[\w'-]+){0,6}?\s+to\s+${CONTACT_VERB}\s+(?:me|us)\b|\bfor\s+(?:some|any)(?:one|body)\s+to\s+${CONTACT_VERB}\s+(?:me|us)\b`,
  'u',
)
const SOMEONE_WHO_CONTACTS = new RegExp(
  String.raw`\b(?:some|any)(?:one|body)\s+(?:who|that)\s+(?:can|could|would|will)\s+${CONTACT_VERB}\s+(?:me|us)\b`,
  'u',
)

/**
 * signals-v47: an end user's unit put as a statement, read from the words: no question (questionOf, a
 * question mark anywhere, or an opening auxiliary: "is there an actual human working there"), no modal of asking or ability (can, could, would, 'd, may, might;
 * signals-v70: "can't" only with a subject after it, "can't you…", "can't someone…", as "cannot" and "couldn't" were
 * already read: "a chat that can't tell me anything" asks nothing), no "please"
 * ("pls", "plz"), no wish or need in the first person ("I want", "I need", "I'd like") and no imperative of
 * reaching ("get me", "put me", "let me", "give me", "connect me", "transfer me", "call me", "ring me",
 * "email me"). The grammar of a request, not words of a domain: the escalation head reads a person named in
 * a report ("nobody answers the office phone", "no call no text.") and a bare reference ("ref PT-4471") as
 * asking for one, with the anchors short of their threshold (bench/FINDINGS.md, signals-v47).
 */
export function statementOf(unit: string): boolean {
  const t = paddedLower(unit)
  return !(
    questionOf(unit.trim()) ||
    t.includes('?') ||
    /^\W*(?:(?:ok|okay|so|and|but|then|right)\W+)*(?:is|are|was|were|do|does|did|have|has|will)\b/u.test(t) ||
    /\b(?:can(?!'t)|could|would|may|might|please|pls|plz)\b|'d\b/u.test(t) ||
    /\bcan't (?:you|u|i|we|they|he|she|someone|somebody|anyone|anybody)\b/u.test(t) ||
    /\bi (?:want|need|wanna)\b/u.test(t) ||
    /\b(?:get|put|let|give|connect|transfer|call|ring|email) me\b/u.test(t)
  )
}

/**
 * signals-v54: an end user's unit that asks what the assistant is, not for a person: a question that opens
 * (after "ok", "so", "hi", "wait"…) on the copula with the assistant as its subject ("are you a bot or a real
 * person lol", "r u human", "is this a real person", "am I talking to a bot") and carries none of the forms
 * of a request statementOf reads (a modal of asking or ability, please, "I want / I need", an imperative of
 * reaching), nor "are you able / going / willing to…". The person it names is what the assistant is asked to
 * be; the escalation head and anchors read "human" and "real person" as a request all the same. Platforms
 * file such questions under "are you a bot" intents, not under hand-over (bench/FINDINGS.md, signals-v54).
 */
export function asksWhatItIsOf(unit: string): boolean {
  const t = paddedLower(unit)
  return (
    /^\W*(?:(?:ok|okay|so|and|but|wait|hi|hey|hello|lol|um|erm)\W+)*(?:(?:are|r|aren't|arent) (?:you|u)|is this|am i (?:talking|speaking|chatting) (?:to|with))\b/u.test(
      t,
    ) &&
    !/^\W*(?:\w+\W+)*?(?:are|r|aren't|arent) (?:you|u) (?:able|going|gonna|willing|allowed)\b/u.test(t) &&
    !/\b(?:can|could|would|may|might|please|pls|plz)\b|'d\b/u.test(t) &&
    !/\bi (?:want|need|wanna)\b/u.test(t) &&
    !/\b(?:get|put|let|give|connect|transfer|call|ring|email) me\b/u.test(t)
  )
}

/**
 * signals-v56: the assistant opens (after a greeting or "no,", "yes,", "actually") by saying what it is: "I'm" /
 * "I am" then a noun phrase, a determiner or a possessive ("a", "an", "the", "just a", "not a", "SafeNest's"):
 * "I'm the studio's virtual assistant.", "I'm a virtual assistant made with Rasa.", "No, I'm an automated
 * assistant". The copula with a predicate noun, not an action ("I'm transferring you", "I'm sorry", "I'm able
 * to"): the grammar of an answer to "are you a bot?", whose words ("assistant", "person", "team") lie near the
 * handover anchors (bench/FINDINGS.md, signals-v56).
 */
export function saysWhatItIsOf(text: string): boolean {
  return /^\W*(?:(?:hi|hello|hey|no|nope|yes|yep|actually|good question|haha)\W+)*i(?:'m| am) (?:(?:just|only|not|actually) )?(?:a|an|the|[a-z][\w-]*'s)\b/u.test(
    paddedLower(text).trimStart(),
  )
}

/**
 * signals-v32: a sentence that opens (after "ok", "oh", "and" or "but") on a connective that adds a new
 * matter: "also", "btw", "by the way", "another thing", "one more thing", "one other thing". After a thanks
 * it brings a new request or report ("thanks. also the last bag was weeks old"), which the embedding of the
 * whole, near the thanks, does not tell: read from the words, as questionOf reads a question without its mark.
 */
export function addsOf(sentence: string): boolean {
  return /^\W*(?:(?:ok|okay|oh|and|but)\W+)*(?:also|btw|by the way|another thing|one more thing|one other thing)\b/iu.test(
    sentence,
  )
}

/**
 * signals-v31: the assistant says in the first person that it cannot pass the end user on: "I can't",
 * "I cannot", "I couldn't", "I'm unable to", "I'm not able to", "I won't be able to", then (after at most one
 * word: "I'm afraid I can't directly transfer…") a verb of passing on (transfer, put, connect, pass, hand,
 * escalate, forward) and, within three words, "to", "through", "over", "with" or "on" ("I can't put you
 * through to a person in chat", "I'm not able to transfer chats to the royalties team"). The grammar of a
 * refused handover, as inabilityOf reads a failure: the embedding of such a message lies near the handover
 * anchors, the team and the transfer being its nouns (bench/FINDINGS.md, signals-v31).
 */
export function refusesHandoverOf(text: string): boolean {
  return REFUSES_HANDOVER.test(paddedLower(text))
}

/**
 * signals-v17: the end user says in so many words that it asks again, read from the words as inabilityOf
 * reads the bot's: the grammar of a re-ask, not words of a domain. The message opens by granting the
 * answer and contesting it: an assent or a knowing ("yes", "yeah", "right", "I know", "I see", "I
 * understand") then "but" in the same clause ("yes, but once the term ends…", "right but I need a
 * file…"), or "I know" ("yes i know, when is the next one", "i know where the schedule is. i'm asking
 * WHY"). The embedding of such a message lies near what it asks, not near the re-ask anchors
 * (bench/FINDINGS.md, signals-v17). An acceptance before the "but" ("ok but…", "sure, but…", "got it,
 * but…") moves on as often as it asks again, and a thanks ("thanks, but it still fails") brings a new
 * report: both left out.
 */
export function asksAgainOf(text: string): boolean {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'").trimStart()
  return (
    /^\W*(?:yes|yeah|yep|yup|right|i know|i see|i understand)\b[^.?!\n]{0,20}?\bbut\b/u.test(t) ||
    /^\W*(?:(?:yes|yeah|yep|yup|right)\W+)?i (?:already )?know\b/u.test(t)
  )
}

/**
 * signals-v17: the end user says it asked, said, told or explained it before ("I asked how to…", "as I
 * said", "I requested it 10 days ago"), as the re-ask anchors read it ("I already told you that"), in
 * words: it weighs as the re-ask cue does (detect.ts). "That's not what I asked about, but ok. how do I
 * freeze my membership?" says it too, of a new question. Signals-v63: or that it is asking, in the present,
 * the first person with the progressive of "ask" ("i'm asking WHY it moved", "I am asking where my order
 * is", "im asking about a refund"), or names its question as the subject of "is" / "was" ("my question is
 * why…", "My main question is still whether…", "question is 2S or 3S battery", a sentence opening on it):
 * the end user says the words that follow are its question, which a statement's grammar (statementOf) does
 * not hear ("question is 2S or 3S battery" has no mark, no question word, no modal). Not "I'm not asking…"
 * alone, which sets a question aside. A closed form of the language, not words of a domain.
 */
export function askedBeforeOf(text: string): boolean {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'")
  return (
    /\bi(?:'ve| have)? (?:already |just )?(?:asked|said|told you|mentioned|explained|requested)\b/u.test(t) ||
    /\bas i (?:asked|said|mentioned|explained)\b/u.test(t) ||
    /\bi(?:'m| am|m| was) (?:only |just )?asking\b/u.test(t) ||
    /(?:^|[.!?;:,]\s*|\b(?:my|the|main|real) )question (?:is|was)\b/u.test(t)
  )
}

/**
 * signals-v38: the end user opens by denying or refusing: "no" (not "no worries", "no problem": thanks
 * declined), "nope", "not", or "I" with a negated auxiliary ("I don't…", "I didn't…", "I haven't…", "I
 * wasn't…", "I'm not…", with or without the apostrophe). After an answer beside the point the end user
 * says what the answer got wrong and asks again ("not change the frequency. pause it.", "I DIDNT
 * CANCEL…", "no I typed Nana…"); the grammar of a correction, not words of a domain. After the assistant
 * asked something, the same opening answers it ("no", "not right now"): detect.ts reads it only after an
 * answer that asked nothing. "Never mind" gives up rather than asks: left out. Signals-v68: the plural too, "we"
 * with a negated auxiliary ("We did not miss it. The guide did not come.", "we weren't in the front row"):
 * a family, a group or a business writes as one ("we're not" with its apostrophe: "were not" is the past).
 */
export function contestsOf(text: string): boolean {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'").trimStart()
  return (
    /^\W*(?:no(?!\W+(?:worries|problem)\b)|nope|not)\b/u.test(t) ||
    /^\W*i(?: (?:do|did|have|had|was|am)(?:n'?t| not)|'?m not)\b/u.test(t) ||
    /^\W*we(?: (?:do|did|have|had|were|are)(?:n'?t| not)|'re not)\b/u.test(t)
  )
}

/** The openers plansOf reads before a plan (signals-v92: "ah" and "oh" too). */
const PLAN_OPENERS = String.raw`(?:(?:ok|okay|so|and|but|then|right|ah|oh)\W+)*`
/** plansOf: the first person future, or "will" with the subject dropped, opening a sentence or a clause. */
const FUTURE_PLAN = new RegExp(
  String.raw`^\W*${PLAN_OPENERS}(?:(?:i|we)(?:'ll| will| shall)|ill|(?:i'?m|im|i am|we'?re|we are) going to|will(?! (?:you|u|it|they|that|this|he|she|there|we|i|the|my|our|your)\b))\b`,
  'u',
)
/** plansOf (signals-v92): an -ing verb (not a word in "-thing") opening a clause, then "now" within three words. */
const PROGRESSIVE_PLAN = new RegExp(
  String.raw`^\W*${PLAN_OPENERS}(?!\w*thing\b)[a-z]{3,}ing(?:\s+[\w'-]+){0,3}?\s+now\b`,
  'u',
)

/**
 * signals-v67: the message's last sentence (the whole, for one sentence) opens, after the openers ("ok", "so",
 * "right"…), on the first person future: "I'll" (typed "ill" too), "I will", "I shall", the plural, "I'm going to", or
 * "will" with the subject dropped ("ok will book for may") but not "will" opening a question ("will it be ready",
 * "will you…"). The end user says what it will do next. Grammar, no domain's words. signals-v92: or the last clause
 * of that sentence (after its last comma, semicolon or colon) opens so ("ok thats fine, ill book online", "lovely,
 * will talk to my fiance and book next week"), "ah" and "oh" read as openers too ("ah ok ill transfer it"); or that
 * clause is the present progressive of the end user's own act with the subject dropped, an -ing verb then "now"
 * within three words ("ringing now", "perfect, booking now 😊", "right. ringing him now"): the act under way. Not a
 * clause with a subject before the verb ("it's running now"), one opening on a word in "-thing" ("everything working
 * now"), a clause after a give-up ("never mind, I will email", as v67), nor a question.
 */
export function plansOf(units: readonly string[]): boolean {
  const last = units.at(-1)
  if (last === undefined) return false
  const t = last.toLowerCase().replace(/[‘’ʼ]/gu, "'").trim()
  if (t.includes('?')) return false
  // A give-up before the clause ("never mind, I will email") leaves v67's reading alone: the end user drops the matter.
  const clause = /^\W*(?:never ?mind|nvm)\b/u.test(t)
    ? undefined
    : t
        .split(/[,;:]\s*/u)
        .filter((c) => /\p{L}/u.test(c))
        .at(-1)
  return (
    FUTURE_PLAN.test(t) ||
    (clause !== undefined && (FUTURE_PLAN.test(clause) || PROGRESSIVE_PLAN.test(clause)))
  )
}

/**
 * signals-v74: the content words of a message's last sentence (units: unitsOf's, the whole first, then at most
 * MAX_SENTENCES sentences) when it has several and the last ends on a question mark; none otherwise. The question a
 * short follow-up asks after an acknowledgement ("Great. And the cellar engineer?") is in that sentence alone.
 */
export function lastQuestionTermsOf(units: readonly string[]): string[] {
  const last = units.length > 2 ? units.at(-1)! : undefined
  return last !== undefined && /\?\s*$/u.test(last) ? termsOf(last, MAX_CHARS) : []
}

/**
 * signals-v39: the end user draws a consequence from what the assistant said: a clause ending on "then"
 * ("so i just keep waiting then", "so what am i paying the monthly plan for then??", "ok can i talk to someone
 * then."), the answer taken as given. Not "then" of time after a preposition ("by then", "until then",
 * "since then"), nor "then" opening a clause ("then get me someone who can"), which demands rather than follows
 * on. The grammar of a follow-up, not words of a domain.
 */
export function followsOnOf(text: string): boolean {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'")
  return /(?<!\b(?:by|until|till|since|from|before|after|back)\s+)\bthen\s*(?:[,.?!]|$)/mu.test(t)
}

/** Where THANKS_ANCHORS lie in SOCIAL_ANCHORS, which SignalAnchors.social embeds in order. */
const THANKS_AT = new Set(THANKS_ANCHORS.map((a) => SOCIAL_ANCHORS.indexOf(a)))

/**
 * signals-v52: the end user opens on a thanks and goes on without "but": the first sentence of several (unitsOf:
 * the whole first, then the sentences) is nearest a thanks among the social anchors (THANKS_ANCHORS) and is
 * social (its nearest social anchor at least SOCIAL_MARGIN nearer than its nearest request anchor), and neither it
 * nor the next sentence, after any "ok", "oh", "and" or "so", says "but" (sentencesOf splits "thanks, but…" there).
 * "thanks. also, do you take glass?" and "ok thanks. can we bring our dog?" take the answer and go on; "Thank you,
 * but what I need to know is…" and "thanks. but it still fails" contest it. Read by the model, the "but" from the
 * words, as sentencesOf and asksAgainOf read it.
 */
export function thanksFirstOf(
  units: readonly string[],
  similarities: readonly ((anchor: Vector) => number)[],
  anchors: Pick<SignalAnchors, 'social' | 'request'>,
): boolean {
  if (units.length < 3 || similarities.length < 3) return false
  const first = similarities[1]!
  let nearestSocial = -Infinity
  let at = -1
  anchors.social.forEach((a, k) => {
    const similarity = first(a)
    if (similarity > nearestSocial) {
      nearestSocial = similarity
      at = k
    }
  })
  if (!THANKS_AT.has(at) || nearestSocial - nearestBy(first, anchors.request) < SOCIAL_MARGIN) return false
  return !/\bbut\b/iu.test(units[1]!) && !/^\W*(?:(?:ok|okay|oh|and|so)\W+)*but\b/iu.test(units[2]!)
}

/**
 * signals-v41: the question form a message opens on, after any connective ("so", "ok", "right", "well"…), as a
 * fingerprint: a question word ("how" with "much", "many", "long", "often", "soon" or "far" after it), or an
 * auxiliary, its subject and the verb after it ("can i cancel", "is the pool"). Undefined when it opens on
 * neither. The same form asked twice is the same question asked again; a different one ("can i talk to someone
 * then" after "can i get a refund?") asks something new.
 */
export function asksAsOf(text: string): string | undefined {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'")
  const opening =
    /^\W*(?:(?:ok|okay|so|and|but|then|right|well|oh|hm+)\W+)*(how(?:\s+(?:much|many|long|often|soon|far)\b)?|what|what's|whats|when|where|who|whose|why|which|(?:can|could|will|would|is|are|do|does|did|should|may|have|has)\s+(?:i|you|we|it|they|he|she|the\s+\p{L}+|my\s+\p{L}+)\s+\p{L}+)\b/u.exec(
      t,
    )
  return opening ? fingerprintOf(opening[1]!.replace(/\s+/gu, ' ')) : undefined
}

/**
 * A question, read from the words: the text ends on a question mark, or (signals-v21) opens, after any
 * connective ("so", "and", "ok"…), on a question word, as people type short follow-ups without the mark
 * ("which ones fit the gti then", "so how do i use it"). Not an exclamation ("what a mess", "how kind").
 */
/**
 * signals-v78: a question mark doubled, or set beside an exclamation mark ("water damage??", "am i covered or
 * not??", "?!"): the convention's punctuation of impatience ("it's broken??"). Not "!!" alone, a thanks's
 * ("thank you!!").
 */
export function marksDoubledOf(text: string): boolean {
  return /\?\s*[?!]|!\s*\?/u.test(text)
}

export function questionOf(text: string): boolean {
  if (/\?\s*$/u.test(text)) return true
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'")
  return (
    /^\W*(?:(?:ok|okay|so|and|but|then|right)\W+)*(?:which|what|what's|whats|when|where|who|whose|why|how)\b(?!\W+(?:a|an)\b)(?!\W+\w+\W*!)/u.test(
      t,
    ) || invertedOf(t)
  )
}

/**
 * signals-v98: a yes/no question typed without its mark, read from English's subject-auxiliary inversion: the
 * sentence opens (after "ok", "so", "and", "oh", "also"…) on an auxiliary or modal and then a pronoun as its subject
 * ("do i need to drain the water system before i bring it", "oh can i bring my bike on it", "is there a lift").
 * A pronoun only: after a noun ("did the gift card", "have a good evening") the opening is as often a statement
 * with its subject dropped or an imperative. Signals-v100: nor "do", "does" or "did" with "it" that ends the clause
 * (the end, a mark, "and", "but", "so", "now"): "it" is then the object of a statement with its subject dropped ("great
 * thanks! did it and it works now", "did it."), not the subject of a question ("did it arrive").
 */
export function invertedOf(text: string): boolean {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'")
  const inverted =
    /^\W*(?:(?:ok|okay|so|and|but|then|right|oh|ah|also)\W+)*(?:is|are|was|were|do|does|did|will|can|could|would|should)\s+(?:i|you|u|we|they|he|she|it|there|someone|anyone|somebody|anybody)\b/u.exec(
      t,
    )
  if (inverted === null) return false
  const doneIt =
    /(?:do|does|did)\s+it$/u.test(inverted[0]) &&
    /^\s*(?:$|[^\w\s']|(?:and|but|so|now)\b)/u.test(t.slice(inverted[0].length))
  return !doneIt
}

/**
 * signals-v24: the assistant asks the end user for something, read from the words as inabilityOf reads a
 * failure: a question mark, a menu ("please choose…", "please select…", "please reply…"), or a detail it
 * needs ("I need your…", "I'll need the…"). The grammar of asking, not words of a domain: a second ask of
 * the same detail said without a question mark ("To look it up I'll need the booking reference") is
 * nearer the first ask than any anchor tells.
 */
export function asksOf(text: string): boolean {
  const t = text.toLowerCase().replace(/[‘’ʼ]/gu, "'")
  return (
    t.includes('?') ||
    /\bplease (?:choose|select|pick|reply)\b/u.test(t) ||
    /\bi(?:'ll| will)? need (?:the|your)\b/u.test(t)
  )
}

/**
 * Verbs after "I can't" in idioms of eagerness, not inability; and (signals-v36) of a hedge on what the
 * assistant has just done ("I've added a note asking for Dave; we'll try, but I can't guarantee it"): the
 * request is served, the outcome not promised.
 */
const EAGER = new Set([
  'wait',
  'thank',
  'agree',
  'stress',
  'emphasise',
  'emphasize',
  'recommend',
  'guarantee',
  'promise',
])

/** The cues with the analyzer's emotions of the message added (end users' messages of the local model). */
export function withEmotions(
  scored: ScoredMessage | undefined,
  emotions:
    | {
        readonly frustration: number
        readonly gratitude: number
        readonly anger?: number
        readonly annoyance?: number
        readonly disappointment?: number
        readonly sadness?: number
      }
    | undefined,
): ScoredMessage | undefined {
  if (!scored || !emotions) return scored
  return {
    ...scored,
    cues: {
      ...scored.cues,
      emotionFrustration: round(emotions.frustration),
      gratitude: round(emotions.gratitude),
      displeasure: round(
        Math.max(emotions.anger ?? 0, emotions.annoyance ?? 0, emotions.disappointment ?? 0),
      ),
      ...(emotions.sadness === undefined ? {} : { sadness: round(emotions.sadness) }),
    },
  }
}
