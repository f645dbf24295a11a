import { describe, expect, expectTypeOf, it } from 'vitest'
import type { NewEvent } from './domain-event.ts'
import { newEvent } from './new-event.ts'

describe('newEvent', () => {
  it('builds an event at the latest version of its type', () => {
    expect(newEvent('chatbot.renamed', { name: 'Sales bot' })).toEqual({
      type: 'chatbot.renamed',
      version: 1,
      payload: { name: 'Sales bot' },
    })
  })

  it('carries metadata only when given', () => {
    expect(newEvent('chatbot.deleted', {})).not.toHaveProperty('metadata')
    expect(newEvent('chatbot.deleted', {}, { correlationId: 'c-1' })).toEqual({
      type: 'chatbot.deleted',
      version: 1,
      payload: {},
      metadata: { correlationId: 'c-1' },
    })
  })

  it('type-checks the payload against the event type', () => {
    const event = newEvent('analysis.failed', {
      messageIds: ['m-1'],
      reason: 'timeout',
      attempt: 1,
      retryable: true,
    })
    expectTypeOf(event).toEqualTypeOf<NewEvent<'analysis.failed'>>()
    expectTypeOf(event.payload.attempt).toEqualTypeOf<number>()

    // @ts-expect-error chatbot.renamed has no apiKey
    newEvent('chatbot.renamed', { name: 'x', apiKey: 'svc_live_secret' })
    newEvent('conversation.messages-captured', {
      // @ts-expect-error a message role is one of user | assistant | system | tool
      messages: [{ id: 'm', role: 'bot', content: '', sentAt: '2025-01-15T09:30:00Z' }],
      receivedAt: '2025-01-15T09:30:00Z',
      analysisRequested: false,
    })
    // @ts-expect-error not an event type
    newEvent('chatbot.archived', {})
  })

  it('accepts a union of new events where one is expected', () => {
    const events: NewEvent[] = [
      newEvent('conversation.started', {
        conversationId: 'c-1',
        user: {},
        organization: {},
        session: {},
        custom: {},
      }),
      newEvent('chatbot.key-rotated', { apiKeyPrefix: 'svc_live_3f9a…' }),
    ]
    expect(events.map((event) => event.type)).toEqual(['conversation.started', 'chatbot.key-rotated'])
  })
})
