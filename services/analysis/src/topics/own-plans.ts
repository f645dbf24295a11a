import { asksContactOf, callsBackOf } from '../signals/cues.ts'
import { clausesOf, everySentenceOf } from './requests.ts'

/**
 * The end user's own plan (issue 31 item 4): to reach someone another way (topics19: "whatever, I'll call", "I'll
 * just phone the branch tomorrow", "ok I'll pop in on Saturday"), or to try, wait, check, ask someone else or think
 * it over themselves (topics20: "I'll try the app", "ok I'll wait", "I'll check with my bank", "I'll have a look
 * myself", "I'll just do it in the branch"). Not a request: it asks the bot for nothing, so after the conversation's
 * first request it makes no topic. The sentence model cannot tell it from a request to be called ("can someone call
 * me", "I want to speak to a person"): it reads the channel's words, not who acts (bench/FINDINGS.md, topics17 and
 * topics18). So it is read from the grammar, as the signals read a plan (cues.ts plansOf) and a request for contact
 * (asksContactOf): a clause whose subject is the end user ("I'll", "I will", "I'm going to", "we'll", a dropped
 * subject "will call tomorrow", "I'm ringing them now") with a verb of reaching or of going there ("call", "ring",
 * "email", "give them a ring", "pop in", "go to the branch"), or in the future only, a verb of the end user's own
 * attempt, wait, inquiry or thought ("try", "wait", "check", "have a look", "ask", "think about", "do it"), not
 * that verb with "me" or "us" as its object nor with another made to act ("I'll wait for you to send it", "I'll ask
 * you", "I'll ask for a refund"), in a sentence that is no question and asks the bot nothing ("please", "can you"),
 * in a message that asks nowhere for someone to contact the end user (asksContactOf, callsBackOf). A closed form of
 * the language; no word of a domain. A verb of need, of being or of a transaction the bot may do ("I'm going to need
 * an uber", "I'll be travelling to…", "I'll have to cancel my reservation", "I will rollover my 401k") is no plan
 * of this kind: said to an assistant it asks (bench/FINDINGS.md, topics20).
 *
 * Returns the clauses (clausesOf's, of the whole text) read so; the topic gate counts none of them as asking.
 */
export function ownPlanClausesOf(text: string): ReadonlySet<string> {
  const plans = new Set<string>()
  if (asksContactOf(text) || callsBackOf(text)) return plans
  for (const sentence of everySentenceOf(text)) {
    const lower = sentence.toLowerCase().replace(/[‘’ʼ]/gu, "'")
    if (lower.includes('?') || ASKS_THE_BOT.test(lower)) continue
    for (const clause of clausesOf(sentence)) {
      const t = clause.toLowerCase().replace(/[‘’ʼ]/gu, "'")
      if ((REACH_PLAN.test(t) && !REACHES_THE_USER.test(t)) || (SELF_PLAN.test(t) && !OTHERS_ACT.test(t)))
        plans.add(clause)
    }
  }
  return plans
}

/** A sentence that asks the bot: "please", a modal question put as a statement ("can you call them"). */
const ASKS_THE_BOT =
  /\b(?:please|pls|plz)\b|\b(?:can|could|would|will)\s+(?:you|u|someone|somebody|anyone)\b/u

/** The end user as the subject of a future or a plan: "I'll", "I will", "I'm going to", "we'll", "ill". */
const FIRST_PERSON_FUTURE = `(?:(?:i|we)(?:'ll| will| shall|'m going to|'m gonna| am going to| am gonna|'re going to| are going to)|ill|im going to|im gonna)`
/** What may stand between the subject and the verb: an adverb, or a verb that leads into it ("try and", "go and"). */
const LEAD = String.raw`(?:\s+(?:just|probably|maybe|perhaps|simply|then|now|rather|instead|also|actually|definitely|first|go and|try and|try to|have to|need to))*`
/** Verbs of reaching someone, or of going there in person. */
const REACH = String.raw`(?:call|ring|phone|e-?mail|text|message|contact|write to|reach out|get in touch|give\s+(?:\w+\s+){0,2}?a\s+(?:call|ring|bell|buzz)|visit|pop\s+(?:in|into|over|down|by)|drop\s+(?:in|into|by)|go\s+(?:in|into|down|over|to)|head\s+(?:in|into|down|over|to)|come\s+(?:in|into|down|over|to)|stop\s+by)`
/**
 * The same in the present progressive ("ringing them now"). Not "going to", the future's own words ("I'm going
 * to need an uber", "i'm going to tokyo"): going there in person is read from the future's "go" above.
 */
