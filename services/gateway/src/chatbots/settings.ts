import { jsonObjectSchema } from '@cas/events'
import { z } from 'zod'

export const CUSTOM_FIELD_TYPES = ['string', 'number', 'boolean'] as const
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number]

const MAX_SETTINGS_BYTES = 64 * 1024

const knownSettingsSchema = z.looseObject({
  customFields: z
    .record(z.string().min(1).max(100), z.enum(CUSTOM_FIELD_TYPES))
    .describe('The custom-field schema: field name → "string" | "number" | "boolean".')
    .optional(),
  analysisEnabled: z.boolean().describe('When false, capture never queues analysis.').optional(),
  retentionDays: z
    .int()
    .min(1)
    .max(3_650)
    .describe('Conversations whose last message is older are erased by a scheduled job.')
    .optional(),
  topics: z
    .record(z.string().min(1).max(100), z.array(z.string().min(1).max(100)).max(100))
    .describe("The chatbot's own topics: label → keywords; a message mentioning a keyword gets the label.")
    .optional(),
})

/**
 * Chatbot settings: a free-form JSON object, except for the keys the service reads (API.md), which
 * must have their documented types. Other keys are stored as given.
 */
export const settingsSchema = jsonObjectSchema
  .superRefine((settings, ctx) => {
    const known = knownSettingsSchema.safeParse(settings)
    if (!known.success) for (const issue of known.error.issues) ctx.addIssue({ ...issue, code: 'custom' })
    if (JSON.stringify(settings).length > MAX_SETTINGS_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `settings must be at most ${MAX_SETTINGS_BYTES} bytes of JSON`,
      })
    }
  })
  .describe('Free-form JSON object; the keys the service reads are typed.')

export type Settings = z.output<typeof jsonObjectSchema>

/** The custom-field schema from settings (empty when none is defined). */
export function customFieldSchema(
  settings: Readonly<Record<string, unknown>>,
): Record<string, CustomFieldType> {
  const parsed = knownSettingsSchema.safeParse(settings)
  return parsed.success ? (parsed.data.customFields ?? {}) : {}
}

export function analysisEnabled(settings: Readonly<Record<string, unknown>>): boolean {
  return settings.analysisEnabled !== false
}
