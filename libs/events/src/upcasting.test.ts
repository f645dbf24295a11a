import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { rawEvent } from '../test/support.ts'
import { chatbotCreatedV1, chatbotRenamedV1 } from './chatbot-events.ts'
import {
  conversationMessagesCapturedV1,
  conversationMessagesCapturedV2,
  conversationMetadataUpdatedV1,
  conversationMetadataUpdatedV2,
  conversationStartedV1,
  conversationStartedV2,
} from './conversation-events.ts'
import { domainEventSchema, readerEventDefinitions } from './domain-event.ts'
import { defineEvent } from './envelope.ts'
import { InvalidEventError } from './invalid-event-error.ts'
import { upcast } from './upcasters.ts'
import { createUpcaster, defineUpcaster } from './upcasting.ts'

// A made-up evolution of chatbot.renamed: v2 records the previous name, v3 splits the name in two.
const chatbotRenamedV2 = defineEvent({
  type: 'chatbot.renamed',
  version: 2,
  streamType: 'chatbot',
  description: 'Test only.',
  payload: z.strictObject({ name: z.string().min(1), previousName: z.string().nullable() }),
  example: { name: 'Sales bot', previousName: 'Support bot' },
})

const chatbotRenamedV3 = defineEvent({
  type: 'chatbot.renamed',
  version: 3,
  streamType: 'chatbot',
  description: 'Test only.',
  payload: z.strictObject({ displayName: z.string().min(1), previousName: z.string().nullable() }),
  example: { displayName: 'Sales bot', previousName: 'Support bot' },
})

const renamedV1ToV2 = defineUpcaster(chatbotRenamedV1, chatbotRenamedV2, (event) => ({
  name: event.payload.name,
  previousName: null,
}))

const renamedV2ToV3 = defineUpcaster(chatbotRenamedV2, chatbotRenamedV3, (event) => ({
  displayName: event.payload.name,
  previousName: event.payload.previousName,
}))

describe('upcast (the registered upcasters)', () => {
  it.each(
    readerEventDefinitions.map(
      (definition) => [`${definition.type} v${definition.version}`, definition] as const,
    ),
  )('leaves %s, the latest version, as it is', (_, definition) => {
    const raw = rawEvent(definition)
    expect(upcast(raw)).toBe(raw)
  })

  it.each([
    [conversationStartedV1, conversationStartedV2],
    [conversationMessagesCapturedV1, conversationMessagesCapturedV2],
    [conversationMetadataUpdatedV1, conversationMetadataUpdatedV2],
  ] as const)('reads $type v1 (published in clear) as v2 with the same payload', (v1, v2) => {
    const upcasted = upcast(rawEvent(v1))
    expect(upcasted).toEqual(rawEvent(v2))
    expect(domainEventSchema.parse(upcasted)).toEqual(domainEventSchema.parse(rawEvent(v2)))
  })
})

describe('createUpcaster', () => {
  const upcastToV3 = createUpcaster([renamedV2ToV3, renamedV1ToV2])

  it('brings a v1 event to the latest version one step at a time, keeping its envelope', () => {
    const v1 = rawEvent(chatbotRenamedV1, { payload: { name: 'Sales bot' } })
    const latest = chatbotRenamedV3.schema.parse(upcastToV3(v1))
    expect(latest).toEqual({ ...v1, version: 3, payload: { displayName: 'Sales bot', previousName: null } })
  })

  it('starts from the version the event is at, and leaves the latest version alone', () => {
    const v2 = rawEvent(chatbotRenamedV2)
    expect(upcastToV3(v2)).toMatchObject({
      version: 3,
      payload: { displayName: 'Sales bot', previousName: 'Support bot' },
    })
    const v3 = rawEvent(chatbotRenamedV3)
    expect(upcastToV3(v3)).toBe(v3)
  })

  it('does not modify the event it was given', () => {
    const v1 = rawEvent(chatbotRenamedV1)
    const before = structuredClone(v1)
    upcastToV3(v1)
    expect(v1).toEqual(before)
  })

  it('leaves other types, and values that are not events, to the schema to judge', () => {
    const created = rawEvent(chatbotCreatedV1)
    expect(upcastToV3(created)).toBe(created)
    for (const raw of [null, 'chatbot.renamed', { type: 'chatbot.renamed', version: '1' }]) {
      expect(upcastToV3(raw)).toBe(raw)
    }
  })

  it('rejects an old event that does not match its own version', () => {
    const invalid = rawEvent(chatbotRenamedV1, { payload: { name: '' } })
    expect(() => upcastToV3(invalid)).toThrow(InvalidEventError)
    expect(() => upcastToV3(invalid)).toThrow(/payload\.name/)
  })

  it('refuses two upcasters from the same version', () => {
    expect(() => createUpcaster([renamedV1ToV2, renamedV1ToV2])).toThrow(
      'two upcasters for chatbot.renamed v1',
    )
  })

  it('refuses an upcaster that skips a version or changes the type', () => {
    expect(() => defineUpcaster(chatbotRenamedV1, chatbotRenamedV3, () => chatbotRenamedV3.example)).toThrow(
      /chatbot\.renamed v1 → chatbot\.renamed v3/,
    )
    expect(() => defineUpcaster(chatbotCreatedV1, chatbotRenamedV2, () => chatbotRenamedV2.example)).toThrow(
      /chatbot\.created v1 → chatbot\.renamed v2/,
    )
  })
})