const REACHING = String.raw`(?:calling|ringing|phoning|e-?mailing|texting|messaging|contacting|writing to|popping\s+(?:in|into|over|down|by)|heading\s+(?:in|into|down|over|to))`
/** What may open the clause before its subject: a discourse marker, an acknowledgement, a dismissal. */
const OPENERS = String.raw`^\W*(?:(?:ok|okay|so|and|but|then|right|fine|well|oh|whatever|alright|sure|yes|yeah|no|nope|thanks|thank you|never mind|nevermind|nvm|forget it)\W+)*`
/** The plan opens the clause, as plansOf reads a plan: "let my bank know i'm going to…" tells the bot to act. */
const REACH_PLAN = new RegExp(
  [
    String.raw`${OPENERS}${FIRST_PERSON_FUTURE}${LEAD}\s+(?:try\s+)?${REACH}\b`,
    String.raw`${OPENERS}(?:i'?m|i am|we'?re|we are)(?:\s+(?:just|now|already))?\s+${REACHING}\b`,
    // The subject dropped: "will call them tomorrow", "ringing them now"; not "will you…", a question.
    String.raw`${OPENERS}will(?!\s+(?:you|u|it|they|that|this|he|she|there|we|i|the|my|our|your|someone|somebody|anyone)\b)${LEAD}\s+${REACH}\b`,
    String.raw`${OPENERS}${REACHING}\s+(?:them|him|her|you|the|it)\b`,
  ].join('|'),
  'u',
)
/**
 * The verb of reaching with the end user as its object (someone is to reach them: a request), or "call" with two
 * objects, naming ("i'm going to start calling you joe"): "call you" then anything but a particle or an adverb
 * of time ("I'll call you back", "…tomorrow", "…in an hour").
 */
const REACHES_THE_USER = new RegExp(
  String.raw`\b(?:${REACH}|${REACHING})\s+(?:me|us)\b|\b(?:you|someone|somebody|anyone)\s+to\s+${REACH}\b|\bcall(?:ing)?\s+(?:you|u|it|me|us|him|her|them)\s+(?!(?:back|later|tomorrow|today|tonight|now|then|again|instead|soon|asap|first|next|in|on|at|when|after|before|about|if|once|from|and|or|but|to|this|that)\b)[a-z]`,
  'u',
)

/**
 * Verbs of the end user's own attempt, wait, inquiry or thought: what they will do themselves, whatever the
 * bot does ("try the app", "wait", "check with my bank", "have a look", "ask our admin", "think about it",
 * "sort it", "do it in the branch"). "do" only with a pronoun for what the bot said or alone ("I'll do that",
 * "will do"); "check" not as "check in" or "check out" (at a hotel: a booking's step).
 */
const SELF = String.raw`(?:try|retry|test|wait|hold\s+on|hang\s+on|check(?!\s+(?:in|out)\b)|double-check|look|have\s+(?:a\s+)?(?:look|think|go|try|read)|take\s+a\s+look|give\s+(?:it|that|this)\s+a\s+(?:go|try|shot)|see|find\s+out|figure|work\s+(?:it|that|this)\s+out|think|consider|sleep\s+on|google|look\s+(?:it|that|this)\s+up|search|read|ask|keep\s+an\s+eye|sort|handle|deal\s+with|do(?=\s+(?:it|that|this|so)\b|\s*$))`
/**
 * A plan of the end user's own in the future ("I'll try the app", "ok will check"): not the progressive, which
 * reports the trouble ("I'm trying to log in", "still waiting for my refund").
 */
const SELF_PLAN = new RegExp(
  [
    String.raw`${OPENERS}${FIRST_PERSON_FUTURE}${LEAD}\s+${SELF}\b`,
    String.raw`${OPENERS}will(?!\s+(?:you|u|it|they|that|this|he|she|there|we|i|the|my|our|your|someone|somebody|anyone)\b)${LEAD}\s+${SELF}\b`,
  ].join('|'),
  'u',
)
/**
 * The end user or the bot as the object, or another made to act: a request ("I'll wait for you to send it",
 * "I'll wait for someone to ring me", "I'll check with you", "I'll ask you again"), and asking for something
 * ("I'll ask for a refund", "ask them for a manager").
 */
const OTHERS_ACT =
  /\b(?:me|us)\b|\b(?:you|u|someone|somebody|anyone)\s+to\b|\b(?:for|with|to|ask)\s+(?:you|u)\b|\bask\s+(?:\w+\s+){0,3}?for\b/u
