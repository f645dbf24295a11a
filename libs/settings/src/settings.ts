import { jsonObjectSchema } from '@cas/events'
import { pathDeeperThan } from '@cas/http'
import { z } from 'zod'
import {
  CUSTOM_FIELD_TYPES,
  type CustomFieldType,
  MAX_NAME_LENGTH,
  MAX_RETENTION_DAYS,
  MAX_SETTINGS_BYTES,
  MAX_SETTINGS_DEPTH,
  MAX_TOPIC_KEYWORDS,
  MIN_RETENTION_DAYS,
} from './limits.ts'

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

/**
 * The keys the service reads, each with its type and its meaning (API.md). A new setting is one entry
 * here and, when the service acts on it, one reader below; the dashboard's type follows from this.
 */
export const knownSettingsSchema = z.looseObject({
  customFields: z
    .record(z.string().min(1).max(MAX_NAME_LENGTH), z.enum(CUSTOM_FIELD_TYPES))
    .describe('The custom-field schema: field name → "string" | "number" | "boolean".')
    .optional(),
  analysisEnabled: z.boolean().describe('When false, capture never queues analysis.').optional(),
  retentionDays: z
    .int()
    .min(MIN_RETENTION_DAYS)
    .max(MAX_RETENTION_DAYS)
    .describe('Conversations whose last message is older are erased by a scheduled job.')
    .optional(),
  topics: z
    .record(
      z.string().min(1).max(MAX_NAME_LENGTH),
      z.array(z.string().min(1).max(MAX_NAME_LENGTH)).max(MAX_TOPIC_KEYWORDS),
    )
    .describe("The chatbot's own topics: label → keywords; a message mentioning a keyword gets the label.")
    .optional(),
})

/** Chatbot settings as stored: the known keys typed, anything else as given. */
export type ChatbotSettings = z.output<typeof knownSettingsSchema>

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

type StoredSettings = Readonly<Record<string, unknown>>

/** One known key of stored settings, or undefined when absent or not of its type. */
function known<K extends keyof typeof knownSettingsSchema.shape>(settings: StoredSettings, key: K) {
  const parsed = knownSettingsSchema.shape[key].safeParse(settings[key])
  return parsed.success ? (parsed.data as z.output<(typeof knownSettingsSchema.shape)[K]>) : undefined
}

/** The custom-field schema (empty when none is defined): capture warns about fields outside it. */
export function customFieldSchema(settings: StoredSettings): Record<string, CustomFieldType> {
  return known(settings, 'customFields') ?? {}
}

/** Whether capture queues analysis: unless `analysisEnabled` is false (the default is on). */
export function analysisEnabled(settings: StoredSettings): boolean {
  return known(settings, 'analysisEnabled') ?? true
}

/** The chatbot's own topics (label → keywords), when it has any. */
export function chatbotTopics(settings: StoredSettings): Record<string, string[]> | undefined {
  return known(settings, 'topics')
}

/**
 * `retentionDays` as a SQL expression over a settings column of type jsonb: whole days, or NULL when the
 * chatbot keeps its conversations forever (the retention sweep selects in SQL what this file decides).
 */
export function retentionDaysSql(column: string): string {
  return `CASE WHEN jsonb_typeof(${column} -> 'retentionDays') = 'number' THEN (${column} ->> 'retentionDays')::int END`
}
