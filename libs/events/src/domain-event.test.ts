import { describe, expect, expectTypeOf, it } from 'vitest'
import { expectRejectedAt, rawEvent } from '../test/support.ts'
import { chatbotRenamedV1 } from './chatbot-events.ts'
import { conversationMessagesCapturedV1, conversationMessagesCapturedV2 } from './conversation-events.ts'
import {
  type DomainEvent,
  domainEventSchema,
  type EventPayload,
  eventDefinitions,
  eventStreamTypes,
  latestEventVersions,
  type RecordedEvent,
  readerEventDefinitions,
} from './domain-event.ts'

describe('domain events', () => {
  it('defines each (type, version) once', () => {
    const keys = eventDefinitions.map((definition) => `${definition.type} v${definition.version}`)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it.each(eventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s lives on the stream its name starts with',
    (type, definition) => {
      expect(type.startsWith(`${definition.streamType}.`)).toBe(true)
      expect(eventStreamTypes[type]).toBe(definition.streamType)
    },
  )

  it.each(readerEventDefinitions.map((definition) => [definition.type, definition] as const))(
    'dispatches %s to its own schema by type',
    (type, definition) => {
      const event = domainEventSchema.parse(rawEvent(definition))
      expect(event.type).toBe(type)
      expect(event.payload).toEqual(definition.example)
    },
  )

  it('unions the latest version of every type', () => {
    const latest = readerEventDefinitions
    expect(latest.map((definition) => definition.type)).toEqual(Object.keys(latestEventVersions))
    for (const definition of latest) {
      expect(definition.version).toBe(
        latestEventVersions[definition.type as keyof typeof latestEventVersions],
      )
      expect(domainEventSchema.safeParse(rawEvent(definition)).success).toBe(true)
    }
  })

  it('rejects an unknown type, and a version newer than this reader knows', () => {
    expectRejectedAt(domainEventSchema, rawEvent(chatbotRenamedV1, { type: 'chatbot.archived' }), 'type')
    expectRejectedAt(domainEventSchema, rawEvent(chatbotRenamedV1, { version: 2 }), 'version')
  })

  it('validates the payload of the type it dispatched to', () => {
    expectRejectedAt(
      domainEventSchema,
      rawEvent(chatbotRenamedV1, { payload: conversationMessagesCapturedV1.example }),
      'payload.name',
    )
  })

  it('narrows the payload by type and keeps events readonly', () => {
    const event = domainEventSchema.parse(rawEvent(conversationMessagesCapturedV2)) as DomainEvent
    if (event.type === 'conversation.messages-captured') {
      expectTypeOf(event.payload.messages[0]?.role).toEqualTypeOf<
        'user' | 'assistant' | 'system' | 'tool' | undefined
      >()
      // @ts-expect-error events are readonly data
      event.payload.analysisRequested = false
    }
    expectTypeOf<EventPayload<'chatbot.renamed'>>().toEqualTypeOf<{ readonly name: string }>()
    expectTypeOf<RecordedEvent<'chatbot.deleted'>['streamVersion']>().toEqualTypeOf<number>()
  })
})
