import { describe, expect, it } from 'vitest'
import {
  answersToSlotQuestions,
  askedSlot,
  askingUnits,
  REPLY_MARGIN,
  replyMargin,
  SLOT_MARGIN,
  slotQuestion,
} from './answers.ts'
import { normalized } from './vectors.ts'

/** Unit vectors in 4 dimensions: axis 0 a slot question, 1 an open or informing turn, 2 an answer, 3 a request. */
const unit = (...v: number[]) => normalized(Float32Array.from(v))
const replyAnchors = {
  slot: [unit(1, 0, 0, 0)],
  open: [unit(0, 1, 0, 0)],
  answer: [unit(0, 0, 1, 0)],
  request: [unit(0, 0, 0, 1)],
}
const SLOT = unit(1, 0, 0, 0)
const OPEN = unit(0, 1, 0, 0)

describe("an answer to the bot's question for a detail: the decision", () => {
  it("reads a bot's questions among the units the signals embed, or all of them when it asks none", () => {
    expect(askingUnits('Sorry about that! Could you give me your order number?')).toEqual([
      'Could you give me your order number?',
    ])
    expect(askingUnits('What can I help you with?\n• Bookings\n• Gift cards')).toEqual([
      'What can I help you with?',
    ])
    expect(askingUnits('Thanks. Please enter your order number.')).toEqual([
      'Thanks.',
      'Please enter your order number.',
    ])
    // One sentence: the whole turn, the unit the signals embed for it.
    expect(askingUnits('Which day would suit you?')).toEqual(['Which day would suit you?'])
    expect(askingUnits('👋')).toEqual([])
  })

  it("takes a turn's most slot-like unit, by how much nearer a slot question than an open turn it lies", () => {
    const found = slotQuestion([OPEN, unit(3, 1, 0, 0)], replyAnchors)!
    expect(found.question).toEqual(unit(3, 1, 0, 0))
    expect(found.margin).toBeCloseTo((3 - 1) / Math.sqrt(10))
    expect(slotQuestion([], replyAnchors)).toBeUndefined()
  })

  it('says a turn asks for a detail only when its most slot-like unit reaches the slot margin', () => {
    expect(askedSlot([OPEN, SLOT], replyAnchors)).toEqual(SLOT)
    expect(askedSlot([OPEN], replyAnchors)).toBeUndefined()
    // Nearly as near an open turn as a slot question: it asks for no detail.
    expect(askedSlot([unit(1, 0.95, 0, 0)], replyAnchors)).toBeUndefined()
    expect(askedSlot([], replyAnchors)).toBeUndefined()
  })

  it('scores a message by its answer and its likeness to the question against its nearest request', () => {
    expect(replyMargin(unit(0, 0, 1, 0), SLOT, replyAnchors)).toBeCloseTo(0.5)
    expect(replyMargin(unit(0, 0, 0, 1), SLOT, replyAnchors)).toBeCloseTo(-1)
    expect(replyMargin(SLOT, SLOT, replyAnchors)).toBeCloseTo(0.5)
  })

  it('judges a message an answer only after a slot question, and only when it and each clause read as one', async () => {
    const vectors: Record<string, Float32Array> = {
      friday: unit(0, 0, 1, 0),
      'friday, and can I change my address': unit(1, 0, 1, 0.2),
      'and can I change my address': unit(0, 0, 0, 1),
    }
    const embedded: string[] = []
    const embed = async (texts: readonly string[]) => {
      embedded.push(...texts)
      return texts.map((t) => vectors[t]!)
    }
    const texts = ['friday', 'friday', 'friday, and can I change my address']
    const answers = await answersToSlotQuestions(
      texts,
      texts.map((t) => vectors[t]!),
      [SLOT, undefined, SLOT],
      replyAnchors,
      embed,
    )
    expect(answers).toEqual([true, false, false])
    // Only the clauses of the one message with several that reads as an answer whole: the bot's turns are
    // not embedded here (their slot questions were decided when they were analysed).
    expect(embedded).toEqual(['friday', 'and can I change my address'])
    expect(SLOT_MARGIN).toBeGreaterThan(0)
    expect(REPLY_MARGIN).toBe(0)
  })
})
