import { z } from 'zod'
import { journalPositionSchema, utcTimestampSchema, uuidSchema } from './primitives.ts'
import type { StreamType } from './topics.ts'

export const eventMetadataSchema = z
  .object({
    correlationId: z.string().optional().describe('Id shared by every event caused by one request or flow.'),
    causationId: z.string().optional().describe('Id of the event or command that caused this event.'),
    requestId: z.string().optional().describe('Id of the HTTP request that produced this event.'),
    actorId: z
      .string()
      .optional()
      .describe(
        'User id of the signed-in person whose dashboard request committed this event (absent for captures and scheduled jobs).',
      ),
  })
  .catchall(z.string())
  .describe('Tracing data; never business data. Unknown keys are strings and may be ignored.')

export type EventMetadata = z.output<typeof eventMetadataSchema>

const envelopeShape = {
  id: uuidSchema.describe('Unique event id; the same event delivered twice carries the same id.'),
  type: z.string().min(1).describe('Event type, e.g. `conversation.messages-captured`.'),
  version: z.int().min(1).describe('Schema version of this event type; readers upcast old versions.'),
  occurredAt: utcTimestampSchema.describe('When the event was recorded, ISO 8601 UTC.'),
  orgId: uuidSchema.describe(
    'Organization that owns the chatbot (or, for organization events, the organization itself).',
  ),
  chatbotId: uuidSchema.describe(
    'Chatbot the event belongs to; the nil UUID for organization events, which belong to no chatbot.',
  ),
  streamId: uuidSchema.describe(
    'Stream the event belongs to and the topic key: the chatbot id for chatbot events, the internal conversation id for conversation and analysis events.',
  ),
  streamVersion: z
    .int()
    .min(1)
    .describe(
      '1, 2, … without gaps within (stream type, streamId). Consumers drop an event whose streamVersion is ≤ the last one they applied for that stream.',
    ),
  position: journalPositionSchema.describe(
    'Journal position: global, increasing in commit order, a non-negative integer that can exceed 2^53, written as a decimal string. Compare with arbitrary-precision integers.',
  ),
  metadata: eventMetadataSchema,
  payload: z.unknown(),
}

/**
 * The envelope every event shares, with `type`, `version` and `payload` left open: enough to route,
 * log or dead-letter an event whose type this reader does not know. Unknown envelope keys are
 * stripped rather than rejected so that adding an envelope field never breaks an old reader.
 */
export const eventEnvelopeSchema = z.object(envelopeShape)

export type EventEnvelope = z.output<typeof eventEnvelopeSchema>

export function recordedEventSchema<
  const Type extends string,
  const Version extends number,
  Payload extends z.ZodType,
>(type: Type, version: Version, payload: Payload) {
  return eventEnvelopeSchema.extend({ type: z.literal(type), version: z.literal(version), payload })
}

export interface EventDefinition<
  Type extends string = string,
  Version extends number = number,
  Stream extends StreamType = StreamType,
  Payload extends z.ZodType = z.ZodType,
> {
  readonly type: Type
  readonly version: Version
  readonly streamType: Stream
  readonly description: string
  readonly payload: Payload
  /** A valid payload, published in the JSON Schema and used by the tests. */
  readonly example: z.input<Payload>
  readonly schema: ReturnType<typeof recordedEventSchema<Type, Version, Payload>>
}

/** One event type at one version. A schema change is a new definition, never an edit of a published one. */
export function defineEvent<
  const Type extends string,
  const Version extends number,
  const Stream extends StreamType,
  Payload extends z.ZodType,
>(
  definition: Omit<EventDefinition<Type, Version, Stream, Payload>, 'schema'>,
): EventDefinition<Type, Version, Stream, Payload> {
  return {
    ...definition,
    schema: recordedEventSchema(definition.type, definition.version, definition.payload),
  }
}
