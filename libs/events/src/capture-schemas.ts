import { z } from 'zod'
import { primitiveValueSchema, utcTimestampSchema } from './primitives.ts'

export const messageRoles = ['user', 'assistant', 'system', 'tool'] as const

export const capturedMessageSchema = z.strictObject({
  id: z.string().min(1).max(256).describe("The caller's message id, unique within the conversation."),
  role: z.enum(messageRoles),
  content: z.string().max(32_768).describe('Message text; may be empty.'),
  sentAt: utcTimestampSchema.describe('When the message was sent (receive time when the caller gave none).'),
})

// End-user metadata: the known fields are typed, any extra field the caller sends is kept if primitive.
export const endUserSchema = z
  .object({
    id: z.string().optional(),
    name: z.string().optional(),
    email: z.string().optional(),
    plan: z.string().optional(),
  })
  .catchall(primitiveValueSchema)
  .describe('The end user talking to the chatbot.')

export const endUserOrganizationSchema = z
  .object({})
  .catchall(primitiveValueSchema)
  .describe('The organization the end user belongs to.')

export const endUserSessionSchema = z
  .object({
    pageUrl: z.string().optional(),
    device: z.string().optional(),
  })
  .catchall(primitiveValueSchema)
  .describe('The browsing session the conversation happens in.')

export const customFieldsSchema = z
  .record(z.string(), primitiveValueSchema)
  .describe("Flat custom fields, stored as given even when they do not match the chatbot's schema.")
