/**
 * What the language model is asked when a job is analysed and its signals scored: each distinct text
 * once. The signals' scoring finds the end users' messages the analysis embedded (cached by text), and
 * embeds only what the analysis did not: the assistant's messages and the messages' sentences.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestSemanticAnalyzer, describeWithTestModel } from '../../test/test-model.ts'
import type { MessageToAnalyze } from '../analyzer.ts'
import { SignalScorer } from '../signals/scorer.ts'
import type { SemanticAnalyzer } from './semantic.ts'

describeWithTestModel('the language model, asked once per text', () => {
  let analyzer: SemanticAnalyzer
  let asked: string[][]
  beforeAll(async () => {
    analyzer = await createTestSemanticAnalyzer()
    const model = analyzer.model as { embed: (texts: readonly string[]) => Promise<Float32Array[]> }
    const embed = model.embed.bind(model)
    model.embed = (texts) => {
      asked.push([...texts])
      return embed(texts)
    }
  }, 120_000)
  afterAll(async () => {
    await analyzer?.close?.()
  })

  it("embeds each of a job's texts once, for its sentiment, topics and signals together", async () => {
    const scorer = new SignalScorer(analyzer.semantic)
    // The signals' anchors first: embedded once per analyzer.
    asked = []
    await scorer.score([{ id: 'x', role: 'user', content: 'warm up the anchors' }], undefined)
    const messages: MessageToAnalyze[] = [
      { id: 'm0', role: 'user', content: 'Hi there. My card was declined at the shop. Can you check why?' },
      { id: 'm1', role: 'assistant', content: 'Sorry about that. Let me check your card for you.' },
      { id: 'm2', role: 'user', content: 'My card was declined at the shop again' },
    ]
    asked = []
    const results = await analyzer.analyzeMessages(messages, {})
    const scored = await scorer.score(messages, undefined)
    // The analysis' call, then the signals' call for what it did not embed.
    expect(asked).toHaveLength(2)
    const texts = asked.flat()
    expect(new Set(texts).size).toBe(texts.length)
    expect(texts).toEqual(
      expect.arrayContaining([
        'Hi there. My card was declined at the shop. Can you check why?',
        'Hi there.',
        'My card was declined at the shop.',
        'Can you check why?',
        'Sorry about that. Let me check your card for you.',
        'My card was declined at the shop again',
      ]),
    )
    // The vector the signals compare (repetition) is the one the analysis placed: the same embedding.
    expect(scored[0]!.vector).toBe(results[0]!.embedding)
    expect(scored[2]!.vector).toBe(results[2]!.embedding)
  })
})
