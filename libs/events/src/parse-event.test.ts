import { describe, expect, it } from 'vitest'
import { rawEvent, rawEventWithPayload } from '../test/support.ts'
import { analysisMessagesAnalyzedV1 } from './analysis-events.ts'
import { conversationMessagesCapturedV1 } from './conversation-events.ts'
import { readerEventDefinitions } from './domain-event.ts'
import { InvalidEventError } from './invalid-event-error.ts'
import { parseRecordedEvent, safeParseRecordedEvent } from './parse-event.ts'

describe('parseRecordedEvent', () => {
  it.each(readerEventDefinitions.map((definition) => [definition.type, definition] as const))(
    'round-trips %s through JSON unchanged',
    (_, definition) => {
      const raw = rawEvent(definition)
      const event = parseRecordedEvent(JSON.parse(JSON.stringify(raw)))
      expect(event).toEqual(raw)
      expect(parseRecordedEvent(JSON.parse(JSON.stringify(event)))).toEqual(event)
    },
  )

  it('throws an InvalidEventError with a stable code listing every issue with its path', () => {
    const raw = rawEventWithPayload(conversationMessagesCapturedV1, {
      messages: [{ id: 'm-1', role: 'robot', content: 'hi', sentAt: '2025-01-15T10:00:00+01:00' }],
    })
    let caught: unknown
    try {
      parseRecordedEvent(raw)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(InvalidEventError)
    const error = caught as InvalidEventError
    expect(error.code).toBe('invalid_event')
    expect(error.retryable).toBe(false)
    expect(error.issues.map((issue) => issue.path.join('.'))).toEqual([
      'payload.messages.0.role',
      'payload.messages.0.sentAt',
    ])
    expect(error.message).toMatch(/^invalid event conversation\.messages-captured v1 \(id [0-9a-f-]+\): /)
    expect(error.message).toContain('payload.messages.0.role: ')
  })

  it('never puts payload values in the error message, since payloads hold personal data', () => {
    const content = 'my card number is 4111 1111 1111 1111'
    const raw = rawEventWithPayload(conversationMessagesCapturedV1, {
      messages: [{ id: 'm-1', role: content, content, sentAt: content }],
    })
    const result = safeParseRecordedEvent(raw)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error.message).not.toContain('4111')
  })

  it.each([null, 'chatbot.created', 42, []])('rejects %j', (raw) => {
    expect(() => parseRecordedEvent(raw)).toThrow(InvalidEventError)
  })
})

describe('safeParseRecordedEvent', () => {
  it('returns the event', () => {
    const result = safeParseRecordedEvent(rawEvent(analysisMessagesAnalyzedV1))
    expect(result.ok).toBe(true)
    if (result.ok) expect(result.event.type).toBe('analysis.messages-analyzed')
  })

  it('returns the error instead of throwing it', () => {
    const result = safeParseRecordedEvent(rawEvent(analysisMessagesAnalyzedV1, { position: -1 }))
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(InvalidEventError)
      expect(result.error.issues.map((issue) => issue.path.join('.'))).toEqual(['position'])
    }
  })
})
