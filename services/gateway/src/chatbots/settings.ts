import { jsonObjectSchema } from '@cas/events'
import { pathDeeperThan } from '@cas/http'
import { z } from 'zod'

export const CUSTOM_FIELD_TYPES = ['string', 'number', 'boolean'] as const
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number]

const MAX_SETTINGS_BYTES = 64 * 1024

/** Settings nest at most this many levels of objects and arrays, the settings object being level 1. */
export const MAX_SETTINGS_DEPTH = 16

/**
 * Free-form settings (or a merge patch of them) at most MAX_SETTINGS_DEPTH levels deep; deeper is an
 * issue at the path of the first value beyond. A merge patch within the limit applied to settings within
 * it gives settings within it.
 */
const boundedSettingsObjectSchema = jsonObjectSchema.superRefine((settings, ctx) => {
  const tooDeep = pathDeeperThan(settings, MAX_SETTINGS_DEPTH)
  if (tooDeep) {
    ctx.addIssue({
      code: 'custom',
      path: [...tooDeep],
      message: `settings nest at most ${MAX_SETTINGS_DEPTH} levels of objects and arrays`,
    })
  }
})

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
export const settingsSchema = boundedSettingsObjectSchema
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
  .describe(
    `Free-form JSON object, at most ${MAX_SETTINGS_DEPTH} levels of objects and arrays deep and 64 KiB of JSON; the keys the service reads are typed.`,
  )

/** PATCH's settings: a JSON Merge Patch (RFC 7386) of them, as deep as settings may be. */
export const settingsPatchSchema = boundedSettingsObjectSchema.describe(
  `A JSON Merge Patch (RFC 7386) of the settings: objects merge, null removes a key. At most ${MAX_SETTINGS_DEPTH} levels of objects and arrays deep.`,
)

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
