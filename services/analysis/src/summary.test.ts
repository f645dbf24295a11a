import { describe, expect, it } from 'vitest'
import { summarizeConversation } from './summary.ts'

describe('summarizeConversation', () => {
  it("averages the end user's messages and ranks topics by how many messages mention them", () => {
    const summary = summarizeConversation([
      { role: 'user', score: -0.6, topics: ['refund', 'umbrella'] },
      { role: 'assistant', score: 0.9, topics: ['refund'] },
      { role: 'user', score: -0.2, topics: ['shipping', 'refund'] },
    ])
    expect(summary).toEqual({
      sentiment: { score: -0.4, label: 'negative' },
      topics: ['refund', 'umbrella', 'shipping'],
    })
  })

  it('falls back to all messages without end-user messages, and is neutral when empty', () => {
    expect(summarizeConversation([{ role: 'assistant', score: 0.5, topics: [] }]).sentiment).toEqual({
      score: 0.5,
      label: 'positive',
    })
    expect(summarizeConversation([])).toEqual({ sentiment: { score: 0, label: 'neutral' }, topics: [] })
  })

  it('keeps at most five topics', () => {
    const topics = ['a', 'b', 'c', 'd', 'e', 'f', 'g']
    expect(summarizeConversation([{ role: 'user', score: 0, topics }]).topics).toHaveLength(5)
  })
})
