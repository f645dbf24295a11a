// The bounds of the chatbot settings the service reads, without zod: the dashboard imports these (its
// bundle has no zod), the schema in settings.ts is built from them.

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
