// The bounds and defaults of the chatbot settings the service reads, without zod: the dashboard imports
// these (its bundle has no zod), the schema in settings.ts is built from them.

export const CUSTOM_FIELD_TYPES = ['string', 'number', 'boolean'] as const
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number]

/** Settings nest at most this many levels of objects and arrays, the settings object being level 1. */
export const MAX_SETTINGS_DEPTH = 16
/** Settings are at most this many bytes of JSON. */
export const MAX_SETTINGS_BYTES = 64 * 1024

/** The longest custom-field name, topic label or topic keyword. */
export const MAX_NAME_LENGTH = 100
/** The most keywords one topic has. */
export const MAX_TOPIC_KEYWORDS = 100

/** `retentionDays`: whole days from 1 to 3650 (ten years); absent keeps conversations forever. */
export const MIN_RETENTION_DAYS = 1
export const MAX_RETENTION_DAYS = 3_650

/** settings.signals: a chatbot's own signals at most, their examples at most, and an example's length. */
export const MAX_CUSTOM_SIGNALS = 20
export const MAX_SIGNAL_EXAMPLES = 50
export const MAX_SIGNAL_EXAMPLE_LENGTH = 300
/** settings.signals.abandonmentAfterMinutes: a minute to a week; 30 when absent. */
export const MAX_QUIET_MINUTES = 10_080
export const DEFAULT_QUIET_MINUTES = 30

/**
 * Whether capture queues analysis: unless `analysisEnabled` is false (the default is on; a value of
 * another type is not false). The dashboard shows it with the same rule.
 */
export function analysisEnabled(settings: Readonly<Record<string, unknown>>): boolean {
  return settings.analysisEnabled !== false
}
