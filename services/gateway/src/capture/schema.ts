import { isoDateTimeSchema } from '@cas/http'
import { z } from 'zod'

/**
 * The longest string a field of `user`, `organization`, `session`, `custom` or `metadata` may hold.
 * These are labels (a name, a plan, a page URL), shown whole on every conversation: a 1 MB `user.name`
 * made its page 800,000 px tall. Longer is a 400 naming the field, never cut in silence. Here, not in the
 * event schemas: events already recorded with longer values must still be read.
 */
export const MAX_FIELD_LENGTH = 1_024

/** The longest end-user id: as the erasure route and the conversation filter take one. */
export const MAX_USER_ID_LENGTH = 256

const fieldValueSchema = z.union(
  [z.string().max(MAX_FIELD_LENGTH), z.number(), z.boolean()],
  // For a value of none of the three types; a string too long gets the string's own message.
  { error: 'must be a string, number or boolean (this object is flat: no nested objects or arrays)' },
)
const fieldStringSchema = z.string().max(MAX_FIELD_LENGTH)
const userIdSchema = z.string().max(MAX_USER_ID_LENGTH)
const flatObjectSchema = z.record(z.string(), fieldValueSchema)

const limits = `Flat: string, number or boolean values, strings at most ${MAX_FIELD_LENGTH.toLocaleString('en')} characters.`

/** API.md capture message: extra keys are ignored; sentAt needs a zone and defaults to receive time. */
export const captureMessageSchema = z.object({
  id: z.string().min(1).max(256).describe("The caller's message id; a conversation stores each id once."),
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  content: z.string().max(32_768).describe('Message text; may be empty.'),
  sentAt: isoDateTimeSchema
    .optional()
    .describe(
      'ISO 8601 with a zone (Z or +hh:mm); defaults to receive time. More than 24 hours after the receive ' +
        'time, the receive time is stored instead, with a warning.',
    ),
})

/** The capture request body (spec.md; API.md "Capture details"). */
export const captureBodySchema = z
  .object({
    conversationId: z.string().min(1).max(256).describe("The caller's conversation id."),
    messages: z
      .array(captureMessageSchema)
      .min(1)
      .max(100)
      .describe(
        '1 to 100 messages. An id repeated with a different message keeps the first, with a warning; so does an id an earlier capture stored.',
      ),
    user: z
      .object({
        id: userIdSchema.optional().describe(`At most ${MAX_USER_ID_LENGTH} characters.`),
        name: fieldStringSchema.optional(),
        email: fieldStringSchema.optional(),
        plan: fieldStringSchema.optional(),
      })
      .catchall(fieldValueSchema)
      .describe(`The end user talking to the chatbot. ${limits}`)
      .optional(),
    organization: z
      .object({})
      .catchall(fieldValueSchema)
      .describe(`The organization the end user belongs to. ${limits}`)
      .optional(),
    session: z
      .object({ pageUrl: fieldStringSchema.optional(), device: fieldStringSchema.optional() })
      .catchall(fieldValueSchema)
      .describe(`The browsing session the conversation happens in. ${limits}`)
      .optional(),
    custom: flatObjectSchema
      .describe(`Checked against the chatbot's custom-field schema; mismatches warn. ${limits}`)
      .optional(),
    userId: userIdSchema
      .describe('Deprecated: use user.id. When both are given and differ, user.id is kept, with a warning.')
      .meta({ deprecated: true })
      .optional(),
    metadata: flatObjectSchema
      .describe(
        `Deprecated: use custom. A key in both with different values keeps custom, with a warning. ${limits}`,
      )
      .meta({ deprecated: true })
      .optional(),
  })
  .describe(
    'Fields other than these are ignored, each with a warning naming it. Bodies may be gzip-compressed ' +
      '(Content-Encoding: gzip), at most 4 MiB once decompressed.',
  )

/** The body's fields: any other top-level key is ignored, with a warning. */
export const CAPTURE_FIELDS: ReadonlySet<string> = new Set(Object.keys(captureBodySchema.shape))

/** The capture in the OpenAPI document's example (docs/api.md's). */
export const captureBodyExample: z.input<typeof captureBodySchema> = {
  conversationId: 'chat-0001',
  messages: [
    { id: 'm-1', role: 'user', content: 'How do I reset my password?', sentAt: '2026-11-21T10:00:00Z' },
    { id: 'm-2', role: 'assistant', content: 'Use the link on the sign-in page.' },
  ],
  user: { id: 'u-42', plan: 'pro' },
  custom: { plan: 'pro' },
}

export type CaptureBody = z.output<typeof captureBodySchema>
export type CaptureMessage = z.output<typeof captureMessageSchema>

export const captureResponseSchema = z.object({
  ok: z.literal(true),
  conversationId: z.uuid().describe("The service's internal conversation id."),
  messagesStored: z.number().int().describe('Messages newly stored; duplicates are not counted.'),
  analysisQueued: z.boolean(),
  warnings: z
    .array(z.string())
    .describe(
      'What was taken differently from how it was sent: custom fields outside the schema or of another ' +
        'type, unknown fields ignored, a repeated message id, userId or metadata overridden, a sentAt in ' +
        'the future replaced.',
    ),
})
