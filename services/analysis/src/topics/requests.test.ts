import { describe, expect, it } from 'vitest'
import {
  answersToSlotQuestions,
  askingSentences,
  clausesOf,
  isSocial,
  REPLY_MARGIN,
  replyMargin,
  requestEmbeddings,
  SLOT_MARGIN,
  SOCIAL_MARGIN,
  slotQuestion,
  socialMargin,
} from './requests.ts'
import { normalized } from './vectors.ts'

/** Unit vectors in 4 dimensions: axis 0 a social act, axis 1 a request, 2 and 3 anything else. */
const unit = (...v: number[]) => normalized(Float32Array.from(v))
const anchors = { social: [unit(1, 0, 0, 0), unit(1, 0, 1, 0)], request: [unit(0, 1, 0, 0)] }
const SOCIAL = unit(1, 0, 0, 0)
const REQUEST = unit(0, 1, 0, 0)

describe('only requests make topics: the decision', () => {
  it("scores a message by how much nearer it lies to a social anchor than to a request's", () => {
    expect(socialMargin(SOCIAL, anchors)).toBeCloseTo(1)
    expect(socialMargin(REQUEST, anchors)).toBeCloseTo(-1)
    // Its nearest anchor of each kind counts, not their mean.
    expect(socialMargin(unit(1, 0, 1, 0), anchors)).toBeCloseTo(1)
  })

  it('counts a message unlike both kinds as a request: the doubt goes to keeping a topic', () => {
    const elsewhere = unit(0, 0, 0, 1)
    expect(socialMargin(elsewhere, anchors)).toBeCloseTo(0)
    expect(isSocial([socialMargin(elsewhere, anchors)])).toBe(false)
  })

  it('is social only when the whole message and each of its clauses reach the margin', () => {
    expect(isSocial([SOCIAL_MARGIN])).toBe(true)
    expect(isSocial([SOCIAL_MARGIN - 0.01])).toBe(false)
    expect(isSocial([0.9, 0.8])).toBe(true)
    // "hi, my card was declined": the greeting is social, the clause after it is not.
    expect(isSocial([0.5, 0.9, -0.4])).toBe(false)
    expect(isSocial([])).toBe(false)
  })

  it('splits a message into clauses at sentence ends, commas, colons and dashes', () => {
    expect(clausesOf('hi, my card was declined')).toEqual(['hi', 'my card was declined'])
    expect(clausesOf('Thanks! One more thing: how do I export?')).toEqual([
      'Thanks',
      'One more thing',
      'how do I export',
    ])
    expect(clausesOf('ok - thanks')).toEqual(['ok', 'thanks'])
    expect(clausesOf('a well-known issue')).toEqual(['a well-known issue'])
    expect(clausesOf('... :)')).toEqual([])
    const long = `${'my export fails, '.repeat(30)}why`
    expect(clausesOf(long)).toEqual([long])
  })

  it('places a request by its whole embedding, or by its request clauses when the whole reads as social', async () => {
    const vectors: Record<string, Float32Array> = {
      'hi, where is my parcel': unit(3, 1, 0, 0),
      hi: SOCIAL,
      'where is my parcel': unit(0, 1, 1, 0),
      'ok, thanks': unit(1, 0, 0, 0),
      ok: SOCIAL,
      thanks: SOCIAL,
      'my parcel is late, why': REQUEST,
    }
    const embedded: string[] = []
    const embed = async (texts: readonly string[]) => {
      embedded.push(...texts)
      return texts.map((t) => vectors[t]!)
    }
    const texts = ['hi, where is my parcel', 'ok, thanks', 'my parcel is late, why']
    const placed = await requestEmbeddings(
      texts,
      texts.map((t) => vectors[t]!),
      anchors,
      embed,
    )
    // The greeting's clause is left out of where the message goes.
    expect(placed[0]).toEqual(vectors['where is my parcel'])
    expect(placed[1]).toBeUndefined()
    expect(placed[2]).toBe(REQUEST)
    // Only the messages social as a whole are split and embedded again.
    expect(embedded).toEqual(['hi', 'where is my parcel', 'ok', 'thanks'])
  })
})

describe("an answer to the bot's question for a detail: the decision", () => {
  // Axis 0 a slot question, 1 an open or informing turn, 2 an answer, 3 a request.
  const replyAnchors = {
    slot: [unit(1, 0, 0, 0)],
    open: [unit(0, 1, 0, 0)],
    answer: [unit(0, 0, 1, 0)],
    request: [unit(0, 0, 0, 1)],
  }
  const SLOT = unit(1, 0, 0, 0)
  const OPEN = unit(0, 1, 0, 0)

  it("reads a bot's questions, or all its sentences when it asks none", () => {
    expect(askingSentences('Sorry about that! Could you give me your order number?')).toEqual([
      'Could you give me your order number?',
    ])
    expect(askingSentences('What can I help you with?\n• Bookings\n• Gift cards')).toEqual([
      'What can I help you with?',
    ])
    expect(askingSentences('Thanks. Please enter your order number.')).toEqual([
      'Thanks.',
      'Please enter your order number.',
    ])
    expect(askingSentences('👋')).toEqual([])
  })

  it("takes a turn's most slot-like sentence, by how much nearer a slot question than an open turn it lies", () => {
    const found = slotQuestion([OPEN, unit(3, 1, 0, 0)], replyAnchors)!
    expect(found.question).toEqual(unit(3, 1, 0, 0))
    expect(found.margin).toBeCloseTo((3 - 1) / Math.sqrt(10))
    expect(slotQuestion([], replyAnchors)).toBeUndefined()
  })

  it('scores a message by its answer and its likeness to the question against its nearest request', () => {
    expect(replyMargin(unit(0, 0, 1, 0), SLOT, replyAnchors)).toBeCloseTo(0.5)
    expect(replyMargin(unit(0, 0, 0, 1), SLOT, replyAnchors)).toBeCloseTo(-1)
    expect(replyMargin(SLOT, SLOT, replyAnchors)).toBeCloseTo(0.5)
  })

  it('judges a message an answer only after a slot question, and only when it and each clause read as one', async () => {
    const vectors: Record<string, Float32Array> = {
      'Which day suits you?': SLOT,
      'How can I help?': OPEN,
      friday: unit(0, 0, 1, 0),
      'friday, and can I change my address': unit(1, 0, 1, 0.2),
      'and can I change my address': unit(0, 0, 0, 1),
    }
    const embedded: string[] = []
    const embed = async (texts: readonly string[]) => {
      embedded.push(...texts)
      return texts.map((t) => vectors[t]!)
    }
    const texts = ['friday', 'friday', 'friday', 'friday, and can I change my address']
    const answers = await answersToSlotQuestions(
      texts,
      texts.map((t) => vectors[t]!),
      ['Which day suits you?', 'How can I help?', undefined, 'Which day suits you?'],
      replyAnchors,
      embed,
    )
    expect(answers).toEqual([true, false, false, false])
    // The bot's turns are embedded, and the clauses of the one message that reads as an answer whole.
    expect(embedded).toEqual([
      'Which day suits you?',
      'How can I help?',
      'Which day suits you?',
      'friday',
      'and can I change my address',
    ])
    expect(SLOT_MARGIN).toBeGreaterThan(0)
    expect(REPLY_MARGIN).toBe(0)
  })
})
