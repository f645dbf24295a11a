import { describe, expect, it } from 'vitest'
import { expectAccepted, expectRejectedAt, rawEvent, rawEventWithPayload } from '../test/support.ts'
import {
  chatbotCreatedV1,
  chatbotDeletedV1,
  chatbotEventDefinitions,
  chatbotEventSchema,
  chatbotKeyRotatedV1,
  chatbotRenamedV1,
  chatbotSettingsChangedV1,
} from './chatbot-events.ts'

describe('chatbot events', () => {
  it.each(chatbotEventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s accepts its example',
    (_, definition) => {
      expectAccepted(definition.schema, rawEvent(definition))
      expectAccepted(chatbotEventSchema, rawEvent(definition))
    },
  )

  describe('never carry a secret', () => {
    const fullKey = 'svc_live_3f9a0c1d2e3f4a5b6c7d8e9f0a1b2c3d'

    it.each([
      ['chatbot.created', 'apiKey', chatbotCreatedV1],
      ['chatbot.created', 'apiKeyHash', chatbotCreatedV1],
      ['chatbot.key-rotated', 'apiKey', chatbotKeyRotatedV1],
      ['chatbot.key-rotated', 'apiKeyHash', chatbotKeyRotatedV1],
      ['chatbot.renamed', 'password', chatbotRenamedV1],
      ['chatbot.deleted', 'apiKey', chatbotDeletedV1],
    ] as const)('%s rejects an extra %s field', (_, field, definition) => {
      const result = definition.schema.safeParse(rawEventWithPayload(definition, { [field]: fullKey }))
      expect(result.success).toBe(false)
      expect(result.error?.issues).toContainEqual(
        expect.objectContaining({ code: 'unrecognized_keys', keys: [field], path: ['payload'] }),
      )
    })

    it.each([chatbotCreatedV1, chatbotKeyRotatedV1])(
      '$type rejects a full key as the prefix',
      (definition) => {
        expectRejectedAt(
          definition.schema,
          rawEventWithPayload(definition, { apiKeyPrefix: fullKey }),
          'payload.apiKeyPrefix',
        )
      },
    )

    it('accepts only the 13-character prefix followed by …', () => {
      expectAccepted(
        chatbotKeyRotatedV1.schema,
        rawEventWithPayload(chatbotKeyRotatedV1, { apiKeyPrefix: 'svc_live_0000…' }),
      )
      for (const apiKeyPrefix of ['svc_live_3f9a', 'svc_live_3f9a...', 'svc_live_3f9ab…', 'svc_live_3F9A…']) {
        expectRejectedAt(
          chatbotKeyRotatedV1.schema,
          rawEventWithPayload(chatbotKeyRotatedV1, { apiKeyPrefix }),
          'payload.apiKeyPrefix',
        )
      }
    })
  })

  it.each([
    ['empty', ''],
    ['longer than 100', 'x'.repeat(101)],
    ['not a string', 42],
  ])('chatbot.created and chatbot.renamed reject a name that is %s', (_, name) => {
    expectRejectedAt(chatbotCreatedV1.schema, rawEventWithPayload(chatbotCreatedV1, { name }), 'payload.name')
    expectRejectedAt(chatbotRenamedV1.schema, rawEventWithPayload(chatbotRenamedV1, { name }), 'payload.name')
  })

  it('chatbot.created requires name, settings and apiKeyPrefix', () => {
    for (const field of ['name', 'settings', 'apiKeyPrefix']) {
      expectRejectedAt(
        chatbotCreatedV1.schema,
        rawEventWithPayload(chatbotCreatedV1, { [field]: undefined }),
        `payload.${field}`,
      )
    }
  })

  it('settings are any JSON object, but only JSON', () => {
    const settings = {
      onboarded: true,
      customFields: { plan: 'string' },
      tags: ['a', 1, null],
      nested: { a: { b: {} } },
    }
    expectAccepted(chatbotCreatedV1.schema, rawEventWithPayload(chatbotCreatedV1, { settings }))
    expectAccepted(chatbotCreatedV1.schema, rawEventWithPayload(chatbotCreatedV1, { settings: {} }))
    expectRejectedAt(
      chatbotCreatedV1.schema,
      rawEventWithPayload(chatbotCreatedV1, { settings: [] }),
      'payload.settings',
    )
    expectRejectedAt(
      chatbotCreatedV1.schema,
      rawEvent(chatbotCreatedV1, { payload: { ...chatbotCreatedV1.example, settings: { at: new Date() } } }),
      'payload.settings.at',
    )
  })

  it('chatbot.settings-changed carries the patch with its nulls and the resulting settings', () => {
    const payload = {
      patch: { onboarded: null, theme: { color: 'red' } },
      settings: { theme: { color: 'red' } },
    }
    const parsed = chatbotSettingsChangedV1.schema.parse(rawEvent(chatbotSettingsChangedV1, { payload }))
    expect(parsed.payload).toEqual(payload)
    expectRejectedAt(
      chatbotSettingsChangedV1.schema,
      rawEventWithPayload(chatbotSettingsChangedV1, { settings: undefined }),
      'payload.settings',
    )
  })

  it('chatbot.deleted has an empty payload', () => {
    expectRejectedAt(chatbotDeletedV1.schema, rawEvent(chatbotDeletedV1, { payload: undefined }), 'payload')
  })

  it('the stream union rejects a type of another stream', () => {
    expectRejectedAt(
      chatbotEventSchema,
      { ...rawEvent(chatbotRenamedV1), type: 'conversation.started' },
      'type',
    )
  })
})
