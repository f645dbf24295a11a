import { describe, expect, it } from 'vitest'
import { distinctLabel, labelTopic, termCorpus, termsOncePerConversation } from './labels.ts'

const counts = (entries: Record<string, number>) => new Map(Object.entries(entries))

describe('topic labels (class-based TF-IDF)', () => {
  it("ranks a topic's own words above the words every topic uses", () => {
    const refunds = counts({ refund: 5, order: 5, 'money back': 3 })
    const tracking = counts({ track: 5, order: 5, 'order status': 4 })
    const corpus = termCorpus([refunds, tracking])
    expect(labelTopic(refunds, corpus).keywords.slice(0, 2)).toEqual(['refund', 'money back'])
    expect(labelTopic(refunds, corpus).keywords.at(-1)).toBe('order')
  })

  it('names a bigram once, in place of its words', () => {
    const topic = counts({ number: 6, question: 6, 'question number': 6, ask: 2 })
    const other = counts({ password: 4 })
    expect(labelTopic(topic, termCorpus([topic, other])).label).toBe('question number, ask')
  })

  it('passes over words of a single message while others repeat, and labels nothing when it has no words', () => {
    const topic = counts({ invoice: 3, march: 1, receipt: 2 })
    expect(labelTopic(topic, termCorpus([topic])).keywords).toEqual(['invoice', 'receipt'])
    expect(labelTopic(new Map(), termCorpus([]))).toEqual({ label: '', keywords: [] })
  })
})

describe('distinctLabel', () => {
  const topic = { label: 'card, lost, stolen', keywords: ['card', 'lost', 'stolen', 'replace', 'block'] }
  it('keeps a label no other topic has, and lengthens or numbers one that another has', () => {
    expect(distinctLabel(topic, new Set(['refund']))).toBe('card, lost, stolen')
    expect(distinctLabel(topic, new Set(['card, lost, stolen']))).toBe('card, lost, stolen, replace')
    const all = new Set([
      'card, lost, stolen',
      'card, lost, stolen, replace',
      'card, lost, stolen, replace, block',
    ])
    expect(distinctLabel(topic, all)).toBe('card, lost, stolen (2)')
  })
})

describe('termsOncePerConversation', () => {
  it("leaves out the terms an earlier member of the same conversation gave, and keeps other conversations'", () => {
    const terms = termsOncePerConversation([
      { conversationId: 'a', terms: ['dad', 'address'] },
      { conversationId: 'b', terms: ['dad', 'address'] },
      { conversationId: 'a', terms: ['dad', 'letter', 'address'] },
    ])
    expect(terms).toEqual([['dad', 'address'], ['dad', 'address'], ['letter']])
  })
})
