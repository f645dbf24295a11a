import { z } from 'zod'
import { eventDefinitions, latestEventVersions } from './domain-event.ts'
import type { EventDefinition } from './envelope.ts'
import { NO_CHATBOT_ID } from './organization-events.ts'
import { streamTopics } from './topics.ts'

/** Base of every `$id`: a URN, because the schemas are published with the repository, not at a URL. */
export const jsonSchemaIdBase = 'urn:cas:events:'

export const jsonSchemaIndexFileName = 'index.json'

export function jsonSchemaFileName(type: string, version: number): string {
  return `${type}.v${version}.json`
}

/**
 * The JSON Schema files of every published event type and version, plus an index, as
 * file name → content. Pure and deterministic (key order follows the zod schemas), so a test can
 * tell whether the committed files in `libs/events/schemas/` are current.
 */
export function generateJsonSchemas(): Record<string, string> {
  const files: Record<string, string> = {}
  for (const definition of eventDefinitions) {
    files[jsonSchemaFileName(definition.type, definition.version)] = toJsonText(eventJsonSchema(definition))
  }
  files[jsonSchemaIndexFileName] = toJsonText(indexDocument())
  return files
}

function eventJsonSchema(definition: EventDefinition): Record<string, unknown> {
  // `input` keeps the envelope open to new fields (readers strip what they do not know) while the
  // strict payload objects still say `additionalProperties: false`.
  const { $schema, ...schema } = z.toJSONSchema(definition.schema, { target: 'draft-2020-12', io: 'input' })
  return {
    $schema,
    $id: `${jsonSchemaIdBase}${definition.type}:v${definition.version}`,
    title: `${definition.type} v${definition.version}`,
    description: `${definition.description} Stream type \`${definition.streamType}\`, topic \`${streamTopics[definition.streamType]}\`, keyed by streamId.`,
    ...schema,
    examples: [exampleEvent(definition)],
  }
}

function indexDocument() {
  return {
    description:
      'Every published event type and version. Old versions stay readable forever; readers upcast them to the latest.',
    events: eventDefinitions.map((definition) => ({
      type: definition.type,
      version: definition.version,
      latest: latestEventVersions[definition.type] === definition.version,
      streamType: definition.streamType,
      topic: streamTopics[definition.streamType],
      $id: `${jsonSchemaIdBase}${definition.type}:v${definition.version}`,
      file: jsonSchemaFileName(definition.type, definition.version),
    })),
  }
}

// The events that open their stream are at streamVersion 1 in the examples; the others follow them.
const streamOpeners: ReadonlySet<string> = new Set([
  'chatbot.created',
  'conversation.started',
  'organization.created',
])
const exampleChatbotId = '0194a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b'
const exampleConversationId = '0194a1b2-d4e5-7f60-9b7c-8d9e0f1a2b3c'

const exampleOrgId = '0194a1b0-1c2d-7e3f-a4b5-c6d7e8f9a0b1'

function exampleStreamId(definition: EventDefinition): string {
  switch (definition.streamType) {
    case 'chatbot':
      return exampleChatbotId
    case 'organization':
      return exampleOrgId
    default:
      return exampleConversationId
  }
}

function exampleEvent(definition: EventDefinition) {
  return {
    id: '0194a1b3-0a1b-7c2d-8e3f-4a5b6c7d8e9f',
    type: definition.type,
    version: definition.version,
    occurredAt: '2025-01-15T09:30:03.250Z',
    orgId: exampleOrgId,
    chatbotId: definition.streamType === 'organization' ? NO_CHATBOT_ID : exampleChatbotId,
    streamId: exampleStreamId(definition),
    streamVersion: streamOpeners.has(definition.type) ? 1 : 2,
    position: '9007199254740993',
    metadata: { correlationId: 'req-7f3a', requestId: 'req-7f3a' },
    payload: definition.example,
  }
}

function toJsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}
