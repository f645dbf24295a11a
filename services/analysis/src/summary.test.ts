import { describe, expect, it } from 'vitest'
import type { TopicRef } from './summary.ts'
import { summarizeConversation } from './summary.ts'

const refs = (...labels: string[]): TopicRef[] => labels.map((label) => ({ id: `id-${label}`, label }))

describe('summarizeConversation', () => {
  it("averages the end user's messages and ranks the topics of their messages by how many mention them", () => {
    const summary = summarizeConversation([
      { role: 'user', score: -0.6, topics: refs('refund', 'umbrella') },
      { role: 'assistant', score: 0.9, topics: refs('apology') },
      { role: 'user', score: -0.2, topics: refs('shipping', 'refund') },
    ])
    expect(summary).toEqual({
      sentiment: { score: -0.4, label: 'negative' },
      assistantSentiment: { score: 0.9, label: 'positive' },
      topics: refs('refund', 'umbrella', 'shipping'),
    })
  })

  it("never takes a topic from the assistant's messages", () => {
    const summary = summarizeConversation([
      { role: 'assistant', score: 0.5, topics: refs('right away') },
      { role: 'user', score: 0, topics: [] },
    ])
    expect(summary.topics).toEqual([])
  })

  it('gives no end-user sentiment without end-user messages, whatever the others say', () => {
    // It took the mean of all messages then: a system prompt and a tool result made the end user positive.
    expect(
      summarizeConversation([
        { role: 'system', score: 0.6, topics: [] },
        { role: 'tool', score: 0.2, topics: [] },
        { role: 'assistant', score: 0.5, topics: [] },
      ]),
    ).toEqual({ sentiment: null, assistantSentiment: { score: 0.5, label: 'positive' }, topics: [] })
    expect(summarizeConversation([])).toEqual({
      sentiment: null,
      assistantSentiment: null,
      topics: [],
    })
  })

  it('names "other" only when no message has a real topic', () => {
    const other = { id: 'other', label: 'other' }
    expect(summarizeConversation([{ role: 'user', score: 0, topics: [other] }]).topics).toEqual([other])
    expect(
      summarizeConversation([
        { role: 'user', score: 0, topics: [other] },
        { role: 'user', score: 0, topics: [other] },
        { role: 'user', score: 0, topics: refs('billing') },
      ]).topics,
    ).toEqual(refs('billing'))
  })

  it('keeps at most five topics', () => {
    const topics = refs('a', 'b', 'c', 'd', 'e', 'f', 'g')
    expect(summarizeConversation([{ role: 'user', score: 0, topics }]).topics).toHaveLength(5)
  })
})
