/**
 * What the signal scorer asks the language model for its anchors: the chatbots' own signals' generic
 * background (generic-requests.ts, 150 texts) only once a chatbot has signals of its own, and the same cues
 * as with every anchor embedded at once (cues.ts, embedSignalAnchors).
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestSemanticAnalyzer, describeWithTestModel } from '../../test/test-model.ts'
import type { MessageToAnalyze } from '../analyzer.ts'
import type { SemanticAnalyzer } from '../providers/semantic.ts'
import { dot } from '../topics/vectors.ts'
import { cuesOf, embedCustomSignal, embedSignalAnchors } from './cues.ts'
import { GENERIC_REQUESTS } from './generic-requests.ts'
import { SignalScorer } from './scorer.ts'

describeWithTestModel('the signal scorer, asking the model for its anchors', () => {
  let analyzer: SemanticAnalyzer
  beforeAll(async () => {
    analyzer = await createTestSemanticAnalyzer()
  }, 120_000)
  afterAll(async () => {
    await analyzer?.close?.()
  })

  const messages: MessageToAnalyze[] = [
    { id: 'm0', role: 'user', content: 'Is there any discount code? The price went up again.' },
    { id: 'm1', role: 'assistant', content: 'I can check the offers on your account for you.' },
  ]
  const settings = {
    custom: [{ name: 'custom:asks-for-a-discount', label: 'Asks for a discount', examples: ['any coupon?'] }],
  }

  it('embeds the generic background once a chatbot has signals of its own, with the same cues as every anchor at once', async () => {
    const every: string[] = []
    const embed = analyzer.semantic.embedTexts
    const anchors = await embedSignalAnchors((texts) => {
      every.push(...texts)
      return embed(texts)
    })
    const calls: string[][] = []
    const scorer = new SignalScorer({
      ...analyzer.semantic,
      embedTexts: (texts) => {
        calls.push([...texts])
        return embed(texts)
      },
    })
    const builtin = await scorer.score(messages, undefined)
    // The built-in anchors (every anchor but the generic background, which comes last), then the units.
    expect(calls).toHaveLength(2)
    expect(calls[0]).toEqual(every.slice(0, -GENERIC_REQUESTS.length))

    calls.length = 0
    const withOwn = await scorer.score(messages, settings as never)
    expect(calls).toContainEqual([...GENERIC_REQUESTS])
    calls.length = 0
    await scorer.score(messages, settings as never)
    expect(calls).not.toContainEqual([...GENERIC_REQUESTS])

    // The same cues as scored with every anchor embedded in one call (bench:signals, the model tests).
    const heads = [
      analyzer.semantic.frustrationOf,
      analyzer.semantic.escalationOf,
      analyzer.semantic.handoverOf,
      analyzer.semantic.displeasureOf,
      analyzer.semantic.gratitudeOf,
    ] as const
    const own = await embedCustomSignal(embed, settings.custom[0]!, anchors)
    expect(builtin).toEqual(await cuesOf(messages, anchors, embed, [], ...heads))
    expect(withOwn).toEqual(await cuesOf(messages, anchors, embed, [own], ...heads))
    expect(withOwn[0]!.cues.custom).toHaveProperty('custom:asks-for-a-discount')
  }, 120_000)

  it("starts from the analyzer's similarities of an end user's whole message to the social and request anchors: the same cues", async () => {
    // Issue 31: the topics' request gate computed them in the analyzer (its thread); the cues do not again.
    const conversation: MessageToAnalyze[] = [
      ...messages,
      { id: 'm2', role: 'user', content: 'thanks, that helps! one more thing: can I pay by card?' },
      {
        id: 'm3',
        role: 'user',
        content: `  ${'the delivery was late again and nobody answers. '.repeat(30)}`,
      },
      { id: 'm4', role: 'user', content: 'ok' },
    ]
    const analysed = await analyzer.analyzeMessages(conversation, {})
    const anchors = await embedSignalAnchors(analyzer.semantic.embedTexts)
    // The analyzer's numbers are this thread's dot products with the cues' own anchor vectors, bit for bit.
    for (const [i, m] of conversation.entries()) {
      const given = analysed[i]!.anchorSimilarities
      if (m.role !== 'user') {
        expect(given).toBeUndefined()
        continue
      }
      const [whole] = await analyzer.semantic.embedTexts([m.content.trim()])
      expect([...given!.social]).toEqual(anchors.social.map((a) => dot(whole!, a)))
      expect([...given!.request]).toEqual(anchors.request.map((a) => dot(whole!, a)))
    }
    const plain = await new SignalScorer(analyzer.semantic).prepare(conversation, undefined)
    const embeddings = await analyzer.semantic.embedTexts(plain.texts)
    const withGiven = await new SignalScorer(analyzer.semantic).prepare(conversation, undefined)
    expect(withGiven.cues(embeddings, analysed)).toEqual(plain.cues(embeddings))
    // And they are read: other numbers give another social margin (m3, cut at 1,000 characters, is not given).
    const wrong = analysed.map((a) =>
      a.anchorSimilarities
        ? {
            anchorSimilarities: {
              social: a.anchorSimilarities.social.map(() => 1),
              request: a.anchorSimilarities.request,
            },
          }
        : {},
    )
    const misread = (await new SignalScorer(analyzer.semantic).prepare(conversation, undefined)).cues(
      embeddings,
      wrong,
    )
    const right = plain.cues([...embeddings])
    expect(misread[0]!.cues.social).not.toBe(right[0]!.cues.social)
    expect(misread[3]!.cues).toEqual(right[3]!.cues)
  }, 120_000)
})
