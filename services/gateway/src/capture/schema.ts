import {
  endUserOrganizationSchema,
  endUserSchema,
  endUserSessionSchema,
  primitiveValueSchema,
} from '@cas/events'
import { isoDateTimeSchema } from '@cas/http'
import { z } from 'zod'

/** API.md capture message: extra keys are ignored; sentAt needs a zone and defaults to receive time. */
export const captureMessageSchema = z.object({
  id: z.string().min(1).max(256).describe("The caller's message id; a conversation stores each id once."),
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  content: z.string().max(32_768).describe('Message text; may be empty.'),
  sentAt: isoDateTimeSchema.optional().describe('ISO 8601 with a zone; defaults to receive time.'),
})

const flatObjectSchema = z.record(z.string(), primitiveValueSchema)

/** The capture request body (spec.md; API.md "Capture details"). Unknown top-level keys are ignored. */
export const captureBodySchema = z.object({
  conversationId: z.string().min(1).max(256).describe("The caller's conversation id."),
  messages: z.array(captureMessageSchema).min(1).max(100).describe('1 to 100 messages.'),
  user: endUserSchema.optional(),
  organization: endUserOrganizationSchema.optional(),
  session: endUserSessionSchema.optional(),
  custom: flatObjectSchema
    .describe("Checked against the chatbot's custom-field schema; mismatches warn.")
    .optional(),
  userId: z.string().describe('Deprecated: use user.id.').optional(),
  metadata: flatObjectSchema.describe('Deprecated: use custom.').optional(),
})

export type CaptureBody = z.output<typeof captureBodySchema>
export type CaptureMessage = z.output<typeof captureMessageSchema>

export const captureResponseSchema = z.object({
  ok: z.literal(true),
  conversationId: z.uuid().describe("The service's internal conversation id."),
  messagesStored: z.number().int().describe('Messages newly stored; duplicates are not counted.'),
  analysisQueued: z.boolean(),
  warnings: z.array(z.string()),
})
