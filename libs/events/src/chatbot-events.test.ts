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
  chatbotTopicRenameRequestedV1,
  chatbotTopicRenameRequestedV2,
} from './chatbot-events.ts'
import { domainEventSchema, readerEventDefinitions } from './domain-event.ts'
import { generateJsonSchemas } from './json-schemas.ts'
import { topicCommandRequest } from './topic-commands.ts'
import { upcast } from './upcasters.ts'

describe('chatbot events', () => {
  it.each(chatbotEventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s accepts its example',
    (_, definition) => {
      expectAccepted(definition.schema, rawEvent(definition))
      expectAccepted(chatbotEventSchema, upcast(rawEvent(definition)))
    },
  )

  it.each(
    readerEventDefinitions
      .filter((definition) => definition.streamType === 'chatbot')
      .map((definition) => [`${definition.type} v${definition.version}`, definition] as const),
  )("the readers' union accepts %s", (_, definition) => {
    expectAccepted(chatbotEventSchema, rawEvent(definition))
  })

  describe('chatbot.topic-rename-requested v2: the label the topic had', () => {
    const v2 = chatbotTopicRenameRequestedV2

    it('is what a rename asks for now, with the label the deciding side read', () => {
      const topic = { id: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21', label: 'refund, money back' }
      const request = topicCommandRequest(topic, { type: 'rename', label: '  Money   back ' })
      expect(request).toEqual({
        type: 'chatbot.topic-rename-requested',
        payload: { topicId: topic.id, label: 'Money back', previousLabel: 'refund, money back' },
      })
      expectAccepted(chatbotEventSchema, rawEvent(v2, { payload: request.payload }))
    })

    it('requires previousLabel, a string or null, and nothing else', () => {
      expectAccepted(v2.schema, rawEventWithPayload(v2, { previousLabel: null }))
      expectRejectedAt(
        v2.schema,
        rawEventWithPayload(v2, { previousLabel: undefined }),
        'payload.previousLabel',
      )
      expectRejectedAt(v2.schema, rawEventWithPayload(v2, { previousLabel: 7 }), 'payload.previousLabel')
      expectRejectedAt(v2.schema, rawEventWithPayload(v2, { label: '' }), 'payload.label')
      const extra = v2.schema.safeParse(rawEventWithPayload(v2, { previous: 'x' }))
      expect(extra.error?.issues).toContainEqual(
        expect.objectContaining({ code: 'unrecognized_keys', keys: ['previous'], path: ['payload'] }),
      )
      // The readers' union is at v2: a v1 payload is not a v2 one, it is upcast first.
      expectRejectedAt(
        chatbotEventSchema,
        rawEvent(chatbotTopicRenameRequestedV1, { version: 2 }),
        'payload.previousLabel',
      )
    })

    it('reads v1 (before the previous label was recorded) as v2 with previousLabel null', () => {
      const v1 = rawEvent(chatbotTopicRenameRequestedV1)
      const read = domainEventSchema.parse(upcast(v1))
      expect(read).toMatchObject({
        type: 'chatbot.topic-rename-requested',
        version: 2,
        payload: { ...chatbotTopicRenameRequestedV1.example, previousLabel: null },
      })
      // v1 stays valid as it was published: data teams replay it.
      expectAccepted(chatbotTopicRenameRequestedV1.schema, v1)
      expectRejectedAt(
        chatbotTopicRenameRequestedV1.schema,
        rawEventWithPayload(chatbotTopicRenameRequestedV1, { previousLabel: 'x' }),
        'payload',
      )
    })

    it('has a JSON Schema of its own beside v1, previousLabel required and nullable', () => {
      const files = generateJsonSchemas()
      const schema = JSON.parse(files['chatbot.topic-rename-requested.v2.json'] ?? '{}')
      expect(schema).toMatchObject({
        $id: 'urn:cas:events:chatbot.topic-rename-requested:v2',
        properties: {
          version: { const: 2 },
          payload: {
            additionalProperties: false,
            required: ['topicId', 'label', 'previousLabel'],
            properties: { previousLabel: { type: ['string', 'null'] } },
          },
        },
      })
      const v1 = JSON.parse(files['chatbot.topic-rename-requested.v1.json'] ?? '{}')
      expect(v1.properties.payload.required).toEqual(['topicId', 'label'])
      const index = JSON.parse(files['index.json'] ?? '{}') as {
        events: { type: string; version: number; latest: boolean }[]
      }
      expect(index.events.filter((e) => e.type === 'chatbot.topic-rename-requested')).toEqual([
        expect.objectContaining({ version: 1, latest: false }),
        expect.objectContaining({ version: 2, latest: true }),
      ])
    })
  })

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
