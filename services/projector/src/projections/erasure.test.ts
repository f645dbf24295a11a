import { describe, expect, it } from 'vitest'
import { recorded } from '../../test/fold-test-support.ts'
import { foldErasure } from './erasure.ts'
import { RollupDeltas } from './rollup-deltas.ts'

describe('the erasure fold', () => {
  it('takes each stored message, its result and its language, back out of its hour', () => {
    // Given a conversation's stored messages: an analysed end user's, an assistant's without a result
    const messages = [
      {
        role: 'user' as const,
        sent_at: new Date('2026-11-20T12:10:00.000Z'),
        sentiment_score: -0.5,
        sentiment_label: 'negative' as const,
        topics: ['refunds'],
        language: 'es',
      },
      {
        role: 'assistant' as const,
        sent_at: new Date('2026-11-20T13:10:00.000Z'),
        sentiment_score: null,
        sentiment_label: null,
        topics: [],
        language: null,
      },
    ]
    // When the conversation is erased
    const rollups = new RollupDeltas()
    foldErasure(recorded('conversation.erased', { reason: 'end-user-erasure' }), messages, rollups)
    // Then both leave their hours' counts, and the result its sentiment and topic
    const writes = rollups.takeWrites()
    expect(
      writes.stats.map((s) => [s.hour, s.messages, s.user, s.assistant, s.sentimentCount, s.negative]),
    ).toEqual([
      ['2026-11-20T12:00:00.000Z', -1, -1, 0, -1, -1],
      ['2026-11-20T13:00:00.000Z', -1, 0, -1, 0, 0],
    ])
    expect(writes.hourlyTopics.map((t) => [t.topic, t.n, t.sentimentSum])).toEqual([['refunds', -1, 0.5]])
    expect(writes.hourlyLanguages.map((l) => [l.hour, l.language, l.n])).toEqual([
      ['2026-11-20T12:00:00.000Z', 'es', -1],
    ])
  })
})
