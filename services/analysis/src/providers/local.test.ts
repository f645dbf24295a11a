import { UNDETERMINED_LANGUAGE } from '@cas/events'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AnalysisContext, MessageAnalysis, MessageToAnalyze } from '../analyzer.ts'
import { AnalyzerError } from '../analyzer.ts'
import { createLocalAnalyzer, MAX_ANALYZED_CHARS } from './local.ts'
import { SENTIMENT_VERSION } from './sentiment.ts'

const analyzer = createLocalAnalyzer()

async function analyze(content: string, context: AnalysisContext = {}): Promise<MessageAnalysis> {
  const [result] = await analyzer.analyzeMessages([{ id: 'm1', role: 'user', content }], context)
  return result!
}
const score = async (content: string) => (await analyze(content)).sentiment.score

describe('local analyzer: info', () => {
  it('names itself and versions itself by the libraries it runs', () => {
    expect(analyzer.info.name).toBe('local-lexicon')
    expect(analyzer.info.version).toMatch(
      /^vader-sentiment@\d+\.\d+\.\d+\+wink-nlp@\d+\.\d+\.\d+\+wink-eng-lite-web-model@\d+\.\d+\.\d+\+support-v\d+\+v\d+$/,
    )
    expect(analyzer.info.version.startsWith(SENTIMENT_VERSION)).toBe(true)
  })
})

describe('local analyzer: sentiment', () => {
  it.each([
    'Thanks, that was really helpful!',
    'I love this product, it works great',
    'Perfect, thank you so much 👍',
  ])('scores %j positive', async (content) => {
    const { sentiment } = await analyze(content)
    expect(sentiment.label).toBe('positive')
    expect(sentiment.score).toBeGreaterThan(0.3)
    expect(sentiment.score).toBeLessThanOrEqual(1)
  })

  it.each([
    'This is the worst customer service I have ever had',
    'Your bot is useless and I hate it',
    'My refund for the broken umbrella has not arrived',
  ])('scores %j negative', async (content) => {
    const { sentiment } = await analyze(content)
    expect(sentiment.label).toBe('negative')
    expect(sentiment.score).toBeLessThan(-0.3)
    expect(sentiment.score).toBeGreaterThanOrEqual(-1)
  })

  it.each([
    'Can I change the delivery address for order 5521?',
    'The package arrived on Tuesday.',
    'What is your return policy?',
  ])('scores %j neutral', async (content) => {
    expect(await analyze(content)).toMatchObject({ sentiment: { score: 0, label: 'neutral' } })
  })

  it('handles negation: "not good" is negative, "not bad" is not negative', async () => {
    expect(await score('The delivery was good')).toBeGreaterThan(0.05)
    expect(await score('The delivery was not good')).toBeLessThan(-0.05)
    expect(await score("The delivery wasn't good")).toBeLessThan(-0.05)
    expect(await score('The delivery was not bad')).toBeGreaterThanOrEqual(0)
    expect(await score('The delivery was not bad')).toBeGreaterThan(await score('The delivery was bad'))
  })

  it('handles intensity: boosters, exclamation marks and capitals raise the score', async () => {
    const good = await score('The delivery was good')
    expect(await score('The delivery was very good')).toBeGreaterThan(good)
    expect(await score('The delivery was good!!!')).toBeGreaterThan(good)
    expect(await score('The delivery was GOOD')).toBeGreaterThan(good)
    expect(await score('The delivery was slightly good')).toBeLessThan(good)
    const bad = await score('The delivery was bad')
    expect(await score('The delivery was extremely bad')).toBeLessThan(bad)
  })

  it('scores emoji and emoticons', async () => {
    expect(await score('😍')).toBeGreaterThan(0.05)
    expect(await score('the delivery 😡')).toBeLessThan(-0.05)
    expect(await score('I love it 😍')).toBeGreaterThan(await score('I love it'))
    expect(await score('thanks :)')).toBeGreaterThan(await score('thanks'))
  })

  it('is deterministic: the same input gives the same output, alone or in a batch', async () => {
    const messages: MessageToAnalyze[] = [
      'My refund for the broken umbrella has not arrived!!',
      'I love the new coffee maker 😍 but the box was damaged',
    ].map((content, i) => ({ id: `m${i}`, role: 'user', content }))
    const context = { topics: { returns: ['refund'] } }
    const first = await analyzer.analyzeMessages(messages, context)
    expect(await analyzer.analyzeMessages(messages, context)).toEqual(first)
    expect(await createLocalAnalyzer().analyzeMessages(messages, context)).toEqual(first)
    expect(await analyzer.analyzeMessages([messages[1]!], context)).toEqual([first[1]])
  })
})

