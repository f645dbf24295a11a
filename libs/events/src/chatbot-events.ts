import { z } from 'zod'
import { defineEvent } from './envelope.ts'
import { jsonObjectSchema } from './primitives.ts'

// Payloads are strict so that a secret (API key, key hash) can never slip into a published event.

const chatbotNameSchema = z.string().min(1).max(100)

/** The first 13 characters of the API key and `…`: enough to recognise a key, useless to use one. */
const apiKeyPrefixSchema = z
  .string()
  .regex(/^svc_live_[0-9a-f]{4}…$/, 'expected the first 13 characters of the API key followed by …')

const settingsSchema = jsonObjectSchema.describe('The chatbot settings, a free-form JSON object.')

export const chatbotCreatedV1 = defineEvent({
  type: 'chatbot.created',
  version: 1,
  streamType: 'chatbot',
  description: 'A chatbot was created with its first API key.',
  payload: z.strictObject({
    name: chatbotNameSchema,
    settings: settingsSchema,
    apiKeyPrefix: apiKeyPrefixSchema,
  }),
  example: { name: 'Support bot', settings: { analysisEnabled: true }, apiKeyPrefix: 'svc_live_3f9a…' },
})

export const chatbotRenamedV1 = defineEvent({
  type: 'chatbot.renamed',
  version: 1,
  streamType: 'chatbot',
  description: 'A chatbot got a new name.',
  payload: z.strictObject({ name: chatbotNameSchema }),
  example: { name: 'Sales bot' },
})

export const chatbotSettingsChangedV1 = defineEvent({
  type: 'chatbot.settings-changed',
  version: 1,
  streamType: 'chatbot',
  description: 'The settings of a chatbot were changed by a JSON Merge Patch (RFC 7386).',
  payload: z.strictObject({
    patch: jsonObjectSchema.describe('The merge patch as sent: `null` removes a key.'),
    settings: settingsSchema.describe('The settings after the patch was applied.'),
  }),
  example: {
    patch: { analysisEnabled: false, onboarded: null },
    settings: { analysisEnabled: false, customFields: { plan: 'string' } },
  },
})

export const chatbotKeyRotatedV1 = defineEvent({
  type: 'chatbot.key-rotated',
  version: 1,
  streamType: 'chatbot',
  description: 'A chatbot got a new API key; the previous key stopped working at once.',
  payload: z.strictObject({ apiKeyPrefix: apiKeyPrefixSchema }),
  example: { apiKeyPrefix: 'svc_live_0b7c…' },
})

export const chatbotDeletedV1 = defineEvent({
  type: 'chatbot.deleted',
  version: 1,
  streamType: 'chatbot',
  description: 'A chatbot was deleted with all its conversations, messages and analysis results.',
  payload: z.strictObject({}),
  example: {},
})

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const chatbotEventDefinitions = [
  chatbotCreatedV1,
  chatbotRenamedV1,
  chatbotSettingsChangedV1,
  chatbotKeyRotatedV1,
  chatbotDeletedV1,
] as const

/** The latest version of each chatbot event type: what readers see after upcasting. */
export const chatbotEventSchema = z.discriminatedUnion('type', [
  chatbotCreatedV1.schema,
  chatbotRenamedV1.schema,
  chatbotSettingsChangedV1.schema,
  chatbotKeyRotatedV1.schema,
  chatbotDeletedV1.schema,
])
