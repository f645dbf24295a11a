/**
 * The conversation signals' decisions with the real model (../shared/models), without the service around
 * them: each conversation scored as the analysis scores it (cues.ts, with the learned emotions) and
 * decided (detect.ts). The phrasings are written for this test: neither anchors nor bench sets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  hasTestModel,
  requireTestModel,
  TEST_MODEL_DIR,
  UNREACHABLE_HUB,
} from '../../../../test/support/model.ts'
import { createSemanticAnalyzer, type SemanticAnalyzer } from '../providers/semantic.ts'
import {
  type CustomSignal,
  cuesOf,
  embedCustomSignal,
  embedSignalAnchors,
  type SignalAnchors,
  withEmotions,
} from './cues.ts'
import {
  type ConversationMessage,
  DEFAULT_QUIET_PERIOD_MS,
  detectSignals,
  escalationAsked,
  handoverSaid,
  THRESHOLDS,
} from './detect.ts'

requireTestModel()

type Turn = readonly ['user' | 'assistant', string]

describe.skipIf(!hasTestModel)('conversation signals with the language model', () => {
  let analyzer: SemanticAnalyzer
  let anchors: SignalAnchors
  beforeAll(async () => {
    analyzer = await createSemanticAnalyzer({
      modelDir: TEST_MODEL_DIR,
      cacheDir: TEST_MODEL_DIR,
      hubUrl: UNREACHABLE_HUB,
    })
    anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
  }, 120_000)
  afterAll(async () => {
    await analyzer?.close?.()
  })

  /** The conversation's signals before its quiet period ends (no abandonment). */
  async function signals(...turns: Turn[]): Promise<string[]> {
    return signalsWith([], ...turns)
  }

  async function signalsWith(
    ownSignals: readonly CustomSignal[],
    ...args: [...Turn[], number] | Turn[]
  ): Promise<string[]> {
    return signalsOf(ownSignals, true, ...args)
  }

  /**
   * As signalsWith, with or without the learned escalation and handover heads (an analyzer without them:
   * before signals-v18).
   */
  async function signalsOf(
    ownSignals: readonly CustomSignal[],
    withHeads: boolean,
    ...args: [...Turn[], number] | Turn[]
  ): Promise<string[]> {
    const at = typeof args.at(-1) === 'number' ? (args.at(-1) as number) : undefined
    const turns = (at === undefined ? args : args.slice(0, -1)) as Turn[]
    const input = turns.map(([role, content], i) => ({ id: `m${i}`, role, content }))
    const analysed = await analyzer.analyzeMessages(input, {})
    const custom = await Promise.all(
      ownSignals.map((c) => embedCustomSignal(analyzer.semantic.embedTexts, c, anchors)),
    )
    const scored = (
      await cuesOf(
        input,
        anchors,
        analyzer.semantic.embedTexts,
        custom,
        analyzer.semantic.frustrationOf,
        withHeads ? analyzer.semantic.escalationOf : undefined,
        withHeads ? analyzer.semantic.handoverOf : undefined,
        analyzer.semantic.displeasureOf,
        analyzer.semantic.gratitudeOf,
      )
    ).map((s, i) => withEmotions(s, analysed[i]!.emotions))
    const start = Date.UTC(2026, 10, 29, 9)
    const messages: ConversationMessage[] = turns.map(([role], i) => ({
      id: `m${i}`,
      role,
      sentAt: new Date(start + i * 60_000),
      cues: scored[i]?.cues,
      vector: scored[i]?.vector,
    }))
    const settings = {
      disabled: new Set<string>(),
      custom: ownSignals,
      quietPeriodMs: DEFAULT_QUIET_PERIOD_MS,
    }
    return detectSignals(messages, settings, new Date(at ?? start)).signals.map((s) => s.name)
  }

  /** One message's cues as the analysis scores them, with the learned heads (no emotions, no custom signals). */
  async function cuesOfOne(role: Turn[0], content: string) {
    const [scored] = await cuesOf(
      [{ role, content }],
      anchors,
      analyzer.semantic.embedTexts,
      [],
      analyzer.semantic.frustrationOf,
      analyzer.semantic.escalationOf,
      analyzer.semantic.handoverOf,
    )
    return scored
  }

  /** The conversation's signals once its quiet period has passed (abandonment decided). */
  async function settledSignals(...turns: Turn[]): Promise<string[]> {
    return signalsWith(
      [],
      ...turns,
      Date.UTC(2026, 10, 29, 9) + turns.length * 60_000 + DEFAULT_QUIET_PERIOD_MS,
    )
  }

  it('embeds the anchors in one call, each vector the one the anchor has embedded on its own', async () => {
    const calls: number[] = []
    const inOneCall = await embedSignalAnchors(async (texts) => {
      calls.push(texts.length)
      return analyzer.model.embed(texts)
    })
    expect(calls).toHaveLength(1)
    expect(calls[0]).toBeGreaterThan(100)
    const oneByOne = await embedSignalAnchors(async (texts) => {
      const vectors: Float32Array[] = []
      for (const text of texts) vectors.push(...(await analyzer.model.embed([text])))
      return vectors
    })
    expect(inOneCall).toEqual(oneByOne)
  }, 120_000)

  it('reads a question asked again in other words, after an answer beside the point, as repetition', async () => {
    expect(
      await signals(
        ['user', 'is there wifi in the rooms?'],
        ['assistant', 'Breakfast is served from 7 to 10 in the lobby restaurant.'],
        ['user', 'do guests get internet access in their room?'],
      ),
    ).toContain('repetition')
    expect(
      await signals(
        // Cosine 0.66: under the similarity that is repetition whatever lies between.
        ['user', 'what time does the pool open?'],
        ['assistant', 'Towels are available at the reception desk.'],
        ['user', 'when can I use the swimming pool?'],
      ),
    ).toContain('repetition')
  })

  it('does not read a follow-up on the answer as repetition', async () => {
    expect(
      await signals(
        ['user', "what's your cheapest phone plan?"],
        ['assistant', 'The Basic plan is 10 a month and includes 5 GB of data.'],
        ['user', 'does the Basic plan include calls abroad?'],
      ),
    ).not.toContain('repetition')
    expect(
      await signals(
        ['user', 'how do I book a table for Saturday?'],
        ['assistant', 'You can book a table on our website or by phone.'],
        ['user', 'can I book a table for twelve people?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a handover to a department, and the person arriving, as escalation', async () => {
    expect(
      await signals(
        ['user', 'my invoice shows the wrong VAT number'],
        ['assistant', "I'll put you through to our accounts department now."],
      ),
    ).toContain('escalation')
    expect(
      await signals(
        ['user', 'my invoice shows the wrong VAT number'],
        ['assistant', 'Hi there, Priya from the accounts team here, I am picking up your chat.'],
      ),
    ).toContain('escalation')
    expect(
      await signals(
        ['user', 'The engineer who came yesterday was brilliant'],
        ['assistant', 'Thank you for the kind words, I will share them with the team!'],
      ),
    ).not.toContain('escalation')
  })

  it('reads a request to be called back, or for a manager to write to, as escalation; a team, a phone line or hours named by the bot as none', async () => {
    // signals-v11, the team's conventions: the end user asks to reach a person, whichever channel.
    expect(
      await signals(
        ['user', 'my meter was read wrong again and the bill is double'],
        ['assistant', 'I can see two readings on your account this quarter.'],
        ['user', 'can someone call me back about it this afternoon?'],
      ),
    ).toContain('escalation')
    expect(
      await signals(
        ['user', 'the parcel came damaged for the second time'],
        ['assistant', 'I am sorry about that. A replacement is on its way.'],
        ['user', 'what is the email of your area manager? I want to take this further with them'],
      ),
    ).toContain('escalation')
    // The bot naming a team, giving a phone number and opening hours, or telling how to add people to an
    // account, hands over to no one (signals-v10 read a handover in the last two, margins 0.12 and 0.13).
    expect(
      await signals(
        ['user', 'can I get my money back for the cancelled class?'],
        ['assistant', 'Our billing team handles refunds.'],
        ['user', 'ok thanks'],
      ),
    ).not.toContain('escalation')
    expect(
      await signals(
        ['user', 'can I book a table for 14 people?'],
        [
          'assistant',
          'For bookings, please call 0345 600 700. Lines are open 9am to 5pm, Monday to Saturday.',
        ],
        ['user', 'great, thanks'],
      ),
    ).not.toContain('escalation')
    expect(
      await signals(
        ['user', 'how do I give my colleague access?'],
        ['assistant', 'You can add teammates to your workspace under Settings > Members.'],
        ['user', 'found it'],
      ),
    ).not.toContain('escalation')
  })

  it('reads the end user asking that someone ring it as escalation, however the head reads it; an arrangement reported as none (signals-v85)', async () => {
    // Issue 32 (esc5): the escalation head reads a request that a named person or "someone from" a place ring the
    // end user, with more said beside it, as asking for no one (0.28 to 0.69 on the sets); the words ask for one.
    const asking =
      'also can someone from the garden centre phone me about the shed i ordered, its been a month'
    const scored = await cuesOfOne('user', asking)
    expect(scored!.cues.asksContact).toBe(true)
    expect(escalationAsked(scored!.cues)).toBeUndefined()
    const answer = 'Your compost bags are reserved at the Ely branch.'
    expect(
      await signals(
        ['user', 'can you keep 3 bags of compost for me at ely'],
        ['assistant', answer],
        ['user', asking],
      ),
    ).toContain('escalation')
    const reported =
      'My brother is in hospital and the nurse said I can pay for him to phone me. How do I do that?'
    expect((await cuesOfOne('user', reported))!.cues.asksContact).toBeUndefined()
    expect(await signals(['user', reported])).not.toContain('escalation')
  }, 60_000)

  it('reads the assistant saying it has asked someone to e-mail the end user, after saying it cannot help, as escalation (signals-v85)', async () => {
    // Issue 32 (esc5): "I've asked your project engineer, Owen, to email them to you": the object before "to you".
    const said =
      "I'm not able to send drawings from this chat, but I've asked your architect, Priya, to email them to you today."
    const scored = await cuesOfOne('assistant', said)
    expect(scored!.cues.handoverUnits!.some((u) => u.contacts === true)).toBe(true)
    expect(
      await signals(
        ['user', 'where can I get the floor plans for the loft conversion?'],
        ['assistant', said],
      ),
    ).toContain('escalation')
  }, 60_000)

  it('reads the assistant passing the end user on in words as a hand-over, however the head reads it; saying it cannot as none (signals-v86)', async () => {
    // Issue 32 (esc5): "Transferring you to the Warrington depot now." lies under the handover head's 0.92 (0.79).
    const transfer = 'Transferring you to the Leeds warehouse now.'
    const scored = await cuesOfOne('assistant', transfer)
    expect(scored!.cues.handoverUnits!.some((u) => u.transfers === true)).toBe(true)
    expect(
      await signals(
        ['user', 'my pallet was meant to be collected this morning and nobody came'],
        ['assistant', transfer],
      ),
    ).toContain('escalation')
    const refused = "I can't put you through right now. Our office is open from 8am tomorrow."
    expect(
      (await cuesOfOne('assistant', refused))!.cues.handoverUnits!.some((u) => u.transfers === true),
    ).toBe(false)
  }, 60_000)

  it('reads someone else who will email the end user as a hand-over after the assistant said it cannot help, however the head reads it; the same after an answer as none (signals-v89)', async () => {
    // Issue 32 (esc6): fresh9 homebrew-01's shape, in other words: a refusal, the end user pressing, the case passed on.
    const passedOn =
      "Yes! Our head baker Marta answers those. I've passed yours on and she'll email you tonight."
    const scored = await cuesOfOne('assistant', passedOn)
    const contact = scored!.cues.handoverUnits!.filter((u) => u.contacts === true)
    expect(contact.length).toBeGreaterThan(0)
    expect(Math.max(...contact.map((u) => u.head))).toBeLessThan(THRESHOLDS.handoverContactHead)
    const opening: Turn = ['user', 'my sourdough starter from your shop has stopped rising after a week']
    const pressing: Turn = ['user', 'is there anyone there who actually bakes? would love some proper advice']
    expect(
      await signals(opening, ['assistant', "Sorry, that's not something I can help with."], pressing, [
        'assistant',
        passedOn,
      ]),
    ).toContain('escalation')
    expect(
      await signals(
        opening,
        [
          'assistant',
          'Feed it twice a day with equal weights of flour and water, and keep it somewhere warm.',
        ],
        pressing,
        ['assistant', passedOn],
      ),
    ).not.toContain('escalation')
  }, 60_000)

  it('reads an offer of a contact the end user declines at once as no hand-over (signals-v101)', async () => {
    // Issue 32 (sig26): fresh29 commenergy-01's, fresh28 taxilicence-02's and fresh30 organdonor-01's shape, in other words.
    const opening: Turn = [
      'user',
      'my dad passed away in june. do i need to tell you to close his pension or is that automatic',
    ]
    const offer: Turn = [
      'assistant',
      "I'm sorry to hear that. If you'd like, a member of our care team can call you to go through it.",
    ]
    const scored = await cuesOfOne('assistant', offer[1])
    expect(handoverSaid(scored!.cues)).toBeDefined()
    expect(
      await signals(opening, offer, ['user', 'no its fine, i just wanted to know. thanks']),
    ).not.toContain('escalation')
    // Accepted, the same offer hands over.
    expect(await signals(opening, offer, ['user', 'yes please, that would help'])).toContain('escalation')
  }, 60_000)

  it('keeps a hand-over that says someone will call the end user when the assistant then arranges the call or fails on a new message (signals-v96)', async () => {
    // Issue 32 (sig25): fresh29 haystraw-02's and petsitter-02's shapes, in other words.
    const passedOn =
      "I'm sorry about that. I've passed this to Jo, our yard supervisor, with your order. She'll ring you today to arrange a replacement load."
    const scored = await cuesOfOne('assistant', passedOn)
    expect(scored!.cues.handoverUnits!.some((u) => u.contacts === true)).toBe(true)
    const opening: Turn = [
      'user',
      "the logs you delivered on friday are damp, they hiss in the stove and won't catch",
    ]
    const arranged: Turn[] = [
      ['user', 'ok after 5 please, im at work until then'],
      ['assistant', "Noted: I've asked Jo to call after 5pm."],
    ]
    const arrangedCues = await cuesOfOne('assistant', arranged[1]![1])
    expect(handoverSaid(arrangedCues!.cues)).toBeUndefined()
    expect(await signals(opening, ['assistant', passedOn], ...arranged)).toContain('escalation')
    expect(
      await signals(
        opening,
        ['assistant', passedOn],
        ['user', "i'm out tonight, who is stacking the new load??"],
        ['assistant', "Sorry, I didn't get that."],
      ),
    ).toContain('escalation')
  }, 60_000)

  it('reads a contact as a hand-over after the assistant asked again for the same detail, or after an offer in a message that failed; the same after an answer, or after an offer that did not fail, as none (signals-v91)', async () => {
    // Issue 32 (res12): fresh27 kilnrepair-02's and forge-01's shapes, in other words.
    const passedOn = 'Thanks, I can see order OV-5521. Our service desk will ring you to arrange a visit.'
    const scored = await cuesOfOne('assistant', passedOn)
    const contact = scored!.cues.handoverUnits!.filter((u) => u.contacts === true)
    expect(contact.length).toBeGreaterThan(0)
    expect(Math.max(...contact.map((u) => u.head))).toBeLessThan(THRESHOLDS.handoverContactHead)
    const opening: Turn = [
      'user',
      'the door seal you fitted on my oven on monday is already letting heat out',
    ]
    const asks: Turn = ['assistant', 'Sorry to hear that. Could you tell me your order number?']
    expect(
      await signals(
        opening,
        asks,
        ['user', 'OV-5521'],
        ['assistant', 'Thanks. Could you tell me your order number? It starts with OV.'],
        ['user', 'OV-5521. I just gave it'],
        ['assistant', passedOn],
      ),
    ).toContain('escalation')
    expect(await signals(opening, asks, ['user', 'OV-5521'], ['assistant', passedOn])).not.toContain(
      'escalation',
    )
    // An offer of the service desk in a message that failed, accepted, then the desk will ring: v33 took it back as an
    // offer carried out; the same after an offer that did not fail still is.
    const done = 'Done. Our service desk will ring you to arrange a time.'
    const yes: Turn = ['user', 'yes please']
    expect(
      await signals(
        opening,
        [
          'assistant',
          "I'm not able to arrange repairs here. Would you like me to pass this to our service desk?",
        ],
        yes,
        ['assistant', done],
      ),
    ).toContain('escalation')
    expect(
      await signals(
        opening,
        ['assistant', 'The seal is covered by our 12-month warranty. Shall I arrange a replacement?'],
        yes,
        ['assistant', done],
      ),
    ).not.toContain('escalation')
  }, 60_000)

  it('reads no resolution in a last word that says what the end user will do next without a thanks; a thanks, or a confirmation the anchors read clearly, still resolves (signals-v92)', async () => {
    // Issue 32 (res12): fresh27's plans after an answer ("ok thats fine, ill book online", "perfect, booking now 😊"),
    // in other words: v31's closing gate and the anchors' margin read them as closings.
    const asked: Turn = ['user', 'do you sell replacement strings for a 3/4 cello?']
    const answer: Turn = ['assistant', "Yes, we stock Larsen and D'Addario sets for 3/4 cellos, from £85."]
    for (const plan of ['ok cool, ringing the shop now', 'sounds good, will book it online later']) {
      expect((await cuesOfOne('user', plan))!.cues.plans).toBe(true)
      expect(await signals(asked, answer, ['user', plan]), plan).not.toContain('resolution')
    }
    expect(await signals(asked, answer, ['user', 'great, ordering now. thanks!'])).toContain('resolution')
    // "working now" is read as a plan too (an -ing verb and "now"), and the anchors read the confirmation clearly.
    expect(
      await signals(
        ['user', 'my router keeps dropping the connection'],
        ['assistant', 'Please restart it by holding the reset button for 10 seconds.'],
        ['user', 'done, working now 👍'],
      ),
    ).toContain('resolution')
  }, 60_000)

  it('reads no handover in an offer near no handover phrase at all', async () => {
    // signals-v11: the offer lies under 0.3 to every handover anchor, its margin over the answers (0.10)
    // noise between two distant sets; v11's first commits read a handover, and escalation.
    expect(
      await signals(
        ['user', 'my dog has arthritis, can you pause his treats subscription?'],
        [
          'assistant',
          'Done, the subscription is paused. Should your vet recommend a joint supplement, we have a few; would you like to see them?',
        ],
        ['user', 'no thanks'],
      ),
    ).not.toContain('escalation')
  })

  it('reads no handover in an answer the assistant goes on from, and one in a clear handover the person takes up', async () => {
    // "The spa team will be happy to help you" reads as a weak handover (margin 0.13); the assistant then
    // answers on: nothing was handed over (signals-v9 read escalation).
    expect(
      await signals(
        ['user', 'is the spa open on Sunday?'],
        ['assistant', 'It is, from 10 to 6. The spa team will be happy to help you book a treatment there.'],
        ['user', 'how much is a massage?'],
        ['assistant', 'A 50-minute massage is 65.'],
      ),
    ).not.toContain('escalation')
    // A clear handover stands though the person who takes over greets in words no anchor reads.
    expect(
      await signals(
        ['user', 'my direct debit was taken twice this month'],
        ['assistant', "I'm handing you over to our billing team now."],
        ['user', 'ok'],
        ['assistant', 'Hello, Jonas from billing here, I have your account open.'],
        ['user', 'great, it was on the 3rd'],
        ['assistant', 'I can see both payments; the second one is refunded now.'],
      ),
    ).toContain('escalation')
    // A person named in a report asks for no one.
    expect(
      await signals(
        ['user', 'a man from your company called me yesterday about my contract'],
        ['assistant', 'We do call customers about renewals. Your contract runs until March.'],
      ),
    ).not.toContain('escalation')
  })

  it('reads a request asked again in quite other words, ignoring the answer, as repetition; two questions as none', async () => {
    // Cosine 0.47 (under repetitionNearest), 0.12 to the answer between: signals-v9 read none.
    expect(
      await signals(
        ['user', 'how many loyalty points have I got?'],
        ['assistant', 'Delivery is free on orders over 30 pounds.'],
        ['user', 'what is my current rewards balance?'],
      ),
    ).toContain('repetition')
    expect(
      await signals(
        ['user', 'how many loyalty points have I got?'],
        ['assistant', 'You have 340 points.'],
        ['user', 'can I spend points on delivery fees?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a question asked again after a poor answer, saying so, as repetition; saying so of a new question as none', async () => {
    // signals-v11: the end user says it asks again (the re-ask cue, 0.28) of a request 0.39 similar to the
    // earlier one, the answer between nearer it (0.44): v10 read no repetition.
    expect(
      await signals(
        ['user', 'why was I charged twice for my gym membership?'],
        ['assistant', 'Memberships are billed on the 1st of each month.'],
        ['user', "you haven't answered me. there are two payments this month"],
      ),
    ).toContain('repetition')
    // Said of a request unlike the earlier one (0.31): no repetition.
    expect(
      await signals(
        ['user', 'why was I charged twice for my gym membership?'],
        ['assistant', 'Memberships are billed on the 1st of each month.'],
        ['user', "that's not what I asked about, but ok. how do I freeze my membership for a month?"],
      ),
    ).not.toContain('repetition')
  })

  it('reads a question asked again after an answer beside the point, saying so in so many words, as repetition; two different questions as none (signals-v17)', async () => {
    // 0.35 similar to the earlier question, under every gate but repetitionMarked's, its re-ask anchors'
    // margin below 0: signals-v16 read none. "Right, but…" grants the answer and contests it.
    expect(
      await signals(
        ['user', 'how many days notice do I need to give to end my lease?'],
        ['assistant', 'You can end your lease by writing to the letting office.'],
        ['user', 'Right, but how much notice?'],
      ),
    ).toContain('repetition')
    // The question answered, then another one: no repetition.
    expect(
      await signals(
        ['user', 'how many days notice do I need to give to end my lease?'],
        ['assistant', 'Two months, in writing to the letting office.'],
        ['user', 'do you charge a fee for ending it early?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a sarcastic complaint about the chat put wholly as a statement as no request for a person; the complaint beside one as escalation (signals-v70)', async () => {
    // Regression: "So a chat that can't tell me anything. Marvellous." after a failure (fresh19 referencing-02) was
    // read as a request for a person: "can't" read as a modal of asking, so v26's after-failure path and v65's margin
    // past the complaints read the whole message, which the head reads as asking for a person.
    const asked: Turn = ['user', 'The screen on the tablet I ordered arrived cracked. What do I do?']
    const failed: Turn = ['assistant', "Sorry, I can't help with that here."]
    const answered: Turn = [
      'assistant',
      'You can return it from Your Orders within 30 days for a replacement.',
    ]
    const sarcasm: Turn = ['user', "A support chat that can't tell me a single thing. Great."]
    const failure = await signals(asked, failed, sarcasm)
    expect(failure).toContain('bot_failure')
    expect(failure).not.toContain('escalation')
    expect(await signals(asked, answered, sarcasm)).not.toContain('escalation')
    // The complaint beside a request for a person is escalation, as signals-v65 reads it.
    expect(
      await signals(asked, failed, [
        'user',
        "A support chat that can't tell me a single thing, get me a person",
      ]),
    ).toContain('escalation')
  })

  it("reads a denial of a question's premise that goes on past its first sentence as repetition; a one-sentence answer as none (signals-v69)", async () => {
    // Regression: "Not lost. The security … take it … I want refund." to "Would you like to make a claim for a lost
    // item?" (fresh19 dutyfree-01): after a question v38 read every denial as its answer.
    const asked: Turn = [
      'user',
      'I bought a kettle from your shop last week and the handle came off the first time I used it. I want my money back.',
    ]
    const question: Turn = [
      'assistant',
      "Sorry to hear that! Accidental damage isn't covered by the warranty. Would you like to report a dropped item?",
    ]
    expect(
      await signals(asked, question, [
        'user',
        'Not dropped. The handle came off the first time I lifted it. I want a refund.',
      ]),
    ).toContain('repetition')
    expect(await signals(asked, question, ['user', 'no thanks, I want a refund'])).not.toContain('repetition')
  })

  it('reads a correction opening on a plural denial of the answer as repetition, as the singular (signals-v68)', async () => {
    // Regression: "We did not miss it. The guide did not come." (fresh19 walkingtour-02) was read only in the singular.
    const asked: Turn = [
      'user',
      'The hotel charged us for a minibar we never used, room 214. Please take the 38 pounds off our bill.',
    ]
    const answer: Turn = [
      'assistant',
      'Minibar items are charged when they are removed from the fridge, as the sensors record it.',
    ]
    expect(
      await signals(asked, answer, ['user', "We haven't touched the minibar. Nothing was taken out of it."]),
    ).toContain('repetition')
    expect(
      await signals(asked, answer, ['user', "I haven't touched the minibar. Nothing was taken out of it."]),
    ).toContain('repetition')
  })

  it('reads a request asked again opening on a denial of the answer as repetition; a denial that asks something new as none (signals-v38)', async () => {
    // 0.40 similar to the first request and nearer the answer (0.43): signals-v37 read a follow-up. "No, I do
    // not need…" sets the answer aside after it asked nothing.
    expect(
      await signals(
        ['user', 'the hoodie I ordered came in a medium but I ordered a large'],
        ['assistant', 'Our hoodies run true to size. You can find the size guide on each product page.'],
        ['user', 'no, I do not need the size guide. you sent the wrong size and I need a large'],
      ),
    ).toContain('repetition')
    // The answer served the request; the denial asks for another day (−0.01 to the first request).
    expect(
      await signals(
        ['user', 'the hoodie I ordered came in a medium but I ordered a large'],
        [
          'assistant',
          'Sorry about that! I have booked a free exchange, a courier will collect the medium on Monday.',
        ],
        ['user', 'no, not monday, I am at work. can it be saturday'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a denial of the answer from repetitionContests as repetition; a denial that asks something new under it as none (signals-v49)', async () => {
    // 0.335 similar to the first report and nearer the answer (0.544): signals-v48 read a follow-up (the
    // denial needed repetitionAsked, 0.35). It sets aside an answer beside the point and tells the fault again.
    expect(
      await signals(
        ['user', 'my new kettle leaks from the bottom'],
        [
          'assistant',
          'Our kettles hold 1.7 litres and boil in under three minutes. Descaling every month keeps them working well.',
        ],
        ['user', 'i dont care how fast it boils. water comes out underneath when i fill it'],
      ),
    ).toContain('repetition')
    // A denial that asks for something else, 0.256 similar to the first report: under repetitionContests.
    expect(
      await signals(
        ['user', 'my parcel says delivered but it is not here'],
        [
          'assistant',
          'Parcels marked as delivered may have been left in a safe place or with a neighbour. Check your delivery notes for a photo.',
        ],
        ['user', 'no, i have no garden shed. can you deliver my other order to my work address instead'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a request opening on a thanks as building on the answer; a thanks followed by "but" as asking again (signals-v52)', async () => {
    // 0.529 similar to the first request, 0.303 to the answer: signals-v51 read it as ignoring the answer (the
    // margin tier). Its first sentence lies nearest a thanks among the social anchors: it takes the answer and asks on.
    expect(
      await signals(
        ['user', 'do you deliver to scotland?'],
        ['assistant', 'Yes, we ship everywhere on the UK mainland, Highlands included.'],
        ['user', 'thanks! also, do you deliver on sundays?'],
      ),
    ).not.toContain('repetition')
    // After an answer beside the point, a thanks that goes on with "but" sets it aside and asks again: 0.439
    // and 0.045, repetition by the same tier (without the "but" test it would read as building on the answer).
    const offPoint = [
      ['user', 'can my order be left with a neighbour if im out?'],
      ['assistant', 'Our sourdough is baked fresh every morning with organic flour.'],
    ] as const
    expect(await signals(...offPoint, ['user', 'thanks, but can it be left next door'])).toContain(
      'repetition',
    )
    expect(
      await signals(...offPoint, ['user', "thanks, but that's not what I asked. can it be left next door?"]),
    ).toContain('repetition')
  })

  it('reads a consequence drawn from a failed answer as no repetition, the report told again as one (signals-v39)', async () => {
    // 0.39 similar to the first report and far from the answer (margin 0.41): signals-v38 read it as asked
    // again. Its closing "then" takes the answer as given.
    expect(
      await signals(
        ['user', 'my broadband keeps dropping out every evening'],
        [
          'assistant',
          'Sorry, I can not run line tests from here. An engineer visit can be booked on our website.',
        ],
        ['user', 'so i just wait for it to drop out again then'],
      ),
    ).not.toContain('repetition')
    expect(
      await signals(
        ['user', 'my broadband keeps dropping out every evening'],
        [
          'assistant',
          'Sorry, I can not run line tests from here. An engineer visit can be booked on our website.',
        ],
        ['user', 'it keeps dropping out every evening, what is wrong with it'],
      ),
    ).toContain('repetition')
  })

  it('reads the bot asking again for the detail it named, in other words, as repetition; a new detail asked for as none (signals-v40)', async () => {
    // The two asks lie under botAsksAgain as whole messages (signals-v39 read none); both name "your customer
    // reference".
    expect(
      await signals(
        ['user', 'I need a copy of my gas safety certificate for my landlord'],
        ['assistant', 'Of course! What is your customer reference?'],
        ['user', 'its under Priya Shah, 14 Elm Road'],
        [
          'assistant',
          'To send the certificate I will need your customer reference. You will find it at the top of any email from us.',
        ],
      ),
    ).toContain('repetition')
    expect(
      await signals(
        ['user', 'I need a copy of my gas safety certificate for my landlord'],
        ['assistant', 'Of course! What is your customer reference?'],
        ['user', 'CR-20417'],
        ['assistant', 'Thanks! Which email address should I send it to?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads no repetition in the assistant checking a detail it was given, nor in it asking for another (signals-v41)', async () => {
    // Each second ask names what the first asked for, and states the value the end user gave (cues.ts,
    // statesValueOf); the booking reference and the postcode also lie over botAsksAgain (0.83, 0.71):
    // signals-v40 read every one but "Got it: order 1234." as repetition.
    // email confirmed
    expect(
      await signals(
        ['user', 'I want to change the delivery address on my order'],
        ['assistant', 'Sure, what is your email address?'],
        ['user', 'sam.jones@example.com'],
        ['assistant', 'Thanks, I have your email address as sam.jones@example.com, is that right?'],
      ),
    ).not.toContain('repetition')
    // booking ref confirmed
    expect(
      await signals(
        ['user', 'can I add a bag to my flight'],
        ['assistant', 'Happy to help. What is your booking reference?'],
        ['user', 'BK7781'],
        ['assistant', 'Thanks! Just to check, is your booking reference BK7781?'],
      ),
    ).not.toContain('repetition')
    // got it, order
    expect(
      await signals(
        ['user', 'where is my parcel'],
        ['assistant', 'Could you give me your order number?'],
        ['user', '1234'],
        ['assistant', 'Got it: order 1234. Let me check.'],
      ),
    ).not.toContain('repetition')
    //  got it your order number is
    expect(
      await signals(
        ['user', 'where is my parcel'],
        ['assistant', 'Could you give me your order number?'],
        ['user', '1234'],
        ['assistant', 'Got it, your order number is 1234. Shall I look it up now?'],
      ),
    ).not.toContain('repetition')
    // full name confirmed
    expect(
      await signals(
        ['user', 'I need to book a blood test'],
        ['assistant', 'Of course. Can I take your full name?'],
        ['user', 'Priya Shah'],
        ['assistant', 'Thanks Priya. Can I confirm your full name is Priya Shah?'],
      ),
    ).not.toContain('repetition')
    // postcode confirmed
    expect(
      await signals(
        ['user', 'do you deliver to my area'],
        ['assistant', 'Let me check. What is your postcode?'],
        ['user', 'LS6 2AB'],
        ['assistant', 'So your postcode is LS6 2AB, is that correct?'],
      ),
    ).not.toContain('repetition')
    // Another detail asked for: "date of" no longer names a date of birth and a date of payment alike.
    // date of birth / date of payment
    expect(
      await signals(
        ['user', 'I lost my debit card'],
        ['assistant', "I'm sorry to hear that. To check it's you, what is your date of birth?"],
        ['user', '12 March 1985'],
        ['assistant', 'Thank you. And what was the date of the last payment you recognise?'],
      ),
    ).not.toContain('repetition')
    // account number then meter reading
    expect(
      await signals(
        ['user', 'I want to submit a meter reading'],
        ['assistant', 'What is your account number?'],
        ['user', 'ACC-55812'],
        ['assistant', 'Thanks. What is the meter reading on your display?'],
      ),
    ).not.toContain('repetition')
    // phone number / phone model
    expect(
      await signals(
        ['user', 'my phone keeps restarting'],
        ['assistant', 'Sorry about that. What is your phone number?'],
        ['user', '07700 900123'],
        ['assistant', 'Thanks. And what is your phone model?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads an impatient question ending on "then", asked in the form of the request the answer missed, as repetition (signals-v41)', async () => {
    // 0.50, 0.33, 0.28 similar to the first request: signals-v39 read a consequence drawn from the answer.
    // sofa when then
    expect(
      await signals(
        ['user', 'when will my new sofa be delivered?'],
        ['assistant', 'All our sofas come with a 10 year frame guarantee.'],
        ['user', 'so when is it coming then?'],
      ),
    ).toContain('repetition')
    // late checkout how much then
    expect(
      await signals(
        ['user', 'how much is a late checkout?'],
        ['assistant', 'Checkout is at 11am. You can leave your bags at reception.'],
        ['user', 'so how much is it then?'],
      ),
    ).toContain('repetition')
    // passport where then
    expect(
      await signals(
        ['user', 'where do I send my passport renewal form?'],
        ['assistant', 'Renewals usually take around six weeks.'],
        ['user', 'right, so where do I post it then?'],
      ),
    ).toContain('repetition')
    // refund when then
    expect(
      await signals(
        ['user', 'when will I get my refund for the cancelled flight?'],
        ['assistant', 'You can rebook onto any flight within 12 months at no extra cost.'],
        ['user', 'and when do I get my money back then?'],
      ),
    ).toContain('repetition')
    // The same form after an answer that served the request: a new question, none (0.33 to 0.48 similar).
    // return ticket
    expect(
      await signals(
        ['user', 'how much is a single ticket?'],
        ['assistant', 'A single ticket is \u00a34.50, valid all day.'],
        ['user', 'how much is a return then?'],
      ),
    ).not.toContain('repetition')
    // sale end
    expect(
      await signals(
        ['user', 'when does the sale start?'],
        ['assistant', 'The winter sale starts on Friday at 9am, online and in store.'],
        ['user', 'so when does it end then?'],
      ),
    ).not.toContain('repetition')
    // dog inside
    expect(
      await signals(
        ['user', 'can I bring my dog to the cafe?'],
        ['assistant', 'Dogs are welcome on the terrace but not inside, except assistance dogs.'],
        ['user', 'ok can I bring him on the terrace then?'],
      ),
    ).not.toContain('repetition')
    // park
    expect(
      await signals(
        ['user', 'where is your nearest store?'],
        ['assistant', 'Our nearest store to you is on King Street, Leeds, next to the station.'],
        ['user', 'where do I park then?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a consequence drawn from the answer with "then" as no repetition (signals-v39, v41)', async () => {
    // wait then
    expect(
      await signals(
        ['user', "my parcel still hasn't arrived"],
        ['assistant', 'Deliveries are running up to 3 days late this week because of the strikes.'],
        ['user', 'so I just wait then'],
      ),
    ).not.toContain('repetition')
    // call tomorrow then
    expect(
      await signals(
        ['user', 'can you change my appointment with the gas engineer?'],
        ['assistant', "I can't change appointments in chat. The bookings line opens at 8am on 0800 123 456."],
        ['user', "I'll call them tomorrow then"],
      ),
    ).not.toContain('repetition')
    // check shop then
    expect(
      await signals(
        ['user', 'is the blue jacket in stock in medium?'],
        ['assistant', 'The blue jacket in medium is sold out online, but some of our stores still have it.'],
        ['user', "ok I'll check the shop then"],
      ),
    ).not.toContain('repetition')
    // try that then
    expect(
      await signals(
        ['user', 'how do I reset my router?'],
        ['assistant', 'Hold the reset button for 10 seconds until the lights flash.'],
        ['user', "fine, I'll try that then"],
      ),
    ).not.toContain('repetition')
    // lost money then
    expect(
      await signals(
        ['user', 'can I get a refund for the concert tickets?'],
        ['assistant', 'Tickets are refundable only if the event is cancelled.'],
        ['user', "so I've lost the money then"],
      ),
    ).not.toContain('repetition')
    // pay by card then
    expect(
      await signals(
        ['user', 'can I pay by bank transfer?'],
        ['assistant', 'We take card payments only, online or over the phone.'],
        ['user', "ok I'll pay by card then"],
      ),
    ).not.toContain('repetition')
  })

  it('reads the next question in the form of a request the answer served as no repetition; the request the answer missed, asked again, as repetition (signals-v45)', async () => {
    // Regression: the same form carries the cosine ("what time do you open on saturday?", "We open at 9am on
    // Saturdays.", "what time do you close then?", 0.67), signals-v42 read each of these as asking again.
    const next: Turn[][] = [
      [
        ['user', 'what time does the library open on weekdays?'],
        ['assistant', 'The library opens at 8:30am Monday to Friday.'],
        ['user', 'what time does it close on weekdays?'],
      ],
      [
        ['user', 'is there a charge for paying my council tax by debit card?'],
        ['assistant', "There's no charge for paying your council tax by debit card."],
        ['user', 'is there a charge for paying by cheque?'],
      ],
      [
        ['user', 'how long is the warranty on the washing machine?'],
        ['assistant', 'The washing machine comes with a 2 year warranty.'],
        ['user', 'how long is the warranty on the dryer?'],
      ],
      [
        ['user', 'do you ship to Norway?'],
        ['assistant', 'Yes, we ship to Norway; orders arrive in 4-6 working days.'],
        ['user', 'do you ship to Iceland?'],
      ],
    ]
    for (const turns of next) expect(await signals(...turns)).not.toContain('repetition')
    const again: Turn[][] = [
      // The answer gave another item's value, or passed the request over: asked again.
      [
        ['user', 'what time does the library close on weekdays?'],
        ['assistant', 'The library opens at 8:30am Monday to Friday.'],
        ['user', 'ok but what time does it close?'],
      ],
      [
        ['user', 'how long is the warranty on the dryer?'],
        ['assistant', 'The washing machine comes with a 2 year warranty.'],
        ['user', 'and the dryer?'],
      ],
      [
        ['user', 'do you ship to Iceland?'],
        ['assistant', 'We ship to most countries in Europe, see our shipping page.'],
        ['user', 'so do you ship to Iceland or not?'],
      ],
      [
        ['user', 'is there a charge for paying by cheque?'],
        ['assistant', 'Sorry, I did not understand. Could you rephrase that?'],
        ['user', 'do you charge a fee if I pay with a cheque?'],
      ],
    ]
    for (const turns of again) expect(await signals(...turns)).toContain('repetition')
  })

  it('reads the part of a two-part request the answer passed over, asked again after an acknowledgement, as repetition; a new question so asked as none (signals-v74)', async () => {
    // Written for the test (fresh21 brewery-01's form): the answer serves the first part only, and the follow-up's
    // "Perfect." keeps the message from being made only of the earlier request's words (v45).
    const first: Turn = [
      'user',
      'Hi, can I move my dental check-up on Friday to the afternoon? Also wondering whether you take card payments at reception',
    ]
    const moved: Turn = ['assistant', 'Done: your check-up is now on Friday at 2:30pm with Dr Shah.']
    expect(await signals(first, moved, ['user', 'Perfect. And card payments?'])).toContain('repetition')
    expect(await signals(first, moved, ['user', 'Perfect. And is there parking nearby?'])).not.toContain(
      'repetition',
    )
  })

  it('reads an ironic opening the frustration head hears, then the request again, as repetition; a sincere thanks then a new question as none (signals-v75)', async () => {
    // Written for the test (fresh21 farmpark-02's form): the social anchors take "How lovely." for a thanks (v52); the
    // frustration head reads the whole 0.89. Cos 0.48 to the request, 0.27 to the upsell: the margin tier's.
    const first: Turn = [
      'user',
      'Hello. My season ticket was charged twice this month, £45 each time. Could I have the second £45 refunded?',
    ]
    const upsell: Turn = [
      'assistant',
      'Great news: season ticket holders get 15% off all food and drink at the stadium!',
    ]
    expect(
      await signals(first, upsell, ['user', 'How lovely. Now, about the £45 you took twice?']),
    ).toContain('repetition')
    expect(
      await signals(
        first,
        ['assistant', "I've refunded the second £45; it will reach your card in 3 to 5 days."],
        ['user', 'Lovely, thank you. Can I bring a guest on Saturday?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a doubled question mark once the bot has missed as frustration, the same words with one mark as none (signals-v78)', async () => {
    // Written for the test. After a platform fallback the reply is read as frustration with "??" whatever the heads say.
    const asked: Turn = ['user', 'Does my policy cover a cracked phone screen?']
    const missed: Turn = ['assistant', "Sorry, I didn't understand that. Could you rephrase?"]
    expect(await signals(asked, missed, ['user', 'cracked screen. covered or not??'])).toContain(
      'frustration',
    )
    expect(await signals(asked, missed, ['user', 'cracked screen. covered or not?'])).not.toContain(
      'frustration',
    )
    // Written again with no reply between, after the assistant has spoken: "hello??" in a queue.
    const queued: Turn[] = [
      ['user', 'I need to change the name on my booking.'],
      ['assistant', 'Connecting you to an agent. Please wait.'],
      ['user', 'I am still here'],
    ]
    expect(await signals(...queued, ['user', 'hello??'])).toContain('frustration')
    expect(await signals(...queued, ['user', 'hello?'])).not.toContain('frustration')
  })

  it("reads a calm reply's lone sure sentence as no frustration by the reply's looser gate (signals-v79)", async () => {
    // Written for the test: the head reads the reply 0.04 as a whole and "how long does it take?" 0.91 at −0.089,
    // within the reply's sure gate (frustrationReplySure, its margin): v78 read frustration. A deadline told plainly.
    const turns: Turn[] = [
      ['user', 'Has my passport application been received?'],
      ['assistant', 'Yes, we received it on 3 March and it is being processed.'],
      ['user', 'sent. how long does it take? I need it before the 20th'],
    ]
    const reply = await cuesOfOne('user', turns[2]![1])
    const units = reply!.cues.frustrationUnits!
    expect(units[0]!.head).toBeLessThan(THRESHOLDS.emotionFrustration)
    expect(
      units.some(
        (u, k) =>
          k > 0 &&
          u.head >= THRESHOLDS.frustrationReplySure &&
          u.margin >= THRESHOLDS.frustrationReplySureMargin,
      ),
    ).toBe(true)
    expect(await signals(...turns)).not.toContain('frustration')
  })

  it("reads a reply that answers the assistant's question by the first report's plain gate (signals-v83)", async () => {
    // Written for the test: "Would yourselves be providing the spray decks, or is that on us?" reads 0.675 at +0.017,
    // within a reply's plain gate (emotionFrustration, frustrationReply): v82 read frustration. An answer, and a question.
    const booked: Turn = ['user', 'I would like to book a sea kayak trip for two on Saturday.']
    const asked: Turn = [
      'assistant',
      'Saturday is available: £90 for two, all kit included. Have you both paddled before?',
    ]
    const answer: Turn = ['user', 'Yes. Would yourselves be providing the spray decks, or is that on us?']
    expect((await cuesOfOne('assistant', asked[1]))!.cues.asks).toBe(true)
    const units = (await cuesOfOne('user', answer[1]))!.cues.frustrationUnits!
    expect(
      units.some(
        (u) =>
          u.head >= THRESHOLDS.emotionFrustration &&
          u.margin >= THRESHOLDS.frustrationReply &&
          u.margin < THRESHOLDS.frustrationFirst,
      ),
    ).toBe(true)
    expect(await signals(booked, asked, answer)).not.toContain('frustration')
  })

  it('reads a reply that thanks within itself as no frustration, the sentence alone as frustration, a sarcastic thanks the head hears as frustration (signals-v76)', async () => {
    // Written for the test: the gratitude head reads the reply 0.98, the frustration head the whole 0.14 and "I feel
    // like such an idiot." 0.88 at +0.17 (a reply's plain gate: v75 read frustration). A self-blame, thanked for.
    const scam: Turn = [
      'user',
      'A man rang pretending to be from your fraud team and I read him the code from my text. £420 has gone from my account.',
    ]
    const helped: Turn = [
      'assistant',
      "I'm very sorry. I've blocked your card and our fraud team will call you within the hour to start a claim.",
    ]
    const thanked = await signals(scam, helped, ['user', 'Thank you so much. I feel like such an idiot.'])
    expect(thanked).not.toContain('frustration')
    expect(thanked).toContain('resolution')
    expect(await signals(scam, helped, ['user', 'I feel like such an idiot.'])).toContain('frustration')
    // "Thanks for nothing. …": gratitude 0.99, the whole 0.85 by the frustration head, its gates kept.
    expect(
      await signals(
        ['user', 'Where is my refund for order 5521? You said it was sent on Monday.'],
        ['assistant', 'Refunds are processed within 5 working days of approval.'],
        ['user', "Thanks for nothing. Third time I've asked and still no answer about my money."],
        ['assistant', 'Is there anything else I can help with?'],
      ),
    ).toContain('frustration')
  })

  it('reads a request asked again after the bot said it cannot help as repetition; another question after it as none (signals-v22)', async () => {
    // 0.33 similar to the first request (under repetitionAsked: signals-v21 read none), 0.01 to the reply.
    expect(
      await signals(
        [
          'user',
          'my boiler makes a loud banging noise whenever the heating comes on, can someone look at it',
        ],
        ['assistant', 'Sorry, I can only help with booking annual services.'],
        ['user', 'it bangs every morning. can an engineer come this week?'],
      ),
    ).toEqual(['bot_failure', 'repetition'])
    // Another question of the same domain after a failure: 0.18 similar.
    expect(
      await signals(
        [
          'user',
          'my boiler makes a loud banging noise whenever the heating comes on, can someone look at it',
        ],
        ['assistant', 'Sorry, I can only help with booking annual services.'],
        ['user', 'ok. do you also fit smart thermostats?'],
      ),
    ).toEqual(['bot_failure'])
    // 0.33 similar, but 0.20 to the failure reply (margin 0.14): a new question about the same gym.
    expect(
      await signals(
        ['user', 'can I swap my gym membership to the off-peak plan'],
        ['assistant', 'I am not able to change memberships in this chat.'],
        ['user', 'do you have a sauna at the city centre branch?'],
      ),
    ).toEqual(['bot_failure'])
  })

  it('reads a question asked again after an answer that did not answer it as repetition; another question of the domain as none (signals-v29)', async () => {
    const fob = 'how much is a replacement key fob for my car'
    const answer = 'We stock genuine fobs for all current models, programmed in our workshop.'
    // 0.32 similar to the first request (under repetitionAsked: signals-v28 read none), 0.07 to the answer:
    // the price asked again, the answer having given none.
    expect(
      await signals(['user', fob], ['assistant', answer], ['user', 'ok, what would that cost me?']),
    ).toEqual(['repetition'])
    // Another question of the same garage: 0.03 similar.
    expect(
      await signals(['user', fob], ['assistant', answer], ['user', 'do you do wheel alignment too?']),
    ).toEqual([])
  })

  it('reads a menu re-shown after an answer as repetition, another question after it as none', async () => {
    const menu = 'Please pick a topic: Orders, Returns, Payments or Account.'
    expect(
      await signals(
        ['user', 'hi there'],
        ['assistant', menu],
        ['user', 'Orders'],
        ['assistant', `Your last order left our warehouse on Monday. ${menu}`],
      ),
    ).toContain('repetition')
    expect(
      await signals(
        ['user', 'hi there'],
        ['assistant', menu],
        ['user', 'Orders'],
        ['assistant', 'Your last order left our warehouse on Monday. Is there anything else about it?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads the bot saying its answer again as no repetition when the end user asked it to, as one when not', async () => {
    const hours = 'On Saturdays we are open from 9am to 4pm, and the café closes at 3pm.'
    expect(
      await signals(
        ['user', 'what are your opening hours on Saturday?'],
        ['assistant', hours],
        ['user', 'sorry, can you repeat that please?'],
        ['assistant', hours],
      ),
    ).not.toContain('repetition')
    expect(
      await signals(
        ['user', 'what are your opening hours on Saturday?'],
        ['assistant', hours],
        ['user', 'I asked about Sunday actually'],
        ['assistant', hours],
      ),
    ).toContain('repetition')
  })

  it("reads the bot's request for more detail as no failure, and its not understanding as one", async () => {
    expect(
      await signals(
        ['user', 'my heating is acting weird'],
        ['assistant', 'Could you tell me a bit more about what is happening?'],
      ),
    ).not.toContain('bot_failure')
    expect(
      await signals(
        ['user', 'What is the warranty on refurbished laptops?'],
        ['assistant', "I'm not sure I understand."],
      ),
    ).toContain('bot_failure')
  })

  it("reads a platform's default fallback, and a failure said in the domain's words, as bot failure", async () => {
    expect(
      await signals(
        ['user', 'I want to move my dentist appointment'],
        ['assistant', "Sorry, I didn't get that. Can you say it again?"],
      ),
    ).toContain('bot_failure')
    expect(
      await signals(
        ['user', 'can I bring my bike on the night train?'],
        ['assistant', "Hmm, I didn't catch that. Could you put it another way?"],
      ),
    ).toContain('bot_failure')
    for (const failure of [
      "I'm unable to change seat assignments on partner airlines.",
      "I don't have access to your employer's pension records.",
      "Sorry, I'm not able to look up parcels sent with other couriers.",
    ]) {
      expect(
        await signals(['user', 'can you help me with this?'], ['assistant', failure]),
        failure,
      ).toContain('bot_failure')
    }
  })

  it("reads whatever the bot says it has not, and its scope said in a clause, as bot failure, abandoned when last; the company's stock as none (signals-v34)", async () => {
    for (const failure of [
      "Sorry, I don't have water temperatures for the outdoor pool.",
      "I'm afraid group discounts are outside what I can help with here.",
      "Choosing between the two frames isn't something I can advise on, I'm afraid.",
    ]) {
      const said = await settledSignals(
        ['user', 'quick question about my booking for saturday'],
        ['assistant', failure],
      )
      expect(said, failure).toContain('bot_failure')
      expect(said, failure).toContain('abandonment')
    }
    expect(
      await signals(
        ['user', 'is the rain jacket available in green?'],
        ['assistant', "We don't have it in green this season, but the olive one is in stock in every size."],
      ),
    ).not.toContain('bot_failure')
  })

  it('reads no bot failure, and no abandonment when last, in a hedge on what the assistant has just done (signals-v36)', async () => {
    const hedged = await settledSignals(
      ['user', 'can the delivery come after 2pm on friday? i work mornings'],
      [
        'assistant',
        "I've added a note asking the driver to come after 2pm. I can't guarantee it, but they do read the notes.",
      ],
    )
    expect(hedged).not.toContain('bot_failure')
    expect(hedged).not.toContain('abandonment')
  })

  it('reads no bot failure in an answer one short sentence of which lies near a failure phrase; a fallback that says no still fails (signals-v46)', async () => {
    // Before signals-v46 "Try these steps: 1." (0.094) and "We can do that!" (0.11), each nearer a failure
    // phrase than any answer on its own, made the answer a failure, and a bot failure last an abandonment.
    for (const answer of [
      'Try these steps: 1. Switch the kettle off at the wall. 2. Wait a minute and switch it back on.',
      'We can do that! A carpet clean is £40 per room. Which day suits you?',
    ]) {
      const read = await settledSignals(
        ['user', 'hi, quick question about my kettle and carpets'],
        ['assistant', answer],
      )
      expect(read, answer).not.toContain('bot_failure')
      expect(read, answer).not.toContain('abandonment')
    }
    // "Try different keywords." lies near a failure phrase (0.161) where the whole does not (0.055): the "no"
    // is said in the other sentence.
    expect(
      await settledSignals(
        ['user', 'do you sell oak shelf brackets'],
        ['assistant', "No results for 'oak shelf brackets'. Try different keywords."],
      ),
    ).toEqual(['bot_failure', 'abandonment'])
  })

  it("reads platforms' documented fallbacks and chatty ones as bot failure; a clarifying question as none (signals-v53)", async () => {
    // QnA Maker's documented default answer, and chatty fallbacks signals-v52 read as no failure: the adverb
    // between the negation and the verb, "beyond me", the bot's scope in the perfect.
    for (const fallback of [
      'No good match found in KB.',
      'Sorry, I didn’t quite follow that. Could you give me a bit more detail?',
      'Oops, that one is beyond me for now! Could you word it differently?',
      "Hmm, that's not something I've been trained on yet, sorry!",
      // signals-v55: the scope's clause with "I'm able to" (fresh15 stamps-01's form, another domain here).
      "Mapping drives isn't something I'm able to do, I'm afraid.",
    ]) {
      expect(
        await signals(['user', 'how do I map the shared drive on my mac'], ['assistant', fallback]),
        fallback,
      ).toContain('bot_failure')
    }
    // The README's convention: a bot that says it did not catch something fails, even as it asks again
    // ("Sorry, I didn't understand. Can you repeat that?" is both); a bare clarifying question does not.
    const order = ['user', 'where is my order? it was meant to come yesterday'] as const
    expect(
      await signals(order, ['assistant', "I didn't quite catch your order number, could you type it again?"]),
    ).toContain('bot_failure')
    expect(
      await signals(order, ['assistant', 'Could you tell me your order number? It starts with ORD.']),
    ).not.toContain('bot_failure')
  })

  it('does not read eagerness, a finding or an answer with an apology as bot failure', async () => {
    for (const answer of [
      "I can't wait to help! Your new router has been dispatched and arrives Thursday.",
      'I checked: there are no late fees on your account this year.',
      "I'm sorry about the wait. Your refund of 40 was sent to your card today.",
    ]) {
      expect(
        await signals(['user', 'what is happening with my account?'], ['assistant', answer]),
        answer,
      ).not.toContain('bot_failure')
    }
  })

  it('reads no bot failure in a troubleshooting answer that names the fault, nor in a question for a detail (signals-v13)', async () => {
    for (const [question, answer] of [
      [
        'my scooter will not charge, the screen says error 23',
        'Error 23 means the battery is overheating: let it cool down for an hour, then try charging again.',
      ],
      ['I want to swap my cinema tickets', 'Please tell me the name of the film and the showing time.'],
    ] as const) {
      expect(await signals(['user', question], ['assistant', answer]), answer).not.toContain('bot_failure')
    }
  })

  it("reads the bot's scope stated to say no, and no agent to hand over to, as bot failure; a referral to a doctor as no handover (signals-v13)", async () => {
    expect(
      await settledSignals(
        ['user', 'do you sell gift vouchers?'],
        ['assistant', 'Sorry, I can only help with questions about deliveries.'],
      ),
    ).toEqual(['bot_failure', 'abandonment'])
    expect(
      await signals(
        ['user', 'can I talk to a real person please'],
        ['assistant', 'There is nobody available to chat right now, sorry.'],
      ),
    ).toContain('bot_failure')
    // Pointing to a professional outside the company hands nothing over: the failure stands, unanswered.
    expect(
      await settledSignals(
        ['user', 'my cat chewed the lily you delivered, is that dangerous?'],
        ['assistant', "I'm not able to give veterinary advice. Please call your vet straight away."],
      ),
    ).toEqual(['bot_failure', 'abandonment'])
  })

  it('reads no resolution in a thanks that goes on to ask a question, whatever follows it, and abandons it unanswered (signals-v14)', async () => {
    const asks = await settledSignals(
      ['user', 'where do I find my invoice?'],
      ['assistant', 'Invoices are under Account > Billing.'],
      ['user', "found it, thanks! one more thing: can I change the billing address? it's an old one"],
    )
    expect(asks).not.toContain('resolution')
    expect(asks).toContain('abandonment')
    expect(
      await settledSignals(
        ['user', 'where do I find my invoice?'],
        ['assistant', 'Invoices are under Account > Billing.'],
        ['user', 'found it, thanks! have a good evening'],
      ),
    ).toEqual(['resolution'])
  })

  it('reads a plain request to cancel as no frustration, with or without a sad reason (signals-v15)', async () => {
    for (const request of [
      "please cancel my table for tonight, we can't make it",
      'We have to cancel our stay next weekend. Our cat died on Sunday.',
    ]) {
      expect(await signals(['user', request]), request).not.toContain('frustration')
    }
  })

  it('places a plain report of a visit to fix something nearer the reports than the frustration anchors (signals-v16)', async () => {
    // Without the learned head the anchors alone decide: at signals-v15 this lay at 0.118, frustration.
    const [scored] = await cuesOf(
      [
        {
          role: 'user',
          content:
            'The technician who came yesterday said he will have to come back to fix the door, it still sticks.',
        },
      ],
      anchors,
      analyzer.semantic.embedTexts,
    )
    expect(scored!.cues.frustration!).toBeLessThan(THRESHOLDS.frustration)
  })

  it('reads a request for a person made again after an answer beside the point as repetition (signals-v15)', async () => {
    // The two messages 0.29 similar (the first a long report): under every similarity gate of repetition.
    expect(
      await signals(
        [
          'user',
          'Hello. I ordered the oak dining table in October and it arrived yesterday with one leg snapped and a deep scratch across the top. We are hosting twelve people for a birthday on Saturday. Could someone from the store call me today?',
        ],
        ['assistant', 'You can read our returns policy at example.com/returns.'],
        ['user', 'That does not help. I need a person to phone me today please.'],
      ),
    ).toEqual(expect.arrayContaining(['escalation', 'repetition']))
  })

  it('reads no resolution in a sarcastic word on a failed turn, and reads a polite or a disappointed thanks as resolution (signals-v62)', async () => {
    const request = 'can you deliver to a PO box?'
    const failure = "Sorry, I don't have any information about that."
    // The gratitude head reads the literal warmth; the frustration head reads some frustration, short of
    // emotionFrustration, and no sadness: resolution before signals-v62.
    for (const sarcastic of ['cool. very useful', 'fab. really helpful that']) {
      const found = await signals(['user', request], ['assistant', failure], ['user', sarcastic])
      expect(found).toContain('bot_failure')
      expect(found).not.toContain('resolution')
    }
    // A polite thanks (the frustration head 0.003) and a disappointed one (0.24, sadness 0.64) stay resolution.
    for (const thanks of [
      "ok no problem, I'll ask the post office. thanks",
      "oh that's a pity. thanks for trying",
    ])
      expect(await signals(['user', request], ['assistant', failure], ['user', thanks])).toContain(
        'resolution',
      )
  }, 60_000)

  it('reads no repetition in a report of the answer carried out, put wholly as a statement; the same put as a question asks again (signals-v61)', async () => {
    const report = 'the garage door opener beeps and the door will not close'
    const answer =
      'Beeping usually means the safety sensors are misaligned. Wipe both sensor lenses and line them up so their lights are steady.'
    // 0.50 to the report, 0.25 to the answer: the margin tier (repetitionAsked, repetitionIgnores) read it as
    // asked again before signals-v61; it says what the end user did and what came of it.
    const done = 'wiped and lined them up, the garage door closes properly now'
    expect(await signals(['user', report], ['assistant', answer], ['user', done])).not.toContain('repetition')
    // A question there asks the report again.
    const asks = 'wiped and lined them up, why will the garage door still not close?'
    expect(await signals(['user', report], ['assistant', answer], ['user', asks])).toContain('repetition')
  }, 60_000)

  it('reads no repetition in a request for a person that restates the report, nor in a thanks put as a statement; the report asked again, or told again unresolved, still is (signals-v81)', async () => {
    const fee = 'Why was I charged a £30 late cancellation fee? I cancelled my pilates class two days before.'
    const terms =
      'Per Section 4.2 of the Membership Terms, cancellations made less than 72 hours before a class incur a late cancellation fee of thirty pounds (£30.00), which is non-refundable.'
    // 0.75 to the first request, just under the repetition tier: the report said again as the reason for a person.
    const manager =
      "Nobody told me I'd be charged a fee for cancelling my pilates class. Can I speak to the studio manager please"
    const asked = await signals(['user', fee], ['assistant', terms], ['user', manager])
    expect(asked).toContain('escalation')
    expect(asked).not.toContain('repetition')
    // The same report with the question asked again, and no person, is repetition.
    const again = 'Nobody told me about a 72 hour rule when I booked. Why was I charged?'
    expect(await signals(['user', fee], ['assistant', terms], ['user', again])).toContain('repetition')

    const pressure = 'my boiler pressure keeps dropping below 1 bar every morning, what should I do?'
    const topUp =
      'You can top it up using the filling loop under the boiler until the gauge reads 1.5 bar, then close both valves.'
    // 0.70 to the request, every unit a statement, the gratitude head 0.73 on the whole.
    const thanks =
      'thank you so much! topped the boiler up to 1.5 bar and the pressure is holding this morning'
    const thanked = await signals(['user', pressure], ['assistant', topUp], ['user', thanks])
    expect(thanked).toContain('resolution')
    expect(thanked).not.toContain('repetition')
    // The same report told again without the thanks, the fault still there, is repetition.
    const still = 'topped it up to 1.5 and the pressure is still dropping every morning'
    expect(await signals(['user', pressure], ['assistant', topUp], ['user', still])).toContain('repetition')
  }, 60_000)

  it('reads no repetition in a statement of what came of an answer that lies as near the request as it does; after an answer beside the point it restates the request (signals-v95)', async () => {
    const report = 'the kettle I bought from you switches itself off before the water boils'
    const answer =
      'A kettle that switches off before boiling usually has limescale on the element. Descale it with a sachet of citric acid and boil it twice.'
    // 0.68 to the report (the repetitionNearest tier), 0.50 to the answer, the answer 0.70 to the report: read as
    // asked again before signals-v95; it tells what came of the answer.
    const done = 'my husband did that yesterday and it still switches off before it boils'
    const scored = await cuesOfOne('user', done)
    expect(scored!.cues.escalationUnits!.every((u) => u.statement === true)).toBe(true)
    expect(await signals(['user', report], ['assistant', answer], ['user', done])).not.toContain('repetition')
    // After an answer beside the point (0.17 to the report) the same statement restates it.
    const sale = 'Our spring sale is on now, with up to 30% off toasters and coffee machines!'
    expect(await signals(['user', report], ['assistant', sale], ['user', done])).toContain('repetition')
  }, 60_000)

  it('reads a thanks before the part of a request the answer passed over as asking that part again; before a new question as taking the answer (signals-v99)', async () => {
    const roses = 'which of your roses are scented? and if i order 3 bare-root ones when will they be sent'
    const named =
      'Our most scented roses are Gertrude Jekyll, Munstead Wood and Lady Emma Hamilton, all rated 5 for fragrance.'
    // 0.51 to the request, 0.26 to the answer: the margin tier's, but the thanks opening read it as taking the answer.
    const thanksAndWhen = 'lovely. and when are they sent?'
    expect((await cuesOfOne('user', thanksAndWhen))!.cues.thanksFirst).toBe(true)
    expect(await signals(['user', roses], ['assistant', named], ['user', thanksAndWhen])).toContain(
      'repetition',
    )
    // A thanks before a new question takes the answer, as before (signals-v52).
    const thorns = 'lovely. and are they thornless?'
    expect(await signals(['user', roses], ['assistant', named], ['user', thorns])).not.toContain('repetition')
  }, 60_000)

  it('reads a statement that says it is asking, or names its question, after an answer beside the point as repetition (signals-v63)', async () => {
    const request = 'can we bring our dog to the cottage in june'
    const answer =
      'Our cottages sit in a beautiful valley with miles of walks from the door, perfect for a summer break!'
    // Put wholly as a statement (every unit), 0.52 to the request and 0.30 over the answer: signals-v61 read it as a
    // report of what the end user did, and no repetition; "im asking" says the words after it are the question.
    const asking = 'we booked it months ago. im asking about the spaniel'
    const scored = await cuesOfOne('user', asking)
    expect(scored!.cues.askedBefore).toBe(true)
    expect(scored!.cues.escalationUnits!.every((u) => u.statement === true)).toBe(true)
    expect(await signals(['user', request], ['assistant', answer], ['user', asking])).toContain('repetition')
    // Its question named as the subject of "is": 0.39 to the request, under the margin tier's 0.2 over the answer.
    const drill = 'will the 20V drill take the 5Ah battery or only the 2Ah one'
    const promotion =
      'The ProForce 20V drill is a brilliant all-rounder! It is light, has two speeds and comes with a five-year warranty.'
    const named = 'already have it, got it for christmas. question is which battery'
    expect((await cuesOfOne('user', named))!.cues.askedBefore).toBe(true)
    expect(await signals(['user', drill], ['assistant', promotion], ['user', named])).toContain('repetition')
  }, 60_000)

  it('reads a request for a person beside a complaint about the chat, comma-spliced, as escalation (signals-v65)', async () => {
    // Issue 32 (trial1, the lead's probe): the complaint's contrast anchor ("this bot is useless") was nearer
    // than any escalation anchor, margin −0.157 at head 0.879, so the complaint cancelled the request.
    const answer =
      'Sorry to hear that. Try restarting your router by holding the power button for 10 seconds.'
    for (const asking of ['this bot is useless, get me a person', "you're useless, let me talk to a human"]) {
      const scored = await cuesOfOne('user', asking)
      expect(scored!.cues.escalationUnits![0]!.margin).toBeLessThan(THRESHOLDS.escalationHeadMargin)
      expect(scored!.cues.escalationUnits![0]!.pastComplaint).toBeGreaterThanOrEqual(
        THRESHOLDS.escalationHeadMargin,
      )
      expect(escalationAsked(scored!.cues)).toBeDefined()
      expect(
        await signals(
          ['user', 'my internet keeps dropping every evening'],
          ['assistant', answer],
          ['user', asking],
        ),
      ).toContain('escalation')
      expect(await signals(['user', asking])).toContain('escalation')
    }
    // The complaint alone, and people named in reports, still ask for no one.
    for (const told of [
      'this bot is useless',
      'someone stole my card',
      'a person called me pretending to be from the bank',
    ]) {
      expect(escalationAsked((await cuesOfOne('user', told))!.cues)).toBeUndefined()
    }
  }, 60_000)

  it('reads the complaint about the chat beside a request for a person as frustration too (signals-v66)', async () => {
    // Issue 32 (frust13): signals-v28 kept every unit the escalation head reads as asking for a person out of the
    // frustration gates short of the whole's sure reading; one escalation reads as a request beside a complaint
    // about the chat (signals-v65) is judged by them.
    const answer = 'Engineer visits can be rescheduled from the My Appointments page.'
    const first = 'this bot is useless, get me a person'
    const again = 'omg this bot is so useless, get me a real person now'
    for (const asking of [first, again]) {
      const unit = (await cuesOfOne('user', asking))!.cues.escalationUnits![0]!
      expect(unit.head).toBeGreaterThanOrEqual(THRESHOLDS.frustrationAsksPerson)
      expect(unit.pastComplaint).toBeGreaterThanOrEqual(THRESHOLDS.escalationHeadMargin)
    }
    expect(await signals(['user', first])).toEqual(expect.arrayContaining(['escalation', 'frustration']))
    expect(
      await signals(['user', 'engineer did not turn up today'], ['assistant', answer], ['user', again]),
    ).toEqual(expect.arrayContaining(['escalation', 'frustration']))
    // A request for a person with no complaint beside it is still no frustration (signals-v28).
    expect(await signals(['user', 'Talk to an agent'])).not.toContain('frustration')
  }, 60_000)

  it('reads the person asked for, asked by a pronoun to call after an answer beside the point, as repetition (signals-v57)', async () => {
    const request =
      'My tenancy deposit still has not been returned after two months. Can I speak to the branch manager?'
    const again = 'The report was agreed in May. Can he call me tomorrow morning?'
    // The escalation head reads the pronoun's request as asking for no one, and it lies far from the first
    // request (0.20 here): neither signals-v15 nor a similarity gate reads it.
    const scored = await cuesOfOne('user', again)
    expect(escalationAsked(scored!.cues)).toBeUndefined()
    expect(scored!.cues.callsBack).toBe(true)
    const answer = 'Deposits are returned within 10 days of the check-out report being agreed.'
    expect(await signals(['user', request], ['assistant', answer], ['user', again])).toEqual(
      expect.arrayContaining(['escalation', 'repetition']),
    )
    // After a handover naming who will call, the same words arrange that call.
    const handover = "I've passed this to our branch manager, Tom, who will call you tomorrow."
    expect(
      await signals(
        ['user', request],
        ['assistant', handover],
        ['user', 'Can he call me in the afternoon instead?'],
      ),
    ).not.toContain('repetition')
    // Without an earlier request for a person the pronoun asks for no one again.
    expect(
      await signals(
        ['user', 'My tenancy deposit still has not been returned after two months.'],
        ['assistant', answer],
        ['user', again],
      ),
    ).not.toContain('repetition')
  })

  it('reads the bot sending the same message again as repetition, and two different answers as none', async () => {
    expect(
      await signals(
        ['user', 'my discount code is not working'],
        ['assistant', 'Discount codes can be entered on the payment page.'],
        ['user', 'I did enter it there and it says invalid'],
        ['assistant', 'Discount codes can be entered on the payment page.'],
      ),
    ).toContain('repetition')
    expect(
      await signals(
        ['user', 'how long does standard delivery take?'],
        ['assistant', 'Standard delivery takes 3 to 5 working days.'],
        ['user', 'and express?'],
        ['assistant', 'Express delivery arrives the next working day.'],
      ),
    ).not.toContain('repetition')
  })

  it('reads the bot asking again for a detail it asked for, in other words, as repetition; two asks of different details as none (signals-v24)', async () => {
    expect(
      await signals(
        ['user', 'can I move my spin class to the evening one'],
        ['assistant', 'Could you give me your membership number? It is on the back of your card.'],
        ['user', 'it is the gold membership, I joined in March'],
        [
          'assistant',
          "To look up your classes I'll need your membership number, from the back of your card.",
        ],
      ),
    ).toContain('repetition')
    expect(
      await signals(
        ['user', 'can I move my spin class to the evening one'],
        ['assistant', 'Could you give me your membership number? It is on the back of your card.'],
        ['user', 'GM-40218'],
        ['assistant', 'Thanks. Which evening class would you like instead: 6pm or 7.30pm?'],
      ),
    ).not.toContain('repetition')
  })

  it('reads a request for a person inside a long polite message as escalation with the escalation head, not without it (signals-v18)', async () => {
    // Margins 0.005 and 0.06: under the anchors' threshold (0.08); the head reads the last sentence at 0.99.
    const longPolite = [
      "Hello, I renewed my parking permit online on the 3rd and paid £60, but the permit shows last year's vehicle. I've attached the new registration document. I'd be grateful if someone could phone me so we can correct it.",
      "Good morning. My father's care home fees were taken twice this month, and he's on a fixed pension. I've checked his statement and both payments are there. Is there a person in your finance office I could speak with about it?",
    ]
    for (const text of longPolite) {
      expect(await signalsOf([], true, ['user', text])).toContain('escalation')
      expect(await signalsOf([], false, ['user', text])).not.toContain('escalation')
    }
  })

  it('reads no escalation in a person named in a report or praised, with the escalation head or without it (signals-v18)', async () => {
    for (const text of [
      'a person stole my card',
      'the agent I spoke to yesterday was lovely',
      'the adviser I chatted with on Monday was really patient with me',
      'can I have the email of the volunteer who runs the book club?',
    ]) {
      expect(await signalsOf([], true, ['user', text])).not.toContain('escalation')
    }
    // Without the head the anchors alone decide, as before signals-v18: the praise lies 0.141 nearer them, a
    // false escalation the head (0.29, under escalationHeadVeto) takes away.
    expect(await signalsOf([], false, ['user', 'the agent I spoke to yesterday was lovely'])).toContain(
      'escalation',
    )
    expect(await signalsOf([], false, ['user', 'a person stole my card'])).not.toContain('escalation')
  })

  it('reads a case passed to a team or a person who will call back as escalation with the handover head, not without it (signals-v20)', async () => {
    // Margins 0.054 and 0.040: under the anchors' threshold (0.08); the handover head reads the sentence that
    // passes the case on at 0.96 and 0.97.
    for (const [asked, handover] of [
      [
        'my broadband keeps dropping every evening',
        "Thanks for waiting. I've opened a case for our network specialists and one of them will ring you this afternoon.",
      ],
      [
        'can I still apply for the spring intake with a late reference?',
        "I've passed your question to the head of admissions, and she will call you back on Monday.",
      ],
    ] as const) {
      const turns: Turn[] = [
        ['user', asked],
        ['assistant', handover],
      ]
      expect(await signalsOf([], true, ...turns)).toContain('escalation')
      expect(await signalsOf([], false, ...turns)).not.toContain('escalation')
    }
  })

  it('reads no handover in opening hours given, nor in a request done whose tickets were emailed (signals-v20)', async () => {
    const hours: Turn[] = [
      ['user', 'when can I come in to return a book?'],
      ['assistant', 'Our library is open 9am to 7pm on weekdays and 10am to 4pm on Saturdays.'],
    ]
    expect(await signalsOf([], true, ...hours)).not.toContain('escalation')
    expect(await signalsOf([], false, ...hours)).not.toContain('escalation')
    // The anchors alone read the emailed tickets as a handover (margin 0.10); the head (0.05, under
    // handoverHeadVeto) reads an action done.
    const done: Turn[] = [
      ['user', 'can I move my two seats to the Saturday show?'],
      ['assistant', 'All done: your new seats are confirmed and the tickets are in your inbox.'],
    ]
    expect(await signalsOf([], true, ...done)).not.toContain('escalation')
    expect(await signalsOf([], false, ...done)).toContain('escalation')
  })

  it('reads an indirect request for a person the assistant takes up, and one after a bot failure, as escalation with the heads, not without them (signals-v26)', async () => {
    // The request's sentence: escalation head 0.71, margin 0.056 (under 0.85 and 0.08); the reply's
    // sentence: handover head 0.77, margin −0.019 (under 0.92 and 0): neither alone, the two across the turn.
    const takenUp: Turn[] = [
      [
        'user',
        'our wedding cake tasting got cancelled the day before with no reason given. I want to talk to the head baker about what happened',
      ],
      [
        'assistant',
        "I'm so sorry. I've passed this to our head baker, Lena, who will phone you this afternoon.",
      ],
    ]
    expect(await signalsOf([], true, ...takenUp)).toContain('escalation')
    expect(await signalsOf([], false, ...takenUp)).not.toContain('escalation')
    // signals-v27: taken up after a detail asked for and given (the handover 0.77 / −0.019 two turns on).
    const afterDetail: Turn[] = [
      takenUp[0]!,
      ['assistant', 'Which order is it about?'],
      ['user', 'order 5521, for the 12th'],
      ['assistant', "Thanks. I've passed this to our head baker, Lena, who will phone you this afternoon."],
    ]
    expect(await signalsOf([], true, ...afterDetail)).toContain('escalation')
    expect(await signalsOf([], false, ...afterDetail)).not.toContain('escalation')
    // After the assistant says it has nothing: head 0.94, margin −0.063 (under escalationHeadMargin).
    const afterFailure: Turn[] = [
      ['user', 'the app logs me out every time I open it'],
      ['assistant', "Sorry, I don't have any information about that."],
      ['user', 'ok so can somebody from your tech side look into it'],
    ]
    expect(await signalsOf([], true, ...afterFailure)).toContain('escalation')
    expect(await signalsOf([], false, ...afterFailure)).not.toContain('escalation')
  })

  it('reads no escalation in a person who did harm, a case passed to a team after it, an offer of a person not taken, nor a repair visit booked (signals-v26)', async () => {
    for (const turns of [
      [
        ['user', 'a person stole my card at the station'],
        [
          'assistant',
          "I'm sorry. I've blocked the card and ordered a replacement, which will arrive in 3 to 5 days.",
        ],
      ],
      [
        ['user', "someone used my card at a petrol station I've never been to"],
        [
          'assistant',
          "I'm sorry. I've blocked the card and our fraud team will review the payment; you'll hear from them by email within two days.",
        ],
      ],
      [
        ['user', 'my parcel is three days late'],
        ['assistant', 'Sorry for the delay. Would you like me to put you in touch with our delivery team?'],
        ['user', "no thanks, I'll wait a bit longer"],
      ],
      [
        ['user', "can an engineer come out and look at the boiler, it's making a banging noise"],
        [
          'assistant',
          "Yes. I've logged a repair request and an engineer will contact you to arrange a visit.",
        ],
      ],
    ] as Turn[][]) {
      expect(await signalsOf([], true, ...turns)).not.toContain('escalation')
    }
  })

  it('reads a blunt or a plain request for a person as escalation with the head and without it', async () => {
    for (const text of ['human please!!', 'could you put me through to someone in your billing team?']) {
      expect(await signalsOf([], true, ['user', text])).toContain('escalation')
      expect(await signalsOf([], false, ['user', text])).toContain('escalation')
    }
  })

  it('keeps hard negatives negative: a theft is no escalation, a loss no frustration, a thanks mid-way no resolution', async () => {
    const stolen = await signals(
      ['user', 'a person grabbed my phone on the bus and now my banking app is on it'],
      [
        'assistant',
        "I'm sorry that happened. I've signed your app out on every device and locked online payments.",
      ],
    )
    expect(stolen).not.toContain('escalation')
    expect(stolen).not.toContain('frustration')
    expect(
      await signals(
        ['user', 'how do I update my billing address?'],
        ['assistant', 'Go to Account > Billing > Address and save the new one.'],
        ['user', 'thanks!'],
        ['user', 'hang on, the save button does nothing when I click it'],
        ['assistant', 'Please try again in a few minutes.'],
        ['user', 'still nothing happens'],
      ),
    ).not.toContain('resolution')
  })

  it('reads a case handed to a colleague who will call as escalation, an answer giving opening hours as none (signals-v30)', async () => {
    expect(
      await signals(
        ['user', 'the keys you cut for me yesterday do not turn in the lock, this is the second time'],
        [
          'assistant',
          "Sorry for the bother. I've logged your complaint and our customer relations lead will call you this evening.",
        ],
      ),
    ).toContain('escalation')
    expect(
      await signals(
        ['user', 'when is your branch in Eastgate open?'],
        [
          'assistant',
          'Our Eastgate branch is open Monday to Friday from 8:30 to 6, and on Saturdays from 9 until 1. Our team there can also cut keys while you wait.',
        ],
      ),
    ).not.toContain('escalation')
  })

  it('reads a visit booked on the end user\'s "yes" as no escalation, a case passed on after an answer as one (signals-v33)', async () => {
    const offered: Turn[] = [
      [
        'user',
        'the boiler is making a banging noise every time the heating comes on, can you send someone round?',
      ],
      [
        'assistant',
        'Yes, a heating engineer can visit on Thursday between 8am and 12pm. The visit costs £75. Would you like me to book it?',
      ],
      ['user', 'yes please do'],
    ]
    expect(
      await signals(...offered, [
        'assistant',
        "All booked. Your engineer is Priya; she'll text you before she arrives.",
      ]),
    ).not.toContain('escalation')
    expect(
      await signals(
        ['user', 'the boiler is making a banging noise every time the heating comes on'],
        ['assistant', 'Does the noise start as soon as the pump runs, or after a few minutes?'],
        ['user', 'straight away'],
        [
          'assistant',
          "Thanks. I've passed this to our heating team, and one of our engineers will phone you this afternoon.",
        ],
      ),
    ).toContain('escalation')
  })

  it('reads no handover in a weak one that tells the end user where to go, one in the case passed on (signals-v35)', async () => {
    const report = 'the app keeps logging me out every few minutes'
    expect(
      await signals(
        ['user', report],
        ['assistant', 'Sorry about that. You can ask our support team to look into it from the Help page.'],
      ),
    ).not.toContain('escalation')
    expect(
      await signals(
        ['user', report],
        [
          'assistant',
          "Sorry about that. I've asked our support team to look into it and they'll message you here.",
        ],
      ),
    ).toContain('escalation')
  })

  it('reads a team or person who will call or email the end user as a handover, a visit booked as none (signals-v48)', async () => {
    // Both read by the handover head short of handoverHead (0.82 and 0.88) at a margin under 0: no handover
    // at signals-v47.
    const report = 'my parcel says delivered but it never arrived'
    for (const passed of [
      "Sorry about that. I've logged a claim for the missing parcel, and our returns team will email you tomorrow.",
      "I've sent this to our repairs desk; they'll email you a collection date.",
    ]) {
      expect(await signals(['user', report], ['assistant', passed]), passed).toContain('escalation')
    }
    expect(
      await signals(
        ['user', 'can someone come and look at my boiler'],
        [
          'assistant',
          'Booked for Tuesday between 8 and 12. Your engineer will text you 30 minutes before he arrives.',
        ],
      ),
    ).not.toContain('escalation')
  })

  it("reads the platform's survey after a failure as abandonment, and after a thanks as taking nothing back (signals-v87)", async () => {
    const asked: Turn = ['user', 'can I move my delivery to next week? I am away from Monday']
    const failedTurn: Turn = ['assistant', "Sorry, I'm not able to change deliveries in this chat."]
    const prompt: Turn = ['assistant', 'How would you rate this chat today? Reply 1 (poor) to 5 (great).']
    const feedback: Turn = ['assistant', 'Thanks for your feedback!']
    // The rating has no letters, so nothing the model reads: the failure before the survey's prompt stands.
    expect(await settledSignals(asked, failedTurn, prompt, ['user', '2'])).toContain('abandonment')
    expect(await settledSignals(asked, failedTurn, prompt, ['user', '1'], feedback)).toContain('abandonment')
    const answered: Turn = [
      'assistant',
      'Done: your delivery is now on Tuesday 9 December, between 8am and noon.',
    ]
    const rated = await settledSignals(asked, answered, ['user', 'perfect, thank you'], prompt, [
      'user',
      '5 👍',
    ])
    expect(rated).toContain('resolution')
    expect(rated).not.toContain('abandonment')
    expect(await settledSignals(asked, answered, prompt, ['user', '4'])).not.toContain('abandonment')
  })

  it('abandons a conversation whose end user wrote twice with no reply between, even when the last word is social (signals-v60)', async () => {
    const asked: Turn = ['user', 'can I move my dentist appointment from Thursday to next week?']
    const answered: Turn = ['assistant', 'Of course. Which day next week would suit you best?']
    const day: Turn = ['user', 'tuesday afternoon if possible']
    // Answered, the day given and then nothing: a social "ok" after it waited for no reply before signals-v60.
    expect(
      await settledSignals(asked, answered, day, ['assistant', 'Done: Tuesday at 2:30pm. See you then!']),
    ).toEqual([])
    expect(await settledSignals(asked, answered, ['user', 'ok'])).not.toContain('abandonment')
    expect(await settledSignals(asked, answered, day, ['user', 'ok'])).toContain('abandonment')
    expect(await settledSignals(asked, answered, day, ['user', 'thanks!'])).not.toContain('abandonment')
  })

  it('reads a failure that passes the matter to someone who will contact the end user as a handover (signals-v58)', async () => {
    // The contact sentence alone reads under handoverContactHead (0.58): a quote or a visit booked, no handover.
    // Said with the assistant's own inability it passes on what the assistant could not do.
    const asked: Turn = ['user', 'my coffee machine leaks from the bottom, can you fix it and how much?']
    const contact = "I've asked our technician, Priya, to email you a quote for the repair."
    const failedAndPassed = `I'm not sure about that. ${contact}`
    const scored = await cuesOfOne('assistant', failedAndPassed)
    expect(scored!.cues.inability).toBe(true)
    const contacts = scored!.cues.handoverUnits!.filter((u) => u.contacts === true)
    expect(contacts.length).toBeGreaterThan(0)
    for (const u of contacts) expect(u.head).toBeLessThan(THRESHOLDS.handoverContactHead)
    const found = await signals(asked, ['assistant', failedAndPassed])
    expect(found).toContain('escalation')
    expect(found).toContain('bot_failure')
    expect(await signals(asked, ['assistant', contact])).not.toContain('escalation')
  })

  it('reads no handover in a rating prompt nobody asked a person for, and keeps a friendly one (signals-v50)', async () => {
    // The prompt lies 0.107 nearer the handover anchors than the answers (weak, the head 0.24) and nearer the
    // social acts than the requests: a handover before signals-v50.
    const failed: Turn[] = [
      ['user', 'do you have the blue one in a size 8'],
      ['assistant', 'Sorry, I could not find that item.'],
    ]
    const rated = await signals(...failed, [
      'assistant',
      'Before you go, how would you rate this chat? Reply with a number from 1 (bad) to 5 (excellent).',
    ])
    expect(rated).not.toContain('escalation')
    expect(rated).toContain('bot_failure')
    // A handover in a friendly opener, as near the social acts, stands: the head reads its sentence as one.
    expect(
      await signals(
        ['user', 'my order came without the charger'],
        ['assistant', 'Great, thanks! One of our advisers will join this chat in a moment.'],
      ),
    ).toContain('escalation')
  })

  it('abandons a conversation ending on a short question left unanswered, not on a thanks', async () => {
    const asked = await settledSignals(
      ['user', 'what time does the pool open on weekdays?'],
      ['assistant', 'The pool opens at 6:30 on weekdays.'],
      ['user', 'ok and after that?'],
    )
    expect(asked).toContain('abandonment')
    const thanked = await settledSignals(
      ['user', 'what time does the pool open on weekdays?'],
      ['assistant', 'The pool opens at 6:30 on weekdays.'],
      ['user', 'great, thank you'],
    )
    expect(thanked).toEqual(['resolution'])
  })

  it('does not abandon a conversation ending on what the end user will do next after an answer; after a failure it does (signals-v67)', async () => {
    // Each last word lies nearer the request anchors (a negative social margin, or an open tail): without the rule
    // every one was read as a request left unanswered.
    const plans: [string, string, string][] = [
      [
        'Hello, my mother passed away last month. How do I close her current account?',
        'I am sorry for your loss. Please bring the death certificate and your own ID to any branch, or post them to us with the form at example.com/bereavement.',
        'I will take them to the branch on the high street on Monday.',
      ],
      [
        'Is the over-60 discount still on for the spring term?',
        'Yes, learners aged 60 and over get 20% off the spring term. You can enrol online or at reception.',
        'Splendid. I shall enrol at reception.',
      ],
      [
        'is the towpath past the marina open again?',
        'The towpath between the marina and Bridge 42 reopens on 3 March after the bank repairs.',
        'ok. will cycle the road way till then',
      ],
    ]
    for (const [asked, answer, plan] of plans) {
      const read = await settledSignals(['user', asked], ['assistant', answer], ['user', plan])
      expect(read, plan).not.toContain('abandonment')
    }
    const failed = await settledSignals(
      ['user', 'is the towpath past the marina open again?'],
      ['assistant', "Sorry, I'm not able to check towpath closures here."],
      ['user', 'ok. will cycle the road way till then'],
    )
    expect(failed).toContain('abandonment')
    const asksToo = await settledSignals(
      ['user', plans[0]![0]],
      ['assistant', plans[0]![1]],
      ['user', 'I will take them to the branch on Monday. Do I need an appointment?'],
    )
    expect(asksToo).toContain('abandonment')
  })

  it('reads a thanks whose last sentence says what the end user will do next as resolution after an answer; after a failure not (signals-v71)', async () => {
    // Each last word thanks (the gratitude head) and ends on a plan the open tail read as still open: without the
    // rule none was a resolution. After a failure a plan to go round it stays open: without the failed-turn guard
    // the last one became a resolution.
    const thanked: [string, string, string][] = [
      [
        'Do I need to book to see the dentist for a broken tooth?',
        'For an urgent problem like a broken tooth, ring the surgery at 8am and ask for an emergency slot on the same day.',
        'Thank you so much. I will ring them first thing tomorrow.',
      ],
      [
        'Where can I get my blood pressure checked without an appointment?',
        'Most pharmacies check blood pressure for free without an appointment, including ours on Bridge Street.',
        'Thanks very much. I shall go to Bridge Street this afternoon.',
      ],
      [
        'my student loan hasnt come through and term starts monday',
        'The first payment is sent 3 working days after you register at university. Your university can give you a hardship payment until then.',
        'thank you. i will ask the student office',
      ],
    ]
    for (const [asked, answer, reply] of thanked) {
      const read = await settledSignals(['user', asked], ['assistant', answer], ['user', reply])
      expect(read, reply).toContain('resolution')
      expect(read, reply).not.toContain('abandonment')
    }
    const failed = await settledSignals(
      ['user', thanked[0]![0]],
      ['assistant', "Sorry, I'm not able to advise on dental appointments here."],
      ['user', "lovely, thanks. i'll just ring the surgery myself then"],
    )
    expect(failed).not.toContain('resolution')
  })

  it('reads a closing that thanks in its last sentence as resolution; after a failure or in an opening not (signals-v77)', async () => {
    // Each last word thanks in its last sentence ("cheers": the gratitude head reads it alone as a thanks) where the
    // head reads the whole under 0.5 and the anchors under the closing gate: without the rule none was a resolution.
    const closings: [string, string, string][] = [
      [
        'do you deliver on sundays',
        'Yes, we deliver 10am to 4pm on Sundays in the city area, £3.',
        'sunday it is then, ordered. cheers',
      ],
      [
        'is there parking at the venue',
        'There is a free car park behind the venue, 80 spaces, open from 6pm.',
        'perfect, we will drive then. cheers',
      ],
      [
        'what time does the pool open on saturday',
        'The pool opens at 7am on Saturdays, with lane swimming until 9.',
        '7 it is, see you saturday. cheers',
      ],
    ]
    for (const [asked, answer, reply] of closings) {
      const read = await settledSignals(['user', asked], ['assistant', answer], ['user', reply])
      expect(read, reply).toContain('resolution')
      expect(read, reply).not.toContain('abandonment')
    }
    // After a failure the same last word is not read so (it may be sarcasm the heads read calm).
    const failed = await settledSignals(
      ['user', closings[2]![0]],
      ['assistant', 'Sorry, I can only help with memberships.'],
      ['user', 'right, will ring the front desk. cheers'],
    )
    expect(failed).not.toContain('resolution')
    // Nor a thanks in advance closing an opening request, the last word a bare "ok".
    const opening = await settledSignals(
      ['user', 'hi, can you send the brochure to my email? thanks in advance'],
      ['assistant', 'Of course! I have emailed the brochure to you.'],
      ['user', 'ok'],
    )
    expect(opening).not.toContain('resolution')
  })

  it('reads a thanks with a request after a hand-over as resolution, and the hand-over said again after a thanks undoes nothing (signals-v84)', async () => {
    // Each last word thanks, then asks to be kept informed or hurried, after the case went to a team: an open tail, so
    // without the rule each was no resolution, and abandoned.
    const stuck: Turn = ['user', 'my parcel has been stuck at customs for three weeks, reference PX-2231']
    const handedOver: Turn = [
      'assistant',
      "I've passed your case to our customs team, and they will email you within 2 working days.",
    ]
    const replies = [
      'Ok thank you. Please update me, the medicines for my father are inside the parcel',
      "ok thanks. please ask them to hurry, my son's birthday is on saturday and the gift is in it",
    ]
    for (const reply of replies) {
      const read = await settledSignals(stuck, handedOver, ['user', reply])
      expect(read, reply).toContain('resolution')
      expect(read, reply).not.toContain('abandonment')
    }
    // The same words after an answer that handed nothing over stay open: abandoned.
    const answered = await settledSignals(
      stuck,
      ['assistant', 'Customs checks usually take 2 to 4 weeks, and we cannot speed them up.'],
      ['user', replies[0]!],
    )
    expect(answered).toEqual(['abandonment'])
    // A thanks to a failure that hands over, then the hand-over said again: without the rule, no resolution.
    for (const [report, thanks] of [
      ['I paid the bill an hour ago but the meter still says locked', 'Ok please. Thank you.'],
      ['I topped up by bank transfer this morning and the box is still locked', 'ok thank you'],
    ] as const) {
      const again = await settledSignals(
        ['user', report],
        [
          'assistant',
          "Sorry, I can't see payments from here. I'm passing your account to our agent team to check it.",
        ],
        ['user', thanks],
        ['assistant', 'An agent will message you here within the hour.'],
      )
      expect(again, report).toContain('resolution')
    }
  })

  it('reads a closing that thanks in its last sentence as resolution, the frustration read in its earlier sentences aside: a fault mended, a wait complained of (signals-v84)', async () => {
    // The frustration head reads the whole 0.68 (the report of the fault, 0.69), "cheers" 0.06: without the rule, no
    // resolution, and abandoned.
    const mended: Turn = ['user', 'engineer came, and the hot water was back on at 11. cheers']
    const asked: Turn = ['user', 'no hot water in flat 12 since this morning']
    const read = await settledSignals(
      asked,
      ['assistant', 'An engineer is on the way and should restore the supply by noon.'],
      mended,
    )
    expect(read).toEqual(['resolution'])
    // After a failure the last word is no closing: the head's veto stands.
    const failed = await settledSignals(
      asked,
      ['assistant', "Sorry, I can't book engineers from this chat."],
      mended,
    )
    expect(failed).not.toContain('resolution')
    // Annoyance at the wait, then a thanks in the last sentence: frustration and resolution, not abandoned (without the
    // rule the frustration in the first sentence kept the thanks out, and the conversation was abandoned).
    for (const reply of ['took long enough. thanks', 'about time too. cheers']) {
      const late = await settledSignals(
        ['user', "my replacement card still hasn't come"],
        [
          'assistant',
          'Your new card was posted today by first class mail and should arrive within 2 working days.',
        ],
        ['user', reply],
      )
      expect(late, reply).toEqual(['frustration', 'resolution'])
    }
  })

  it('reads no handover in an assistant message near no handover anchor that the handover head reads high (signals-v72)', async () => {
    // Each assistant message does the service itself and reports the driver to a third party; its units lie under
    // HANDOVER_NEAR from every handover anchor, and the head read them as a handover at the clamp's margin of 0.
    const served: [string, string, string][] = [
      [
        'The courier threw my bonsai over the gate and the pot is cracked. I watched him do it on my doorbell camera.',
        "Thank you. I've arranged a replacement bonsai for delivery on Thursday by our own van, and I've reported the driver to Evri.",
        'great, thank you',
      ],
      [
        'my olive tree came with half the branches snapped, the driver dropped it off the tail lift',
        "Thank you. I've arranged a replacement olive tree for delivery on Thursday by our own van, and I've reported the driver to Yodel.",
        'perfect, thanks',
      ],
    ]
    for (const [complaint, reply, thanks] of served) {
      const read = await settledSignals(['user', complaint], ['assistant', reply], ['user', thanks])
      expect(read, reply).not.toContain('escalation')
    }
    // A handover near the anchors stands: "…our customer relations lead will call you this evening".
    const handed = await settledSignals(
      ['user', served[0]![0]],
      [
        'assistant',
        "I'm sorry. I've logged your complaint and our customer relations lead will call you this evening.",
      ],
      ['user', 'ok thanks'],
    )
    expect(handed).toContain('escalation')
  })

  it('abandons a conversation whose last reply to a bot failure resolves nothing, not one that thanks', async () => {
    const failure: Turn = ['assistant', "Sorry, I'm not able to change seat bookings in this chat."]
    const left = await settledSignals(['user', 'can you move me to an aisle seat on my flight'], failure, [
      'user',
      "well that's not much use",
    ])
    expect(left).toContain('bot_failure')
    expect(left).toContain('abandonment')
    const thanked = await settledSignals(['user', 'can you move me to an aisle seat on my flight'], failure, [
      'user',
      'ok, thanks anyway',
    ])
    expect(thanked).toContain('resolution')
    expect(thanked).not.toContain('abandonment')
  })

  it('abandons a conversation whose last reply follows the bot saying its answer again, a thanks there included (signals-v21)', async () => {
    const circling: Turn[] = [
      ['user', 'my parcel locker code has expired, can I get a new one'],
      ['assistant', 'Locker codes are valid for 72 hours from the moment your parcel is delivered.'],
      ['user', 'yes it ran out yesterday, I need a fresh code to get my parcel out'],
      ['assistant', 'Locker codes are valid for 72 hours from the moment your parcel is delivered.'],
    ]
    const toldSo = await settledSignals(...circling, ['user', 'you are not reading what I wrote'])
    expect(toldSo).toContain('abandonment')
    const thanked = await settledSignals(...circling, ['user', 'great, cheers for that'])
    expect(thanked).not.toContain('resolution')
    expect(thanked).toContain('abandonment')
  })

  it('reads nobody to hand over to, and a missing kind of information, as bot failure, abandoned when last (signals-v21)', async () => {
    const nobody = await settledSignals(
      ['user', 'I want to talk to a real person about my bill'],
      [
        'assistant',
        'Our billing advisers are not available over chat today. You can write to billing@power.example.',
      ],
    )
    expect(nobody).toContain('bot_failure')
    expect(nobody).toContain('abandonment')
    const noInfo = await settledSignals(
      ['user', 'does the 7pm yoga class have spaces left on thursday?'],
      ['assistant', "Sorry, I don't have booking information for the studio's classes."],
    )
    expect(noInfo).toContain('bot_failure')
    expect(noInfo).toContain('abandonment')
  })

  it("reads the end user's closing word after an answer as resolution, the same words mid-way as none (signals-v31)", async () => {
    const asked: Turn[] = [
      ['user', 'how do I turn off the email newsletter?'],
      ['assistant', 'Go to Settings > Notifications and untick Newsletter.'],
    ]
    for (const closing of ['nice one cheers', "that's done it"]) {
      const last = await settledSignals(...asked, ['user', closing])
      expect(last, closing).toEqual(['resolution'])
      const goodbye = await settledSignals(
        ...asked,
        ['user', closing],
        ['assistant', "You're welcome, have a lovely day!"],
      )
      expect(goodbye, closing).toEqual(['resolution'])
      // Short of THRESHOLDS.resolution: the same words followed by an answer are no resolution.
      const midway = await settledSignals(
        ...asked,
        ['user', closing],
        ['assistant', 'Your preferences are saved and take effect from tomorrow.'],
      )
      expect(midway, closing).toEqual([])
    }
  })

  it('reads no resolution in a thanks that goes on to a new matter after "also", and abandons it unanswered (signals-v32)', async () => {
    const asked: Turn[] = [
      ['user', 'how do I turn off the email newsletter?'],
      ['assistant', 'Go to Settings > Notifications and untick Newsletter.'],
    ]
    for (const more of [
      'perfect thanks. also could the driver ring the bell, the buzzer is broken',
      'brilliant, thank you. also the delivery guy left the box in the rain',
    ]) {
      expect(await settledSignals(...asked, ['user', more]), more).toEqual(['abandonment'])
    }
  })

  it('reads a yes/no question typed without its mark as unanswered when last, alone or after a thanks; the thanks alone as resolution (signals-v98)', async () => {
    // Issue 32 (sig25): fresh10 caravan-01's and fresh29 cliffrail-01's shapes, in other words.
    const asked: Turn[] = [
      ['user', 'what time does the ferry leave on saturday?'],
      ['assistant', 'The first crossing is at 8:15, then every hour until 6pm.'],
    ]
    for (const more of ['do i need to book for a car', 'great thanks. oh can i take my dog on it']) {
      expect(await settledSignals(...asked, ['user', more]), more).toEqual(['abandonment'])
    }
    expect(await settledSignals(...asked, ['user', 'great thanks'])).toEqual(['resolution'])
    // signals-v100 (review9): "did it" ending its clause is a statement with its subject dropped, not a question.
    const fixed: Turn[] = [
      ['user', 'my router keeps dropping the wifi every evening'],
      ['assistant', 'Please restart the router and update its firmware from Settings > System > Update.'],
    ]
    for (const more of ['great thanks! did it and it works now', 'thanks. did it and its fine now']) {
      expect(await settledSignals(...fixed, ['user', more]), more).toEqual(['resolution'])
    }
  }, 60_000)

  it('reads an assistant that says it cannot put the end user through as a failure, abandoned when last; a transfer as a handover (signals-v31)', async () => {
    const ask: Turn = ['user', 'I need to speak to someone about a charge on my bill']
    const refused = await settledSignals(ask, [
      'assistant',
      "I'm sorry, I can't connect you to an adviser from this chat. You can email billing@shop.example and they reply within two days.",
    ])
    expect(refused).toContain('bot_failure')
    expect(refused).toContain('abandonment')
    const transferred = await settledSignals(ask, [
      'assistant',
      "I'll connect you to an adviser from our billing team now, they'll join this chat shortly.",
    ])
    expect(transferred).toEqual(['escalation'])
  })

  it('reads no request for a person in a sentence that names one in a report; a sentence put as a request still (signals-v47)', async () => {
    const escalationUnitsOf = async (content: string) => {
      const [scored] = await cuesOf(
        [{ role: 'user', content }],
        anchors,
        analyzer.semantic.embedTexts,
        [],
        analyzer.semantic.frustrationOf,
        analyzer.semantic.escalationOf,
        undefined,
      )
      return scored!.cues.escalationUnits!
    }
    // The head reads the report's last sentence as a request for a person, the anchors short of their threshold.
    const report =
      'your lads finished our job 3 weeks ago and left a skip on the drive. cant get the car in. nobody answers the office phone'
    const phone = (await escalationUnitsOf(report)).at(-1)!
    expect(phone.head).toBeGreaterThanOrEqual(THRESHOLDS.escalationHead)
    expect(phone.margin).toBeLessThan(THRESHOLDS.escalation)
    expect(phone.statement).toBe(true)
    expect(await signalsWith([], ['user', report])).not.toContain('escalation')
    const asked =
      'the engineer never turned up and nobody has rung. can someone from the office ring me today?'
    expect((await escalationUnitsOf(asked)).at(-1)!.statement).toBeUndefined()
    expect(await signalsWith([], ['user', asked])).toContain('escalation')
  })

  it('reads no request for a person in a question about what the assistant is; a request beside it still (signals-v54)', async () => {
    const escalationUnitsOf = async (content: string) => {
      const [scored] = await cuesOf(
        [{ role: 'user', content }],
        anchors,
        analyzer.semantic.embedTexts,
        [],
        analyzer.semantic.frustrationOf,
        analyzer.semantic.escalationOf,
        undefined,
      )
      return scored!.cues.escalationUnits!
    }
    // rasa-demo's ask_ishuman example: the anchors read it as a request for a person, before signals-v54.
    const what = 'are you real human?'
    const [unit] = await escalationUnitsOf(what)
    expect(unit!.margin).toBeGreaterThanOrEqual(THRESHOLDS.escalation)
    expect(unit!.asksWhat).toBe(true)
    expect(await signalsWith([], ['user', what])).not.toContain('escalation')
    const asked = 'are you a bot? i want to talk to a real person'
    expect(await signalsWith([], ['user', asked])).toContain('escalation')
  })

  it("reads no handover in the assistant saying what it is after 'are you a bot' (signals-v56)", async () => {
    // The Rasa docs' reply (platform-escalation.json neg-isbot-01): the anchors read it as a handover at 0.164.
    const reply = "I'm a virtual assistant made with Rasa."
    const scored = await cuesOfOne('assistant', reply)
    expect(scored!.cues.handover).toBeGreaterThanOrEqual(THRESHOLDS.handover)
    expect(scored!.cues.saysWhatItIs).toBe(true)
    expect(await signalsWith([], ['user', 'are you a human or a bot?'], ['assistant', reply])).not.toContain(
      'escalation',
    )
    // A request for a person beside the question still escalates.
    expect(
      await signalsWith([], ['user', 'are you a bot? i want to talk to a real person'], ['assistant', reply]),
    ).toContain('escalation')
  })

  it('reads a thanks with a remark after it as resolution, a thanks with a new problem after it as none (signals-v21)', async () => {
    const remark = await settledSignals(
      ['user', 'how do I change the delivery address on my order'],
      ['assistant', 'Open the order under My Orders, choose Edit address and save the new one.'],
      ['user', 'that did it, thanks. the kids will be thrilled'],
    )
    expect(remark).toContain('resolution')
    expect(remark).not.toContain('abandonment')
    const problem = await settledSignals(
      ['user', 'how do I change the delivery address on my order'],
      ['assistant', 'Open the order under My Orders, choose Edit address and save the new one.'],
      ['user', 'thanks. but the save button does nothing when I press it'],
    )
    expect(problem).not.toContain('resolution')
    expect(problem).toContain('abandonment')
  })

  it('reads an exasperated last reply as frustration, not resolution, and leaves it abandoned', async () => {
    const found = await settledSignals(
      ['user', 'my parcel says delivered but it is not here'],
      ['assistant', 'Deliveries can take up to 48 hours to show up. Is there anything else I can help with?'],
      ['user', 'wonderful, this is a complete waste of time'],
    )
    expect(found).toContain('frustration')
    expect(found).not.toContain('resolution')
    expect(found).toContain('abandonment')
    const sad = await settledSignals(
      ['user', 'my dog died last week, how do I cancel his insurance policy?'],
      [
        'assistant',
        "I'm so sorry for your loss. I've cancelled the policy from today; no further payments will be taken.",
      ],
      ['user', 'thank you'],
    )
    expect(sad).not.toContain('frustration')
    expect(sad).toEqual(['resolution'])
  })

  it("reads a conversation ending on the end user's exasperated reply to the bot's failure as frustration; a calm word or a sad subject there as none (signals-v44)", async () => {
    const report: Turn = ['user', 'my refund for the cancelled sofa never arrived']
    const cannot: Turn = ['assistant', "I'm not able to help with refunds in chat."]
    // The head 0.81, the anchors −0.077: under a reply's gate (−0.03), short of its sure reading (0.85).
    const exasperated: Turn = ['user', 'ugh, seriously']
    expect(await settledSignals(report, cannot, exasperated)).toContain('frustration')
    // Until the conversation has ended on it, nothing by this reading.
    expect(await signals(report, cannot, exasperated)).not.toContain('frustration')
    for (const calm of ['no problem, I will email them', 'ok, I will ring the shop instead']) {
      expect(await settledSignals(report, cannot, ['user', calm]), calm).not.toContain('frustration')
    }
    // A sad subject told after the failure (the head 0.37).
    expect(
      await settledSignals(report, cannot, ['user', "it was to pay for my dad's funeral"]),
    ).not.toContain('frustration')
  })

  it("reads the last word on the bot's failure by the anchors when the end user's report was read as frustrated (signals-v59)", async () => {
    // The report: the head 0.72 on the whole, the anchors −0.023 (under a first report's 0.03): no frustration alone.
    const report: Turn = [
      'user',
      'the heating in my flat has been off since friday and the engineer never turned up',
    ]
    const cannot: Turn = ['assistant', "I'm sorry, I can't help with that in this chat."]
    // The sarcasm: the head 0.44 (under v44's 0.75), the anchors +0.011 (over a reply's −0.03).
    const sarcasm: Turn = ['user', 'class. cheers for nothing then']
    expect(await signals(report)).not.toContain('frustration')
    expect(await settledSignals(report, cannot, sarcasm)).toContain('frustration')
    // Until the conversation has ended on it, nothing by this reading; nor on a calm last word (−0.097).
    expect(await signals(report, cannot, sarcasm)).not.toContain('frustration')
    expect(await settledSignals(report, cannot, ['user', "ok I'll phone them instead"])).not.toContain(
      'frustration',
    )
    // Nor after a calm question (the head 0.31): the rule's limit, the anchors alone do not aim a word so short.
    expect(
      await settledSignals(['user', 'do you service combi boilers in Leeds?'], cannot, sarcasm),
    ).not.toContain('frustration')
    // A sad subject the anchors place nearer frustration (+0.040) than the sarcasm, the emotion heads' sadness 0.62.
    const sofa: Turn = ['user', 'my refund for the cancelled sofa never arrived']
    expect(await settledSignals(sofa, cannot, sarcasm)).toContain('frustration')
    expect(
      await settledSignals(sofa, cannot, ['user', 'my mum passed away last month and this was her sofa']),
    ).not.toContain('frustration')
  })

  it('reads frustration with the support-trained head: sarcasm and blame are, a death and a bare report are not', async () => {
    // A sarcastic first message, and an accusation told as a fact: far from the frustration anchors.
    expect(await signals(['user', 'wow, brilliant service, my order vanished'])).toContain('frustration')
    expect(await signals(['user', 'amazing how your courier manages to lose every single parcel'])).toContain(
      'frustration',
    )
    expect(await signals(['user', 'this is the third time the app crashed, useless'])).toContain(
      'frustration',
    )
    expect(await signals(['user', 'my husband died last week, how do I close his account'])).not.toContain(
      'frustration',
    )
    expect(await signals(['user', 'the app crashes when I open it'])).not.toContain('frustration')
  })

  it('reads a report the anchors cannot place as no frustration when it opens the conversation, as frustration in a reply', async () => {
    // signals-v11: the head reads it as frustrated (0.71), the anchors only just nearer frustration (0.017,
    // within ±0.03): a first report states the problem (v10 read frustration); a reply reacts to the answer.
    const report = 'autofill stoped working in firefox after the update'
    expect(
      await signals(['user', report], ['assistant', 'Which version of Firefox are you on?']),
    ).not.toContain('frustration')
    expect(
      await signals(
        ['user', 'my saved passwords are not filling in'],
        ['assistant', 'You can turn on autofill under Settings > Autofill.'],
        ['user', report],
      ),
    ).toContain('frustration')
  })

  it('reads a first report with a sure judgement as frustration, though the anchors place it near reports', async () => {
    // signals-v12: the whole message reads frustrated (0.76) but only just nearer frustration (0.013, under
    // a first message's 0.03); its last sentence is sure (0.98) at −0.067: within frustrationSureSentence.
    expect(
      await signals([
        'user',
        'My gym pass stopped scanning at the turnstile. I have been stuck in the lobby for half an hour, which is ridiculous.',
      ]),
    ).toContain('frustration')
  })

  it('reads a longer message as frustrated when one of its sentences is, not when one is sad or a request', async () => {
    // Facts first, the judgement last: the head on the whole message reads them calm (signals-v8 did not fire).
    expect(
      await signals([
        'user',
        'I ordered a blue jacket in size M on the 3rd. The tracking says it was delivered yesterday. Honestly your delivery service is a joke.',
      ]),
    ).toContain('frustration')
    expect(
      await signals([
        'user',
        'I moved house in March and updated my address online. The new card still went to the old flat. Seriously, how hard is it to get this right?',
      ]),
    ).toContain('frustration')
    for (const calm of [
      'I need to update the address on my account. My mother passed away last month and I moved into her flat. What documents do you need?',
      'My flight was cancelled because of the storm. I was really looking forward to seeing my family. Can I rebook for Friday?',
      'I ordered a blue jacket in size M on the 3rd. The tracking says it was delivered yesterday. Can you check where it is?',
    ]) {
      expect(await signals(['user', calm])).not.toContain('frustration')
    }
  })

  it('reads a factual judgement of the service as frustration, a sad subject as none (signals-v19)', async () => {
    // One disappointed sentence (the head 0.99, margin −0.005) in a report the head reads calm as a whole
    // (0.49): signals-v12 asked the whole for 0.6, signals-v19 for frustrationSureSentenceWhole.
    expect(
      await signals([
        'user',
        'Hello. We ordered a cot for our baby on the 4th. The one delivered on Friday had a cracked side panel. This has happened twice now, which is really disappointing. Could you send a replacement panel?',
      ]),
    ).toContain('frustration')
    expect(await signals(['user', 'Two weeks late. Not great.'])).toContain('frustration')
    // A reply holding the service to its word: the head 0.88, margin −0.08, short of a reply's own gate
    // (−0.03) and of sure (0.9); within frustrationReplySure and its margin.
    const bike: Turn[] = [
      ['user', 'Is my bike ready?'],
      ['assistant', 'Your bike will be ready on Saturday.'],
    ]
    expect(await signals(...bike, ['user', 'saturday? you said two days when i dropped it off'])).toContain(
      'frustration',
    )
    // Sad subjects, first or in a reply: none.
    expect(
      await signals(...bike, ['user', 'my grandad gave me that bike before he died, so I miss riding it']),
    ).not.toContain('frustration')
    expect(
      await signals(['user', 'My dog died yesterday and I need to cancel his insurance policy.']),
    ).not.toContain('frustration')
    expect(
      await signals(
        ['user', 'my card was stolen on holiday, I am gutted. can you block it?'],
        ['assistant', 'I have blocked the card and ordered a new one.'],
        ['user', 'thanks. the thief also took my passport which is awful'],
      ),
    ).not.toContain('frustration')
  })

  /** The frustration units (the whole, then each sentence) of an end user's first message, read with the
   * learned head and the emotion heads' displeasure (signals-v37, v42). */
  async function firstReportUnits(content: string) {
    const [scored] = await cuesOf(
      [{ role: 'user', content }],
      anchors,
      analyzer.semantic.embedTexts,
      [],
      analyzer.semantic.frustrationOf,
      undefined,
      undefined,
      analyzer.semantic.displeasureOf,
    )
    return scored!.cues.frustrationUnits!
  }

  it('reads no frustration in a first report that tells a fault plainly, frustration when it voices annoyance (signals-v37)', async () => {
    // Its second sentence reads frustrated to the support-trained head (0.88), nearer the frustration anchors
    // than the reports (+0.19), but the emotion heads read no anger, annoyance or disappointment in it (0.18).
    const plainly = 'The booking widget on our site is blank today. Nothing has been changed by anyone here.'
    const sentence = (await firstReportUnits(plainly))[2]!
    expect(sentence.head).toBeGreaterThanOrEqual(THRESHOLDS.emotionFrustration)
    expect(sentence.margin).toBeGreaterThanOrEqual(THRESHOLDS.frustrationFirst)
    expect(sentence.displeasure).toBeLessThan(THRESHOLDS.frustrationFirstDispleasure)
    expect(await signals(['user', plainly])).not.toContain('frustration')
    expect(
      await signals([
        'user',
        'Our booking widget stopped loading this afternoon. Nothing has been changed by anyone here, which is really frustrating.',
      ]),
    ).toContain('frustration')
  })

  it("reads no frustration in a calm first message's sure sentence the emotion heads read no displeasure in; frustration when it voices some (signals-v42)", async () => {
    // The support-trained head is sure of the loyal customer's first sentence (0.97, nearer the frustration
    // anchors than the requests), not of the whole (0.28); the emotion heads read 0.09 in it.
    const calm = "We've been customers for ten years. Do you offer a discount for paying annually?"
    const [whole, sentence] = await firstReportUnits(calm)
    expect(whole!.head).toBeLessThan(THRESHOLDS.emotionFrustration)
    expect(sentence!.head).toBeGreaterThanOrEqual(THRESHOLDS.frustrationSure)
    expect(sentence!.margin).toBeGreaterThanOrEqual(THRESHOLDS.frustrationSureSentence)
    expect(sentence!.displeasure).toBeLessThan(THRESHOLDS.frustrationSureSentenceDispleasure)
    expect(await signals(['user', calm])).not.toContain('frustration')
    // The same calm whole (0.36) with a sentence that voices annoyance (0.90, the emotion heads 0.45).
    expect(
      await signals([
        'user',
        "We've been customers for ten years, and it's a bit annoying that the price rises every single year. Do you offer a discount for paying annually?",
      ]),
    ).toContain('frustration')
  })

  it('reads no frustration in a first report of a fault told plainly that the head alone reads 0.90 … 0.94; frustration at its surer reading, or in a reply (signals-v51)', async () => {
    // Faults told plainly: the head reads the whole 0.936 (nearer the frustration anchors by 0.018, short of
    // the first report's 0.03) and 0.902 (−0.183), the emotion heads 0.46 and 0.38; no other gate passed.
    // ("Two weeks late. Not great.", 0.903 with the emotion heads at 0.58, stays frustration: signals-v19's case.)
    for (const plain of ['nobody came to read the meter this morning', "the courier didn't come yesterday"]) {
      const [whole] = await firstReportUnits(plain)
      expect(whole!.head).toBeGreaterThanOrEqual(THRESHOLDS.frustrationSure)
      expect(whole!.head).toBeLessThan(THRESHOLDS.frustrationSureFirst)
      expect(whole!.displeasure).toBeLessThan(THRESHOLDS.frustrationSureFirstDispleasure)
      expect(await signals(['user', plain])).not.toContain('frustration')
      // The same words in a reply to the service's answer: its sure bound, as before.
      expect(
        await signals(
          ['user', 'hi, a question about a visit'],
          ['assistant', 'Of course! What would you like to know?'],
          ['user', plain],
        ),
      ).toContain('frustration')
    }
    // Blame in the second person the head is surer of (0.958 at −0.415): frustration whatever the anchors say.
    const blame = "you've charged me twice again. sort it out"
    const [whole] = await firstReportUnits(blame)
    expect(whole!.head).toBeGreaterThanOrEqual(THRESHOLDS.frustrationSureFirst)
    expect(await signals(['user', blame])).toContain('frustration')
  })

  it('reads a report written in capitals that the head reads as frustrated as frustration, where the same words in lower case are a fault told plainly; capitals alone are not (signals-v64)', async () => {
    // The model is uncased: both read the same, the whole 0.91 at −0.22 and the emotion heads 0.25, short of the
    // first report's gates; the second sentence 0.87, short of a sentence's sure reading.
    const shouted = 'MY PARCEL STILL HASNT ARRIVED. THIS IS THE THIRD TIME'
    const [whole] = await firstReportUnits(shouted)
    expect(whole!.head).toBeGreaterThanOrEqual(THRESHOLDS.frustrationShouted)
    expect(whole!.shouts).toBe(true)
    expect(await signals(['user', shouted])).toContain('frustration')
    const plain = shouted.toLowerCase()
    expect((await firstReportUnits(plain))[0]!.head).toBeCloseTo(whole!.head, 3)
    expect(await signals(['user', plain])).not.toContain('frustration')
    // An acronym is no shouting; capitals the head reads as calm are no frustration.
    expect((await firstReportUnits('FYI the PIN is 1234'))[0]!.shouts).toBeUndefined()
    const calm = 'HELLO I WOULD LIKE TO BOOK AN APPOINTMENT FOR TUESDAY'
    expect((await firstReportUnits(calm))[0]!.shouts).toBe(true)
    expect(await signals(['user', 'FYI the PIN is 1234'])).not.toContain('frustration')
    expect(await signals(['user', calm])).not.toContain('frustration')
  })

  it('reads a word said before, said again in capitals, as frustration; the same reply in lower case is none (signals-v73)', async () => {
    // The model is uncased: "CHANGE" and "change" read alike (the reply's whole 0.72 at −0.14, short of a reply's
    // gates), and "KIRKGATE" shouts (v64) but the head reads it 0.07: capitals alone are no frustration.
    const asked = 'can I change my delivery to Saturday please'
    const missed = 'Sorry to hear you want to cancel. Shall I cancel the order?'
    expect(
      await signals(['user', asked], ['assistant', missed], ['user', 'i said CHANGE. to saturday']),
    ).toContain('frustration')
    expect(
      await signals(['user', asked], ['assistant', missed], ['user', 'i said change. to saturday']),
    ).not.toContain('frustration')
    const store = (last: string): Turn[] => [
      ['user', 'which store is nearest to Kirkgate'],
      ['assistant', 'Which store did you order from?'],
      ['user', 'the Kirkgate one'],
      ['assistant', 'Sorry, which store did you order from?'],
      ['user', last],
    ]
    expect(await signals(...store('KIRKGATE'))).toContain('frustration')
    expect(await signals(...store('kirkgate'))).not.toContain('frustration')
  })

  it('reads no frustration in a plain request for a person, a report told again on request, or a reply thanked after; an annoyed one still (signals-v28)', async () => {
    const order: Turn = ['user', 'my order never arrived']
    const greeting: Turn = ['assistant', 'Hi there! What can I do for you?']
    // The head reads the request 0.81 at −0.022, within a reply's gate; the escalation head reads it 0.88.
    const plain = await signals(order, greeting, ['user', 'Get me an agent'])
    expect(plain).toContain('escalation')
    expect(plain).not.toContain('frustration')
    expect(await signals(order, greeting, ['user', 'this is pointless. get me an agent'])).toEqual([
      'escalation',
      'frustration',
    ])
    // After a request to rephrase, the report told again (0.89 at −0.035): no reaction to an answer.
    const login: Turn = ['user', "the app won't let me log in"]
    const points: Turn = ['user', 'my points balance went to zero overnight, I had 3000']
    expect(
      await signals(login, ['assistant', "Sorry, I didn't catch that. Could you rephrase?"], points),
    ).not.toContain('frustration')
    expect(await signals(login, ['assistant', 'Have you tried resetting your password?'], points)).toContain(
      'frustration',
    )
    // "nothing yet" read sure (0.98) at 0.021, within a reply's doubt: the thanks after settles it.
    const tickets: Turn = ['user', "my tickets haven't come through"]
    const when: Turn = ['assistant', 'Tickets are emailed 48 hours before the event.']
    const resent: Turn = ['assistant', "I've resent them now to the email on your account."]
    const thanks: Turn = ['user', 'got them, thanks']
    expect(await signals(tickets, when, ['user', "it's tomorrow. nothing yet"], resent, thanks)).toEqual([
      'resolution',
    ])
    expect(await signals(tickets, when, ['user', "it's tomorrow. nothing yet"], resent)).toEqual([
      'frustration',
    ])
    const annoyed: Turn = ['user', "it's tomorrow and still nothing. this is hopeless"]
    expect(await signals(tickets, when, annoyed, resent, thanks)).toEqual(['frustration', 'resolution'])
  })

  it('reads no resolution in a thanks the frustration head reads as sarcastic, and one in a sincere thanks', async () => {
    const answer: Turn = ['assistant', 'Please reinstall the app from the store and sign in again.']
    const sarcastic = await settledSignals(['user', 'the app crashes when I open it'], answer, [
      'user',
      'cheers for nothing',
    ])
    expect(sarcastic).toContain('frustration')
    expect(sarcastic).not.toContain('resolution')
    expect(sarcastic).toContain('abandonment')
    // Short of frustration (the anchors place it among the thanks), but the head reads it as frustrated.
    const wasted = await settledSignals(['user', 'the app crashes when I open it'], answer, [
      'user',
      'thanks for wasting my time',
    ])
    expect(wasted).not.toContain('resolution')
    const sincere = await settledSignals(['user', 'the app crashes when I open it'], answer, [
      'user',
      'that fixed it, thank you',
    ])
    expect(sincere).toEqual(['resolution'])
  })

  it("fires a chatbot's own signal on paraphrases of its examples, not on other requests of its domain", async () => {
    const giftWrap: CustomSignal = {
      name: 'custom:asks-for-gift-wrapping',
      label: 'Asks for gift wrapping',
      examples: [
        'can you gift wrap my order?',
        'do you offer gift wrapping?',
        'can I add a gift message to the parcel?',
      ],
    }
    for (const paraphrase of [
      'could the present be wrapped before you send it?',
      'is it possible to have the item wrapped as a gift?',
      'I want to include a birthday card note with the delivery',
    ]) {
      expect(await signalsWith([giftWrap], ['user', paraphrase]), paraphrase).toContain(giftWrap.name)
    }
    for (const other of [
      'where is my parcel?',
      'can I change the delivery address on my order?',
      "how do I return a sweater that doesn't fit?",
      'do you ship to Canada?',
      'my order arrived damaged',
    ]) {
      expect(await signalsWith([giftWrap], ['user', other]), other).not.toContain(giftWrap.name)
    }
  })

  it("fires a chatbot's own signal on paraphrases, not on messages of its domain that share its nouns (signals-v43)", async () => {
    // Before signals-v43 the margin over generic requests alone fired on "my card was declined" and "my card
    // expires next month" for a lost card, and on "what recipes are in next week's box?" for pausing: same-domain
    // messages nearer the examples' nouns than any domain-free request. Near misses that ask to change the same
    // thing ("can I order a second card for my husband?", "can I change my delivery day to Thursday?") still
    // fire: custom signals' precision is 0.65-0.67 on sets of such near misses (bench/FINDINGS.md).
    const cases: { signal: CustomSignal; paraphrases: string[]; nearMisses: string[] }[] = [
      {
        signal: {
          name: 'custom:reports-a-lost-card',
          label: 'Reports a lost card',
          examples: ['I lost my card', 'my card was stolen', 'I cannot find my bank card'],
        },
        paraphrases: [
          'i think i left my debit card at the pub last night',
          'someone nicked my purse with my cards in it',
          'My credit card is missing since the weekend, please block it',
        ],
        nearMisses: [
          'my card was declined',
          'when does my new card arrive?',
          'how do I change my PIN?',
          'my card expires next month',
        ],
      },
      {
        signal: {
          name: 'custom:asks-to-pause-deliveries',
          label: 'Asks to pause deliveries',
          examples: ['can I pause my deliveries?', "skip next week's box", 'I want to put my plan on hold'],
        },
        paraphrases: [
          'we are away for two weeks, can you hold off sending boxes until the 20th',
          'no box next week pls',
          'is it possible to suspend my subscription for a month?',
          'Could I take a break from the boxes over the summer holidays?',
        ],
        nearMisses: [
          'my box arrived late',
          "what recipes are in next week's box?",
          'the box was left outside in the rain',
          'how do I update my card for the plan?',
        ],
      },
    ]
    for (const { signal, paraphrases, nearMisses } of cases) {
      for (const paraphrase of paraphrases) {
        expect(await signalsWith([signal], ['user', paraphrase]), paraphrase).toContain(signal.name)
      }
      for (const other of nearMisses) {
        expect(await signalsWith([signal], ['user', other]), other).not.toContain(signal.name)
      }
    }
  })

  it("fires one of a chatbot's own signals on a message near two of them, its own on their paraphrases (signals-v82)", async () => {
    // Trial5 (bench/FINDINGS.md): "what does the Plus membership include?" fired both "Asks for a discount"
    // and "Wants to cancel membership"; each passed the background on its own margin.
    const discount: CustomSignal = {
      name: 'custom:asks-for-a-discount',
      label: 'Asks for a discount',
      examples: [
        'do you have any discount codes?',
        'can I get money off my order?',
        'is there a student discount?',
      ],
    }
    const cancel: CustomSignal = {
      name: 'custom:wants-to-cancel-membership',
      label: 'Wants to cancel membership',
      examples: [
        'cancel my Plus membership',
        'I want to stop my membership',
        'how do I end my subscription?',
      ],
    }
    const both = [discount, cancel]
    const own = (names: string[]) => names.filter((n) => n.startsWith('custom:'))
    const plus = 'what does the Plus membership include?'
    expect(await signalsWith([discount], ['user', plus])).toContain(discount.name)
    expect(await signalsWith([cancel], ['user', plus])).toContain(cancel.name)
    expect(own(await signalsWith(both, ['user', plus]))).toHaveLength(1)
    expect(own(await signalsWith(both, ['user', 'any promo code for first-time buyers?']))).toEqual([
      discount.name,
    ])
    expect(own(await signalsWith(both, ['user', 'please end my Plus membership today']))).toEqual([
      cancel.name,
    ])
  })
})
