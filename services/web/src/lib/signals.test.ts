import { describe, expect, it } from 'vitest'
import {
  abandonmentPendingText,
  checkedShare,
  EXAMPLE_EXCERPT_CHARS,
  exampleLinkText,
  failuresOf,
  filterSignalName,
  refinedByText,
  signalName,
} from './signals.ts'

describe('a conversation signal, as the dashboard names it', () => {
  it('says which LLM confirmed it, and nothing when the local model alone decided it', () => {
    expect(refinedByText({ refinedBy: 'llm:gpt-4o-mini' })).toBe('refined by gpt-4o-mini')
    expect(refinedByText({ refinedBy: 'llm:' })).toBe('refined by llm:')
    expect(refinedByText({ refinedBy: null })).toBeNull()
    expect(refinedByText({})).toBeNull()
  })

  it('names built-in signals in words and custom ones by their label', () => {
    expect(signalName({ name: 'bot_failure', label: null })).toBe('Bot failure')
    expect(signalName({ name: 'custom:asks-for-a-discount', label: 'Asks for a discount' })).toBe(
      'Asks for a discount',
    )
  })

  it('names the signal a list is filtered by with the label its conversations carry', () => {
    // Regression: a list filtered by a custom signal (the Analytics page's link) said
    // "Signal: asks-for-a-discount", the slug, where the Analytics page said "Asks for a discount".
    const listed = [
      { signals: [{ name: 'bot_failure', label: null }] },
      { signals: [{ name: 'custom:asks-for-a-discount', label: 'Asks for a discount' }] },
    ]
    expect(filterSignalName('custom:asks-for-a-discount', listed)).toBe('Asks for a discount')
    expect(filterSignalName('custom:asks-for-a-discount', [])).toBe('asks-for-a-discount')
    expect(filterSignalName('bot_failure', listed)).toBe('Bot failure')
  })
})

describe('a rate over the conversations checked for its signal, as the Analytics page says it', () => {
  it('says over how many when fewer were checked than there are, and nothing more when all were', () => {
    expect(checkedShare(0.5, 2, 5)).toBe('50.0 % of 2 checked')
    expect(checkedShare(0.2, 5, 5)).toBe('20.0 %')
  })

  it("counts Needs attention's failures over the topic's conversations checked for bot failure", () => {
    // Regression (issue 32): "failed in 1 of 5 conversations (50.0 %)", the rate over the 2 checked.
    const topic = { botFailures: 1, conversations: 5, conversationsChecked: 2, botFailureRate: 0.5 }
    expect(failuresOf(topic)).toBe('the bot failed in 1 of 2 conversations checked for it (50.0 %)')
    expect(failuresOf({ ...topic, conversationsChecked: 5, botFailureRate: 0.2 })).toBe(
      'the bot failed in 1 of 5 conversations (20.0 %)',
    )
  })
})

describe("a Needs attention example's link", () => {
  // The date as the page formats it; a stand-in here, so that no zone or locale is asserted.
  const on = (iso: string) => `on ${iso}`
  const at = '2026-11-12T14:03:00.000Z'

  it("reads the end user's first words and when the conversation started", () => {
    // Regression (issue 32): the links read "conversation 1", "conversation 2", "conversation 3".
    expect(exampleLinkText({ excerpt: 'My card never arrived', firstMessageAt: at }, on)).toBe(
      '\u201cMy card never arrived\u201d \u00b7 on 2026-11-12T14:03:00.000Z',
    )
  })

  it('cuts a long excerpt on a word, with an ellipsis, and never inside an emoji', () => {
    const long = `Why was my card declined when I paid for the ${'very '.repeat(20)}expensive kettle`
    const text = exampleLinkText({ excerpt: long, firstMessageAt: at }, on)
    const words = text.slice(1, text.indexOf('\u201d'))
    expect(words).toMatch(/^Why was my card declined when I paid for the( very)+…$/)
    expect([...words].length).toBeLessThanOrEqual(EXAMPLE_EXCERPT_CHARS + 1)
    const emoji = exampleLinkText({ excerpt: '🙂'.repeat(100), firstMessageAt: at }, on)
    expect(emoji).toBe(`\u201c${'🙂'.repeat(EXAMPLE_EXCERPT_CHARS)}…\u201d \u00b7 on ${at}`)
  })

  it('says when the end user has said nothing yet', () => {
    expect(exampleLinkText({ excerpt: null, firstMessageAt: at }, on)).toBe(
      `No message from the end user yet \u00b7 on ${at}`,
    )
  })
})

describe('the abandonments still to be decided, as the Analytics page says them', () => {
  const at = (iso: string) => `<${iso}>`
  it('counts the conversations within the quiet period and says when the first is due', () => {
    expect(
      abandonmentPendingText(
        { conversations: 12, nextDueAt: '2026-12-02T07:30:00.000Z', quietPeriodMinutes: 30 },
        at,
      ),
    ).toBe(
      '12 conversations are still within the 30-minute quiet period; their abandonment is not yet decided. The first is decided from <2026-12-02T07:30:00.000Z>.',
    )
    expect(
      abandonmentPendingText(
        { conversations: 1, nextDueAt: '2026-12-02T07:30:00.000Z', quietPeriodMinutes: 1 },
        at,
      ),
    ).toBe(
      '1 conversation is still within the 1-minute quiet period; its abandonment is not yet decided. It is decided from <2026-12-02T07:30:00.000Z>.',
    )
  })

  it("names no period when the chatbots' differ, and says nothing when none waits", () => {
    expect(abandonmentPendingText({ conversations: 3, nextDueAt: null, quietPeriodMinutes: null }, at)).toBe(
      "3 conversations are still within their chatbot's quiet period; their abandonment is not yet decided.",
    )
    expect(
      abandonmentPendingText({ conversations: 0, nextDueAt: null, quietPeriodMinutes: 30 }, at),
    ).toBeNull()
  })
})
