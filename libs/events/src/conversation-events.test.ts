import { describe, expect, it } from 'vitest'
import { expectAccepted, expectRejectedAt, rawEvent, rawEventWithPayload } from '../test/support.ts'
import {
  conversationEventDefinitions,
  conversationEventSchema,
  conversationMessagesCapturedV1,
  conversationMetadataUpdatedV1,
  conversationStartedV1,
} from './conversation-events.ts'
import { readerEventDefinitions } from './domain-event.ts'

const message = { id: 'm-1', role: 'user', content: 'Hello', sentAt: '2025-01-15T09:30:00.000Z' }

function capturedWith(messageOverrides: Record<string, unknown>) {
  return rawEventWithPayload(conversationMessagesCapturedV1, {
    messages: [{ ...message, ...messageOverrides }],
  })
}

describe('conversation events', () => {
  it.each(conversationEventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s accepts its example',
    (_, definition) => {
      expectAccepted(definition.schema, rawEvent(definition))
    },
  )

  it.each(
    readerEventDefinitions
      .filter((definition) => definition.streamType === 'conversation')
      .map((definition) => [definition.type, definition] as const),
  )("the readers' union accepts %s as readers see it", (_, definition) => {
    expectAccepted(conversationEventSchema, rawEvent(definition))
  })

  describe('conversation.messages-captured', () => {
    const schema = conversationMessagesCapturedV1.schema

    it.each(['user', 'assistant', 'system', 'tool'])('accepts role %s', (role) => {
      expectAccepted(schema, capturedWith({ role }))
    })

    it.each(['bot', 'User', ''])('rejects role %j', (role) => {
      expectRejectedAt(schema, capturedWith({ role }), 'payload.messages.0.role')
    })

    it('accepts content from empty to 32768 characters, not more', () => {
      expectAccepted(schema, capturedWith({ content: '' }))
      expectAccepted(schema, capturedWith({ content: 'x'.repeat(32_768) }))
      expectRejectedAt(schema, capturedWith({ content: 'x'.repeat(32_769) }), 'payload.messages.0.content')
    })

    it('accepts message ids of 1 to 256 characters', () => {
      expectAccepted(schema, capturedWith({ id: 'x'.repeat(256) }))
      expectRejectedAt(schema, capturedWith({ id: '' }), 'payload.messages.0.id')
      expectRejectedAt(schema, capturedWith({ id: 'x'.repeat(257) }), 'payload.messages.0.id')
      expectRejectedAt(schema, capturedWith({ id: 7 }), 'payload.messages.0.id')
    })

    it('requires sentAt in UTC: offsets are normalised before an event is recorded', () => {
      expectRejectedAt(
        schema,
        capturedWith({ sentAt: '2025-01-15T10:30:00+01:00' }),
        'payload.messages.0.sentAt',
      )
      expectRejectedAt(schema, capturedWith({ sentAt: undefined }), 'payload.messages.0.sentAt')
      expectRejectedAt(
        schema,
        rawEventWithPayload(conversationMessagesCapturedV1, { receivedAt: '2025-01-15 09:30:00' }),
        'payload.receivedAt',
      )
    })

    it('rejects a message field that is not part of the event', () => {
      expectRejectedAt(schema, capturedWith({ metadata: { a: 1 } }), 'payload.messages.0')
    })

    it('holds at least one message: a batch of duplicates commits no event', () => {
      expectRejectedAt(
        schema,
        rawEventWithPayload(conversationMessagesCapturedV1, { messages: [] }),
        'payload.messages',
      )
    })

    it.each(['messages', 'receivedAt', 'analysisRequested'])('requires %s', (field) => {
      expectRejectedAt(
        schema,
        rawEventWithPayload(conversationMessagesCapturedV1, { [field]: undefined }),
        `payload.${field}`,
      )
    })
  })

  describe.each([
    ['conversation.started', conversationStartedV1],
    ['conversation.metadata-updated', conversationMetadataUpdatedV1],
  ] as const)('%s metadata', (_, definition) => {
    const schema = definition.schema

    it('keeps extra primitive fields of user, organization and session', () => {
      const payload = {
        user: { id: 'u-1', vip: true, age: 41, locale: 'fr' },
        organization: { id: 'o-1', employees: 12 },
        session: { device: 'mobile', returning: false },
        custom: {},
      }
      const parsed = schema.parse(rawEventWithPayload(definition, payload))
      expect(parsed.payload).toMatchObject(payload)
    })

    it('accepts empty metadata objects', () => {
      const empty = { user: {}, organization: {}, session: {}, custom: {} }
      expectAccepted(schema, rawEventWithPayload(definition, empty))
    })

    it.each([
      ['a known user field of the wrong type', { user: { id: 42 } }, 'payload.user.id'],
      ['a known session field of the wrong type', { session: { pageUrl: false } }, 'payload.session.pageUrl'],
      ['a nested user field', { user: { address: { city: 'Paris' } } }, 'payload.user.address'],
      ['a null organization field', { organization: { name: null } }, 'payload.organization.name'],
      ['a nested custom field', { custom: { cart: { total: 3 } } }, 'payload.custom.cart'],
      ['a list as custom field', { custom: { tags: ['a'] } }, 'payload.custom.tags'],
      ['no user object', { user: undefined }, 'payload.user'],
      ['no custom object', { custom: undefined }, 'payload.custom'],
      ['an unknown payload field', { apiKey: 'svc_live_x' }, 'payload'],
    ])('rejects %s', (_, payload, path) => {
      expectRejectedAt(schema, rawEventWithPayload(definition, payload), path)
    })
  })

  it("conversation.started requires the caller's conversation id, 1 to 256 characters", () => {
    const schema = conversationStartedV1.schema
    expectRejectedAt(
      schema,
      rawEventWithPayload(conversationStartedV1, { conversationId: '' }),
      'payload.conversationId',
    )
    expectRejectedAt(
      schema,
      rawEventWithPayload(conversationStartedV1, { conversationId: 'c'.repeat(257) }),
      'payload.conversationId',
    )
    expectRejectedAt(
      schema,
      rawEventWithPayload(conversationStartedV1, { conversationId: undefined }),
      'payload.conversationId',
    )
  })
})