describe('local analyzer: topics', () => {
  const topics = { billing: ['bill', 'invoice', 'credit card'], shipping: ['delivery', 'tracking number'] }

  it("puts the chatbot's own labels first, matching keywords as whole words, case-insensitively", async () => {
    expect((await analyze('Where is my BILL?', { topics })).topics[0]).toBe('billing')
    expect((await analyze('There are a billion reasons', { topics })).topics).not.toContain('billing')
    expect((await analyze('I paid the bills', { topics })).topics).not.toContain('billing')
    expect((await analyze('Mobile-bill overdue', { topics })).topics).toContain('billing')
  })

  it('matches multi-word keywords across any whitespace, not their words alone', async () => {
    expect((await analyze('The tracking\n number is wrong', { topics })).topics).toContain('shipping')
    expect((await analyze('The tracking page is down', { topics })).topics).not.toContain('shipping')
    expect((await analyze('I paid with my Credit Card', { topics })).topics[0]).toBe('billing')
  })

  it('orders labels by keyword hits, lowercases labels and does not repeat a matched keyword', async () => {
    const result = await analyze(
      'Your delivery was late, the delivery guy was rude, and the invoice is wrong',
      {
        topics: { Billing: ['invoice'], ' Shipping  Issues ': ['delivery'] },
      },
    )
    expect(result.topics.slice(0, 2)).toEqual(['shipping issues', 'billing'])
    expect(result.topics).not.toContain('delivery')
    expect(result.topics).not.toContain('invoice')
  })

  it('extracts key phrases from a realistic support message', async () => {
    const result = await analyze('My refund for the broken umbrella has not arrived')
    expect(result.topics).toContain('refund')
    expect(result.topics.some((t) => t === 'umbrella' || t === 'broken umbrella')).toBe(true)
    expect(result.topics[0]).toBe('refund')
  })

  it('keeps key phrases clean: lowercase, no stopwords, pronouns, numbers, 1-char tokens or sentiment words', async () => {
    const result = await analyze('I ordered 2 Wireless Headphones for my mom and I love them, thanks! x')
    for (const topic of result.topics) {
      expect(topic).toBe(topic.toLowerCase())
      expect(topic.split(' ').length).toBeLessThanOrEqual(3)
      expect(topic).not.toMatch(/^(i|my|me|them|and|for|2|x|love|thanks)$/)
      expect(topic).not.toMatch(/\s{2}|^\s|\s$/)
    }
    expect(result.topics).toEqual(['wireless headphones', 'mom'])
    expect((await analyze('Two wireless headphones arrived')).topics).toEqual(['wireless headphone'])
    expect((await analyze('GOOD')).topics).toEqual([])
    expect((await analyze('MY ORDER NEVER ARRIVED')).topics).toEqual(['order'])
  })

  it('returns at most 5 distinct topics', async () => {
    const result = await analyze(
      'The invoice, the delivery, the laptop bag, the coffee maker, the phone case, the winter boots, ' +
        'the gift card and the running shoes: the laptop bag again',
      { topics },
    )
    expect(result.topics).toHaveLength(5)
    expect(new Set(result.topics).size).toBe(5)
    expect(result.topics.slice(0, 3)).toEqual(['billing', 'shipping', 'laptop bag'])
  })

  it('ignores labels without keywords', async () => {
    expect((await analyze('billing question', { topics: { billing: [] } })).topics).not.toContain('billing')
  })
})

describe('local analyzer: batches and edge cases', () => {
  it('gives empty content a neutral score of 0 and no topics', async () => {
    for (const content of ['', '   ', '\n\t']) {
      expect(await analyze(content, { topics: { billing: ['bill'] } })).toEqual({
        messageId: 'm1',
        sentiment: { score: 0, label: 'neutral' },
        topics: [],
        // No text to tell a language by (language.ts).
        language: UNDETERMINED_LANGUAGE,
      })
    }
  })

  it('returns one result per message, in order, for 100 messages in one call', async () => {
    const contents = ['I love it', 'I hate it', 'Where is my package?', '', 'The invoice is wrong']
    const messages: MessageToAnalyze[] = Array.from({ length: 100 }, (_, i) => ({
      id: `msg-${i}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: contents[i % contents.length]!,
    }))
    const results = await analyzer.analyzeMessages(messages, { topics: { billing: ['invoice'] } })
    expect(results.map((r) => r.messageId)).toEqual(messages.map((m) => m.id))
    expect(results.map((r) => r.sentiment.label)).toEqual(
      messages.map((_, i) => ['positive', 'negative', 'neutral', 'neutral', 'negative'][i % 5]),
    )
    expect(results[4]!.topics[0]).toBe('billing')
    expect(await analyzer.analyzeMessages([], {})).toEqual([])
  })

  it('survives odd input: long text, symbols only, code, prototype names', async () => {
    const long = 'The refund is late. '.repeat(5_000)
    expect(long.length).toBeGreaterThan(MAX_ANALYZED_CHARS)
    const results = await analyzer.analyzeMessages(
      [
        long,
        '!!!???',
        '```const x = {a: 1}```',
        'constructor __proto__ hasOwnProperty toString',
        '🇫🇷👨‍👩‍👧',
      ].map((content, i) => ({ id: String(i), role: 'user', content })),
      { topics: { constructor: ['__proto__'] } },
    )
    expect(results).toHaveLength(5)
    for (const r of results) {
      expect(r.sentiment.score).toBeGreaterThanOrEqual(-1)
      expect(r.sentiment.score).toBeLessThanOrEqual(1)
      expect(r.topics.length).toBeLessThanOrEqual(5)
    }
    expect(results[3]!.topics[0]).toBe('constructor')
  })

  it('never throws on any text, keeps scores in range, topics bounded and lowercase, and is deterministic', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 200 }),
          fc.string({ unit: 'binary', maxLength: 200 }),
        ),
        async (content) => {
          const context = { topics: { billing: ['bill', 'credit card'] } }
          const [a] = await analyzer.analyzeMessages([{ id: 'x', role: 'user', content }], context)
          const [b] = await analyzer.analyzeMessages([{ id: 'x', role: 'user', content }], context)
          expect(b).toEqual(a)
          expect(Math.abs(a!.sentiment.score)).toBeLessThanOrEqual(1)
          expect(a!.topics.length).toBeLessThanOrEqual(5)
          for (const topic of a!.topics) expect(topic).toBe(topic.toLowerCase())
        },
      ),
      { numRuns: 300, seed: 7 },
    )
  })

  it('stops on an aborted signal with a retryable error', async () => {
    const controller = new AbortController()
    controller.abort()
    const error = await analyzer
      .analyzeMessages([{ id: 'm1', role: 'user', content: 'hi' }], {}, controller.signal)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AnalyzerError)
    expect(error).toMatchObject({ code: 'timeout', retryable: true })
  })
})
