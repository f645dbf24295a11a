import { describe, expect, it } from 'vitest'
import { seededRandom } from '../seeded-random.ts'
import { SOCIAL_ANCHORS, socialMargin } from '../topics/requests.ts'
import { dot, normalized, type Vector } from '../topics/vectors.ts'
import {
  cuesOf,
  customMargin,
  customSignalOf,
  HANDOVER_NEAR,
  nearest,
  plansOf,
  type SignalAnchors,
  saidOf,
  saysNoOf,
  sentencesOf,
  shoutsOf,
  unitsOf,
} from './cues.ts'

const random = seededRandom(11)
const unit = (): Vector => normalized(Float32Array.from({ length: 384 }, () => random() - 0.5))
const many = (n: number) => Array.from({ length: n }, unit)
/** Anchors far from everything (two random directions for every set) but those given. */
const farAnchorsBut = (given: Partial<SignalAnchors>): SignalAnchors => {
  const far = many(2)
  const none = { cue: far, contrast: far }
  return {
    social: far,
    request: far,
    generic: far,
    escalation: none,
    frustration: none,
    resolution: none,
    handover: none,
    failure: none,
    clarification: none,
    reask: none,
    ...given,
  }
}

describe("a message's cues", () => {
  it("are each unit's nearest cue anchor minus its nearest contrast anchor, shared anchors compared once", async () => {
    const social = many(6)
    const request = many(5)
    const answer = many(4)
    const failure = many(3)
    const hand = many(3)
    const anchors: SignalAnchors = {
      social,
      request,
      generic: many(4),
      escalation: { cue: many(3), contrast: [...many(2), ...social, ...request] },
      frustration: { cue: many(3), contrast: [...many(2), ...social, ...request] },
      resolution: { cue: many(3), contrast: [...many(2), ...request] },
      handover: { cue: hand, contrast: [...answer, ...failure] },
      failure: { cue: failure, contrast: [...answer, ...hand] },
      clarification: { cue: many(2), contrast: answer },
      reask: { cue: many(2), contrast: [...social, ...request] },
    }
    const messages = [
      { role: 'user' as const, content: 'I want a person. This is useless! Why?' },
      { role: 'assistant' as const, content: 'Sorry, I did not get that. Could you rephrase?' },
      { role: 'user' as const, content: 'thanks' },
    ]
    const vectorOf = new Map<string, Vector>()
    const embed = async (texts: readonly string[]) =>
      texts.map((t) => vectorOf.get(t) ?? vectorOf.set(t, unit()).get(t)!)
    const scored = await cuesOf(messages, anchors, embed)
    const round = (x: number) => Math.round(x * 1000) / 1000
    const margin = (v: Vector, set: { cue: readonly Vector[]; contrast: readonly Vector[] }) =>
      nearest(v, set.cue) - nearest(v, set.contrast)
    for (const [i, m] of messages.entries()) {
      const vs = unitsOf(m).map((t) => vectorOf.get(t)!)
      const best = (set: { cue: readonly Vector[]; contrast: readonly Vector[] }) =>
        round(Math.max(...vs.map((v) => margin(v, set))))
      const social = round(socialMargin(vs[0]!, anchors))
      const expected =
        m.role === 'assistant'
          ? {
              social,
              // A unit near no handover anchor (all of these random ones) counts at most 0.
              handover: round(
                Math.max(
                  ...vs.map((v) =>
                    nearest(v, anchors.handover.cue) >= HANDOVER_NEAR
                      ? margin(v, anchors.handover)
                      : Math.min(margin(v, anchors.handover), 0),
                  ),
                ),
              ),
              failure: best(anchors.failure),
              clarification: best(anchors.clarification),
            }
          : {
              social,
              escalation: best(anchors.escalation),
              frustration: best(anchors.frustration),
              resolution: round(margin(vs[0]!, anchors.resolution)),
              reasks: best(anchors.reask),
            }
      expect(scored[i]!.cues).toMatchObject(expected)
      expect(scored[i]!.vector).toBe(vs[0])
    }
  })

  it("read an assistant's unit as a handover only when it is near a handover anchor at all", async () => {
    const axis = (k: number, weight = 1): number[] =>
      Array.from({ length: 384 }, (_, i) => (i === k ? weight : 0))
    const mix = (a: number[], b: number[]) => normalized(Float32Array.from(a.map((x, i) => x + b[i]!)))
    const hand = normalized(Float32Array.from(axis(0)))
    const answer = normalized(Float32Array.from(axis(1)))
    const anchors = farAnchorsBut({ handover: { cue: [hand], contrast: [answer] } })
    // cos 0.2 to the handover anchor, 0 to the answer: a margin of 0.2, but near no handover.
    const faint = mix(axis(0, 0.2), axis(2, 0.98))
    // cos 0.5: near one.
    const near = mix(axis(0, 0.5), axis(2, 0.866))
    const texts = new Map([
      ['faint', faint],
      ['near', near],
    ])
    const embed = async (ts: readonly string[]) => ts.map((t) => texts.get(t)!)
    const [a, b] = await cuesOf(
      [
        { role: 'assistant', content: 'faint' },
        { role: 'assistant', content: 'near' },
      ],
      anchors,
      embed,
    )
    expect(a!.cues.handover).toBe(0)
    expect(b!.cues.handover).toBeCloseTo(0.5, 2)
  })

  it("read an assistant's sentence as a failure on its own only in a message that says no somewhere (signals-v46)", async () => {
    // Before signals-v46 "Try these steps:" alone near a failure phrase made a troubleshooting answer a failure.
    const axis = (k: number) => normalized(Float32Array.from({ length: 384 }, (_, i) => (i === k ? 1 : 0)))
    const failure = axis(0)
    const answer = axis(1)
    const anchors = farAnchorsBut({ failure: { cue: [failure], contrast: [answer] } })
    // Every unit reads as the answer anchor, but the sentence "Try these steps." as the failure anchor.
    const embed = async (ts: readonly string[]) =>
      ts.map((t) => (t === 'Try these steps.' ? failure : answer))
    const [answers, fallback, notFound] = await cuesOf(
      [
        { role: 'assistant', content: 'Try these steps. Open Settings.' },
        { role: 'assistant', content: "Sorry, that didn't match. Try these steps." },
        { role: 'assistant', content: 'Nothing found. Try these steps.' },
      ],
      anchors,
      embed,
    )
    expect(answers!.cues.failure).toBe(-1)
    expect(fallback!.cues.failure).toBe(1)
    expect(notFound!.cues.failure).toBe(1)
  })

  it('tell a message that says no from one that does not (signals-v46)', () => {
    for (const no of [
      "I can't find that order",
      'I don’t know',
      'No results for "oak shelf". Try different keywords.',
      'Nothing matched your search.',
      'That is not something we sell.',
      'Nobody is on chat now.',
      'I am unable to help.',
      'We never ship on Sundays.',
    ])
      expect(saysNoOf(no), no).toBe(true)
    for (const yes of [
      'Try these steps: 1. Restart the router.',
      'We can do that! Which day suits you?',
      'Reply YES to claim.',
      'Know your rights: note the nominal fee.',
    ])
      expect(saysNoOf(yes), yes).toBe(false)
  })

  it("carry the handover head's reading of each unit of an assistant's message with the unit's margin, given the head (signals-v20)", async () => {
    const social = many(6)
    const request = many(5)
    const answer = many(4)
    const hand = many(3)
    const anchors: SignalAnchors = {
      social,
      request,
      generic: many(4),
      escalation: { cue: many(3), contrast: [...social, ...request] },
      frustration: { cue: many(3), contrast: [...social, ...request] },
      resolution: { cue: many(3), contrast: request },
      handover: { cue: hand, contrast: answer },
      failure: { cue: many(3), contrast: [...answer, ...hand] },
      clarification: { cue: many(2), contrast: answer },
      reask: { cue: many(2), contrast: [...social, ...request] },
    }
    const messages = [
      { role: 'user' as const, content: 'my router keeps dropping' },
      { role: 'assistant' as const, content: "I'm sorry. I've opened a case and our team will call you." },
    ]
    const vectorOf = new Map<string, Vector>()
    const embed = async (texts: readonly string[]) =>
      texts.map((t) => vectorOf.get(t) ?? vectorOf.set(t, unit()).get(t)!)
    // Any function of the embedding stands for the head: here, how near the unit lies to the first anchor.
    const head = (v: Vector) => Math.abs(nearest(v, [hand[0]!]))
    const [user, bot] = await cuesOf(messages, anchors, embed, [], undefined, undefined, head)
    expect(user!.cues.handoverUnits).toBeUndefined()
    const units = unitsOf(messages[1]!)
    expect(units).toHaveLength(3)
    const round = (x: number) => Math.round(x * 1000) / 1000
    expect(bot!.cues.handoverUnits).toEqual(
      units.map((t) => {
        const v = vectorOf.get(t)!
        const margin = nearest(v, hand) - nearest(v, answer)
        return {
          head: round(head(v)),
          margin: round(nearest(v, hand) >= HANDOVER_NEAR ? margin : Math.min(margin, 0)),
          // signals-v48: "our team will call you" says someone else will contact the end user.
          ...(t.includes('will call you') ? { contacts: true } : {}),
          // signals-v72: a unit near no handover anchor says so.
          ...(nearest(v, hand) < HANDOVER_NEAR ? { far: true } : {}),
        }
      }),
    )
    expect(bot!.cues.handover).toBe(Math.max(...bot!.cues.handoverUnits!.map((u) => u.margin)))
    const [, without] = await cuesOf(messages, anchors, embed)
    expect(without!.cues.handoverUnits).toBeUndefined()
    expect(without!.cues.handover).toBe(bot!.cues.handover)
  })

  it("carry each unit's displeasure beside the frustration head's reading of an end user's message, given the emotion heads (signals-v37)", async () => {
    const social = many(6)
    const request = many(5)
    const answer = many(4)
    const anchors: SignalAnchors = {
      social,
      request,
      generic: many(4),
      escalation: { cue: many(3), contrast: [...social, ...request] },
      frustration: { cue: many(3), contrast: [...social, ...request] },
      resolution: { cue: many(3), contrast: request },
      handover: { cue: many(3), contrast: answer },
      failure: { cue: many(3), contrast: answer },
      clarification: { cue: many(2), contrast: answer },
      reask: { cue: many(2), contrast: [...social, ...request] },
    }
    const messages = [{ role: 'user' as const, content: 'the widget is blank. nothing was changed here' }]
    const vectorOf = new Map<string, Vector>()
    const embed = async (texts: readonly string[]) =>
      texts.map((t) => vectorOf.get(t) ?? vectorOf.set(t, unit()).get(t)!)
    // Any functions of the embedding stand for the heads.
    const head = (v: Vector) => Math.abs(v[0]!)
    const displeasure = (v: Vector) => Math.abs(v[1]!)
    const [scored] = await cuesOf(messages, anchors, embed, [], head, undefined, undefined, displeasure)
    const units = unitsOf(messages[0]!)
    expect(units).toHaveLength(3)
    const round = (x: number) => Math.round(x * 1000) / 1000
    expect(scored!.cues.frustrationUnits!.map((u) => u.displeasure)).toEqual(
      units.map((t) => round(displeasure(vectorOf.get(t)!))),
    )
    const [without] = await cuesOf(messages, anchors, embed, [], head)
    expect(without!.cues.frustrationUnits!.every((u) => u.displeasure === undefined)).toBe(true)
    expect(without!.cues.frustrationUnits!.map((u) => u.head)).toEqual(
      scored!.cues.frustrationUnits!.map((u) => u.head),
    )
    // signals-v77: given the gratitude head, a message of two or more sentences carries its last sentence's reading.
    const gratitude = (v: Vector) => Math.abs(v[2]!)
    const heads = [head, undefined, undefined, displeasure, gratitude] as const
    const [thanked] = await cuesOf(messages, anchors, embed, [], ...heads)
    expect(thanked!.cues.gratitudeLast).toBe(round(gratitude(vectorOf.get(units[2]!)!)))
    expect(scored!.cues.gratitudeLast).toBeUndefined()
    const [oneSentence] = await cuesOf(
      [{ role: 'user', content: 'the widget is blank' }],
      anchors,
      embed,
      [],
      ...heads,
    )
    expect(oneSentence!.cues.gratitudeLast).toBeUndefined()
  })

  it('read an end user\'s message as opening on a thanks by its first sentence\'s nearest social anchor, not before "but" (signals-v52)', async () => {
    const axis = (k: number) => normalized(Float32Array.from({ length: 384 }, (_, i) => (i === k ? 1 : 0)))
    const [thanks, request, ok] = [axis(0), axis(1), axis(2)]
    const anchors = farAnchorsBut({
      social: SOCIAL_ANCHORS.map((a) => (a === 'thanks' ? thanks : a === 'ok' ? ok : unit())),
      request: [request],
    })
    // "thanks." lies on the thanks anchor, "ok." on "ok", "thanks?" between the thanks and a request (social
    // margin 0, under SOCIAL_MARGIN); every other unit on the request anchor.
    const near = new Map([
      ['thanks.', thanks],
      ['thanks', thanks],
      ['ok.', ok],
      ['thanks?', normalized(Float32Array.from({ length: 384 }, (_, i) => (i < 2 ? 1 : 0)))],
    ])
    const embed = async (ts: readonly string[]) => ts.map((t) => near.get(t) ?? request)
    const texts = [
      'thanks. also, do you take glass?',
      "thanks, but that's not what I asked",
      'thanks. but it is still broken',
      'thanks. ok but what about the lid?',
      'ok. can we bring the dog?',
      'thanks? can we bring the dog?',
      'thanks',
    ]
    const cues = await cuesOf(
      texts.map((content) => ({ role: 'user' as const, content })),
      anchors,
      embed,
    )
    expect(cues.map((c) => c!.cues.thanksFirst === true)).toEqual([
      true,
      false,
      false,
      false,
      false,
      false,
      false,
    ])
  })

  it("read a plan in the last sentence, in its last clause, or as the end user's own act under way (signals-v67, v92)", () => {
    const plans = (text: string) => plansOf(unitsOf({ role: 'user', content: text }))
    // signals-v67: the last sentence opens on the first person future.
    expect(plans("ok. I'll bring them to the branch on Saturday.")).toBe(true)
    expect(plans('ok will book for may')).toBe(true)
    // signals-v92: its last clause opens so, after "ah" or "oh" too, or is an -ing verb with "now" and no subject.
    expect(plans('ok thats fine, ill book online')).toBe(true)
    expect(plans('lovely, will talk to my fiance and book next week x')).toBe(true)
    expect(plans('ah ok ill transfer it 2 my flatmate')).toBe(true)
    expect(plans('ringing now')).toBe(true)
    expect(plans('perfect, booking now 😊')).toBe(true)
    expect(plans('right. ringing him now.')).toBe(true)
    // Not a subject before the verb, a "-thing", a question, "will" asking, nor a plan before the last clause.
    expect(plans("cleared it and it's running now 👍")).toBe(false)
    expect(plans('everything working now')).toBe(false)
    expect(plans('ok, booking now?')).toBe(false)
    expect(plans('great, will it be ready by friday')).toBe(false)
    expect(plans("I'll book online, is that ok?")).toBe(false)
    expect(plans('never mind, I will email')).toBe(false)
    expect(plans('yep that did it, I can see everything now')).toBe(false)
  })

  it('split a message into sentences at full stops and at a comma before "but", not at a semicolon', () => {
    expect(sentencesOf('thanks, but it still fails')).toEqual(['thanks', 'but it still fails'])
    expect(sentencesOf('Thanks. But the option is greyed out')).toEqual([
      'Thanks.',
      'But the option is greyed out',
    ])
    expect(sentencesOf('I passed it to the team; they will reply')).toEqual([])
    expect(sentencesOf('a butterfly, butter and bread')).toEqual([])
  })

  it('read a unit as shouted when most of its letters are in words written in capitals, not an acronym, a code or a script without case (signals-v64)', () => {
    expect(shoutsOf('THIS IS THE THIRD TIME')).toBe(true)
    expect(shoutsOf("WHY HASN'T IT COME?? 3 WEEKS")).toBe(true)
    // A message mostly in lower case does not shout as a whole; its sentence in capitals does (a unit of its own).
    expect(shoutsOf('the door code is wrong. STILL LOCKED OUT')).toBe(false)
    expect(shoutsOf('STILL LOCKED OUT')).toBe(true)
    // Acronyms: too few letters, and too small a share of the unit's.
    expect(shoutsOf('FYI the PIN is 1234')).toBe(false)
    expect(shoutsOf('HMRC and the DVLA both wrote to me about it')).toBe(false)
    // Codes have digits; a capital letter alone is no word in capitals.
    expect(shoutsOf('reg KP09 XRT, postcode LS11 5QD')).toBe(false)
    expect(shoutsOf('I A I A I A I A I')).toBe(false)
    // Letters without case are neither.
    expect(shoutsOf('我的包裹还没有到达已经三个星期了')).toBe(false)
  })

  it("fingerprint each of the assistant's sentences, the same whatever surrounds it", () => {
    const earlier = saidOf("I'm sorry your bag hasn't arrived. Please file a report at the baggage desk.")
    const later = saidOf('please file a report at the baggage desk!')
    expect(earlier).toHaveLength(2)
    expect(later).toHaveLength(1)
    expect(earlier).toContain(later[0])
    expect(saidOf('Please file a report at the ticket desk.')[0]).not.toBe(later[0])
    expect(saidOf('Done! Sure.')).toEqual([]) // too short to tell a repeat
  })

  it("score a chatbot's own signal from its examples' and label's centre, without generic queries that paraphrase it", () => {
    const axis = (...weights: number[]): Vector =>
      normalized(Float32Array.from({ length: 384 }, (_, i) => weights[i] ?? 0))
    const examples = [axis(1, 0.3), axis(1, -0.3), axis(1, 0, 0.6)]
    const label = axis(1, 0, 0, 0.5)
    const far = many(4)
    // A generic query nearer the centre than the farthest example is the signal itself: left out.
    const paraphrase = axis(1, 0, 0.1, 0.1)
    const otherDomain = axis(0.2, 0, 0, 0, 1)
    const anchors = { social: far.slice(0, 2), request: far.slice(2), generic: [paraphrase, otherDomain] }
    const signal = customSignalOf('custom:x', label, examples, anchors as unknown as SignalAnchors)
    const sum = new Float32Array(384)
    for (const v of [...examples, label]) for (let i = 0; i < 384; i++) sum[i]! += v[i]!
    expect(dot(signal.centre, normalized(sum))).toBeCloseTo(1, 5)
    expect(signal.background).toEqual([...far, otherDomain])
    const v = axis(1, 0.1, 0, 0, 0.5)
    const nearest3 = signal.background
      .map((a) => dot(v, a))
      .sort((a, b) => b - a)
      .slice(0, 3)
    expect(customMargin(v, signal)).toBeCloseTo(
      dot(v, signal.centre) - (nearest3[0]! + nearest3[1]! + nearest3[2]!) / 3,
      6,
    )
  })
})
