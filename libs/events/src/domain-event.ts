import { z } from 'zod'
import { analysisEventDefinitions, analysisEventSchema } from './analysis-events.ts'
import { chatbotEventDefinitions, chatbotEventSchema } from './chatbot-events.ts'
import { conversationEventDefinitions, conversationEventSchema } from './conversation-events.ts'
import type { EventDefinition, EventMetadata } from './envelope.ts'
import { organizationEventDefinitions, organizationEventSchema } from './organization-events.ts'
import type { DeepReadonly } from './primitives.ts'
import { type SealedEventDefinition, sealedRegistry } from './sealed.ts'

/** Every published (type, version), oldest version first within a type. */
export const eventDefinitions = [
  ...chatbotEventDefinitions,
  ...conversationEventDefinitions,
  ...analysisEventDefinitions,
  ...organizationEventDefinitions,
] as const

/** The published (type, version)s whose personal fields travel sealed, by `type vN`. */
export const sealedEvents = sealedRegistry(eventDefinitions)

/** Any recorded event at its latest version, opened (personal fields in clear). */
export const domainEventSchema = z.discriminatedUnion('type', [
  chatbotEventSchema,
  conversationEventSchema,
  analysisEventSchema,
  organizationEventSchema,
])

export type ChatbotEvent = DeepReadonly<z.output<typeof chatbotEventSchema>>
export type ConversationEvent = DeepReadonly<z.output<typeof conversationEventSchema>>
export type AnalysisEvent = DeepReadonly<z.output<typeof analysisEventSchema>>
export type OrganizationEvent = DeepReadonly<z.output<typeof organizationEventSchema>>
export type DomainEvent = ChatbotEvent | ConversationEvent | AnalysisEvent | OrganizationEvent

export type EventType = DomainEvent['type']
export type ChatbotEventType = ChatbotEvent['type']
export type ConversationEventType = ConversationEvent['type']
export type AnalysisEventType = AnalysisEvent['type']
export type OrganizationEventType = OrganizationEvent['type']

/** An event as read from the journal or a topic: the full envelope, at the latest version of its type. */
export type RecordedEvent<Type extends EventType = EventType> = Extract<DomainEvent, { type: Type }>

export type EventPayload<Type extends EventType> = RecordedEvent<Type>['payload']

type NewEventByType = {
  readonly [Type in EventType]: {
    readonly type: Type
    readonly version: RecordedEvent<Type>['version']
    readonly payload: EventPayload<Type>
    readonly metadata?: DeepReadonly<EventMetadata>
  }
}

/**
 * What a command handler decides; the journal adds the rest of the envelope (id, occurredAt, org,
 * chatbot and stream ids, streamVersion, position) when it appends the event.
 */
export type NewEvent<Type extends EventType = EventType> = NewEventByType[Type]

function latestDefinitions() {
  const latest = new Map<string, (typeof eventDefinitions)[number]>()
  for (const definition of eventDefinitions) {
    const seen = latest.get(definition.type)
    if (!seen || seen.version < definition.version) latest.set(definition.type, definition)
  }
  return latest
}

const latest = latestDefinitions()

/**
 * What readers see: the latest version of every type, the sealed ones opened (personal fields in clear).
 * `domainEventSchema` is the union of these.
 */
export const readerEventDefinitions: readonly EventDefinition[] = [...latest.values()].map((definition) =>
  'opened' in definition ? (definition as SealedEventDefinition).opened : definition,
)

export const latestEventVersions = Object.fromEntries(
  [...latest.values()].map((definition) => [definition.type, definition.version]),
) as { readonly [Type in EventType]: RecordedEvent<Type>['version'] }

type StreamTypes = {
  readonly [Definition in (typeof eventDefinitions)[number] as Definition['type']]: Definition['streamType']
}

/** The stream type, and so the topic, of each event type. */
export const eventStreamTypes = Object.fromEntries(
  [...latest.values()].map((definition) => [definition.type, definition.streamType]),
) as StreamTypes
