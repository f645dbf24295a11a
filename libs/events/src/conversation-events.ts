import { z } from 'zod'
import {
  capturedMessageSchema,
  customFieldsSchema,
  endUserOrganizationSchema,
  endUserSchema,
  endUserSessionSchema,
} from './capture-schemas.ts'
import { defineEvent } from './envelope.ts'
import { utcTimestampSchema } from './primitives.ts'
import { sealedForm } from './sealed.ts'
import { defineUpcaster } from './upcasting.ts'

const conversationMetadataShape = {
  user: endUserSchema,
  organization: endUserOrganizationSchema,
  session: endUserSessionSchema,
  custom: customFieldsSchema,
}

const exampleMetadata = {
  user: { id: 'u-42', name: 'Ada', email: 'ada@example.com', plan: 'pro', seats: 3 },
  organization: { name: 'Analytical Engines', enterprise: true },
  session: { pageUrl: 'https://example.com/pricing', device: 'desktop' },
  custom: { cartValue: 129.5, returning: true },
}

export const conversationStartedV1 = defineEvent({
  type: 'conversation.started',
  version: 1,
  streamType: 'conversation',
  description: "The first capture for a (chatbot, caller's conversationId) created the conversation.",
  payload: z.strictObject({
    conversationId: z.string().min(1).max(256).describe("The caller's conversation id."),
    ...conversationMetadataShape,
  }),
  example: { conversationId: 'chat-2024-0001', ...exampleMetadata },
})

export const conversationMessagesCapturedV1 = defineEvent({
  type: 'conversation.messages-captured',
  version: 1,
  streamType: 'conversation',
  description: 'One capture stored new messages; messages already stored are never repeated.',
  payload: z.strictObject({
    messages: z.array(capturedMessageSchema).min(1).describe('Only the messages new in this capture.'),
    receivedAt: utcTimestampSchema.describe('When the capture request was received.'),
    analysisRequested: z.boolean().describe('Whether analysis of these messages was queued.'),
  }),
  example: {
    messages: [
      { id: 'm-1', role: 'user', content: 'How much is the pro plan?', sentAt: '2025-01-15T09:30:00.000Z' },
      { id: 'm-2', role: 'assistant', content: '49 € a month.', sentAt: '2025-01-15T09:30:02.000Z' },
    ],
    receivedAt: '2025-01-15T09:30:03.120Z',
    analysisRequested: true,
  },
})

export const conversationMetadataUpdatedV1 = defineEvent({
  type: 'conversation.metadata-updated',
  version: 1,
  streamType: 'conversation',
  description: 'A capture changed the conversation metadata; the payload holds all of it as now stored.',
  payload: z.strictObject(conversationMetadataShape),
  example: { ...exampleMetadata, custom: { cartValue: 180, returning: true } },
})

export const conversationErasedV1 = defineEvent({
  type: 'conversation.erased',
  version: 1,
  streamType: 'conversation',
  description:
    'The conversation was erased: its messages and metadata are gone from the journal and every read model, ' +
    'and a replay must not bring them back. Earlier events of the stream are no longer in the journal.',
  payload: z.strictObject({
    reason: z
      .enum(['retention', 'end-user-erasure'])
      .describe("The chatbot's retention period ran out, or the end user's data was erased on request."),
  }),
  example: { reason: 'retention' },
})

// Version 2 of the three events holding personal data (message content, end-user and custom fields): the
// same payloads, but published and stored with those fields encrypted per chatbot (crypto-shredding).
// Readers see the opened payloads below; `sealed…V2` is the wire form, in the published schemas.

const exampleSealedBox = {
  alg: 'A256GCM',
  iv: 'q0dy3Wk8bq3m4W1n',
  data: 'Xl1vO6Z2m4nQ7rT0yB3cE6fH9jK2lN5pS8uW1zA4dG7iL0oR3tV6xY9bE2hK5mP8sU',
} as const

export const conversationStartedV2 = defineEvent({
  ...conversationStartedV1,
  version: 2,
  description: `${conversationStartedV1.description} Published with its personal fields sealed.`,
})

export const conversationMessagesCapturedV2 = defineEvent({
  ...conversationMessagesCapturedV1,
  version: 2,
  description: `${conversationMessagesCapturedV1.description} Published with the messages sealed.`,
})

export const conversationMetadataUpdatedV2 = defineEvent({
  ...conversationMetadataUpdatedV1,
  version: 2,
  description: `${conversationMetadataUpdatedV1.description} Published with its personal fields sealed.`,
})

export const sealedConversationStartedV2 = sealedForm(
  conversationStartedV2,
  ['conversationId', 'user', 'organization', 'session', 'custom'],
  { sealed: exampleSealedBox },
)

export const sealedConversationMessagesCapturedV2 = sealedForm(conversationMessagesCapturedV2, ['messages'], {
  receivedAt: '2025-01-15T09:30:03.120Z',
  analysisRequested: true,
  sealed: exampleSealedBox,
})

export const sealedConversationMetadataUpdatedV2 = sealedForm(
  conversationMetadataUpdatedV2,
  ['user', 'organization', 'session', 'custom'],
  { sealed: exampleSealedBox },
)

/** v1 events were published in clear; they read as v2 with the same payload. */
export const conversationUpcasters = [
  defineUpcaster(conversationStartedV1, conversationStartedV2, (event) => event.payload),
  defineUpcaster(conversationMessagesCapturedV1, conversationMessagesCapturedV2, (event) => event.payload),
  defineUpcaster(conversationMetadataUpdatedV1, conversationMetadataUpdatedV2, (event) => event.payload),
]

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const conversationEventDefinitions = [
  conversationStartedV1,
  conversationMessagesCapturedV1,
  conversationMetadataUpdatedV1,
  conversationErasedV1,
  sealedConversationStartedV2,
  sealedConversationMessagesCapturedV2,
  sealedConversationMetadataUpdatedV2,
] as const

/** The latest version of each conversation event type: what readers see after upcasting. */
export const conversationEventSchema = z.discriminatedUnion('type', [
  conversationStartedV2.schema,
  conversationMessagesCapturedV2.schema,
  conversationMetadataUpdatedV2.schema,
  conversationErasedV1.schema,
])
