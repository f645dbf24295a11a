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

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const conversationEventDefinitions = [
  conversationStartedV1,
  conversationMessagesCapturedV1,
  conversationMetadataUpdatedV1,
  conversationErasedV1,
] as const

/** The latest version of each conversation event type: what readers see after upcasting. */
export const conversationEventSchema = z.discriminatedUnion('type', [
  conversationStartedV1.schema,
  conversationMessagesCapturedV1.schema,
  conversationMetadataUpdatedV1.schema,
  conversationErasedV1.schema,
])
