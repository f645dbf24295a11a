import { BUILTIN_SIGNAL_NAMES, jsonObjectSchema } from '@cas/events'
import { pathDeeperThan } from '@cas/http'
import { z } from 'zod'
import {
  CUSTOM_FIELD_TYPES,
  type CustomFieldType,
  DEFAULT_QUIET_MINUTES,
  MAX_CUSTOM_SIGNALS,
  MAX_NAME_LENGTH,
  MAX_QUIET_MINUTES,
  MAX_RETENTION_DAYS,
  MAX_SETTINGS_BYTES,
  MAX_SETTINGS_DEPTH,
  MAX_SIGNAL_EXAMPLE_LENGTH,
  MAX_SIGNAL_EXAMPLES,
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
  signals: z
    .looseObject({
      disabled: z
        .array(z.enum(BUILTIN_SIGNAL_NAMES))
        .describe('Built-in signals turned off: never detected for this chatbot.')
        .optional(),
      custom: z
        .array(
          z.strictObject({
            label: z
              .string()
              .min(1)
              .max(MAX_NAME_LENGTH)
              .regex(/[\p{L}\p{N}]/u, 'a label needs a letter or digit'),
            examples: z
              .array(z.string().min(1).max(MAX_SIGNAL_EXAMPLE_LENGTH))
              .min(1)
              .max(MAX_SIGNAL_EXAMPLES),
          }),
        )
        .max(MAX_CUSTOM_SIGNALS)
        .describe(
          "The chatbot's own signals: a label and example phrases; an end-user message as near to an example as the analyzer's margin fires it (named `custom:` and the label's slug).",
        )
        .optional(),
      abandonmentAfterMinutes: z
        .int()
        .min(1)
        .max(MAX_QUIET_MINUTES)
        .describe(
          `The quiet period after which a conversation can be abandoned (default ${DEFAULT_QUIET_MINUTES}).`,
        )
        .optional(),
    })
    .describe("Conversation signals: which are off, the chatbot's own, and the quiet period of abandonment.")
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
    else for (const issue of writeIssues(known.data)) ctx.addIssue({ code: 'custom', ...issue })
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

/** Something a person can see: not only whitespace or invisible format characters (U+200B…). */
const VISIBLE = /[^\s\p{C}]/u

/**
 * What settings given now must also be, beyond their types: no topic label, keyword or signal example
 * without a visible character (the analyzer would skip it, or embed nothing), and no two custom signals of
 * one name (only the first would ever fire). Checked on writes only: settings stored before these rules
 * still read as they did (knownSettingsSchema), so a chatbot's signals are never dropped for them.
 */
function writeIssues(settings: ChatbotSettings): { path: PropertyKey[]; message: string }[] {
  const issues: { path: PropertyKey[]; message: string }[] = []
  for (const [label, keywords] of Object.entries(settings.topics ?? {})) {
    if (!VISIBLE.test(label))
      issues.push({ path: ['topics', label], message: 'a topic label needs a visible character' })
    keywords.forEach((k, i) => {
      if (!VISIBLE.test(k))
        issues.push({ path: ['topics', label, i], message: 'a keyword needs a visible character' })
    })
  }
  const named = new Map<string, string>()
  settings.signals?.custom?.forEach((signal, i) => {
    signal.examples.forEach((e, j) => {
      if (!VISIBLE.test(e))
        issues.push({
          path: ['signals', 'custom', i, 'examples', j],
          message: 'an example needs a visible character',
        })
    })
    const name = customSignalName(signal.label)
    const first = named.get(name)
    if (first === undefined) named.set(name, signal.label)
    else
      issues.push({
        path: ['signals', 'custom', i, 'label'],
        message: `"${signal.label}" and "${first}" are both named ${name} (from the label's letters and digits): give them labels that differ there`,
      })
  })
  return issues
}

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

/**
 * `retentionDays`, or undefined when the chatbot keeps its conversations forever: as retentionDaysSql reads
 * it (capture warns of a conversation it stores already past it).
 */
export function retentionDays(settings: StoredSettings): number | undefined {
  const days = settings.retentionDays
  return typeof days === 'number' && Number.isInteger(days) ? days : undefined
}

/** The custom-field schema (empty when none is defined): capture warns about fields outside it. */
export function customFieldSchema(settings: StoredSettings): Record<string, CustomFieldType> {
  return known(settings, 'customFields') ?? {}
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

/** A custom signal's name: `custom:` and its label's slug (lowercase letters, digits and dashes, at most 64). */
export function customSignalName(label: string): string {
  const slug = label
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '')
  return `custom:${slug || 'signal'}`
}

export interface ChatbotSignalSettings {
  readonly disabled: string[]
  /** Named by customSignalName; of two labels with one name, the first. */
  readonly custom: { name: string; label: string; examples: string[] }[]
  readonly quietPeriodMs: number
}

/** The chatbot's signal settings, with their defaults (everything on, no custom signal, 30 minutes). */
export function chatbotSignals(settings: StoredSettings): ChatbotSignalSettings {
  const signals = known(settings, 'signals') ?? {}
  const custom: ChatbotSignalSettings['custom'] = []
  for (const c of signals.custom ?? []) {
    const name = customSignalName(c.label)
    if (!custom.some((k) => k.name === name)) custom.push({ name, label: c.label, examples: c.examples })
  }
  return {
    disabled: signals.disabled ?? [],
    custom,
    quietPeriodMs: (signals.abandonmentAfterMinutes ?? DEFAULT_QUIET_MINUTES) * 60_000,
  }
}
