import { z } from 'zod'
import { defineEvent } from './envelope.ts'
import { jsonObjectSchema, utcTimestampSchema } from './primitives.ts'
import { defineUpcaster } from './upcasting.ts'

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

const topicCommandNote =
  "A command of an owner or admin of the chatbot's organization (metadata.actorId says who), on the chatbot's stream. The analysis service applies it to the chatbot's topics and records what it did on the chatbot's topic stream (analysis.topic-*); a command its topics no longer allow (the topic merged away meanwhile, say) changes nothing."

const topicIdSchema = z.uuid().describe("The topic's id (analysis.topic-discovered).")

export const chatbotTopicRenameRequestedV1 = defineEvent({
  type: 'chatbot.topic-rename-requested',
  version: 1,
  streamType: 'chatbot',
  description: `A topic is to get this label, pinned from then on (analysis.topic-renamed-by-user once applied). ${topicCommandNote}`,
  payload: z.strictObject({
    topicId: topicIdSchema,
    label: z.string().min(1).max(80).describe('The new label, 1 to 80 characters, spaces tidied.'),
  }),
  example: { topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21', label: 'Refunds' },
})

/**
 * v2 records the label the topic had when the command was committed, so that the command list can say
 * "Rename 'old' to 'new'" after the old label is gone. v1 events read as v2 with previousLabel null.
 */
export const chatbotTopicRenameRequestedV2 = defineEvent({
  type: 'chatbot.topic-rename-requested',
  version: 2,
  streamType: 'chatbot',
  description: `A topic is to get this label, pinned from then on (analysis.topic-renamed-by-user once applied). ${topicCommandNote}`,
  payload: z.strictObject({
    topicId: topicIdSchema,
    label: z.string().min(1).max(80).describe('The new label, 1 to 80 characters, spaces tidied.'),
    previousLabel: z
      .string()
      .nullable()
      .describe(
        "The topic's label when the command was committed, as the gateway read it (with the commands still pending applied); null when unknown (a v1 event read as v2).",
      ),
  }),
  example: {
    topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
    label: 'Refunds',
    previousLabel: 'refund, money back',
  },
})

export const chatbotTopicHideRequestedV1 = defineEvent({
  type: 'chatbot.topic-hide-requested',
  version: 1,
  streamType: 'chatbot',
  description: `A topic is to be left out of analytics lists (analysis.topic-hidden once applied). ${topicCommandNote}`,
  payload: z.strictObject({ topicId: topicIdSchema }),
  example: { topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const chatbotTopicUnhideRequestedV1 = defineEvent({
  type: 'chatbot.topic-unhide-requested',
  version: 1,
  streamType: 'chatbot',
  description: `A hidden topic is to be shown again (analysis.topic-unhidden once applied). ${topicCommandNote}`,
  payload: z.strictObject({ topicId: topicIdSchema }),
  example: { topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const chatbotTopicMergeRequestedV1 = defineEvent({
  type: 'chatbot.topic-merge-requested',
  version: 1,
  streamType: 'chatbot',
  description: `A topic is to be merged into another (analysis.topic-merged-by-user once applied). ${topicCommandNote}`,
  payload: z.strictObject({
    topicId: topicIdSchema.describe('The topic to merge away.'),
    into: topicIdSchema.describe('The topic that is to remain.'),
  }),
  example: { topicId: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10', into: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const chatbotTopicCreationRequestedV1 = defineEvent({
  type: 'chatbot.topic-creation-requested',
  version: 1,
  streamType: 'chatbot',
  description: `A topic is to be created from example phrases, with this label pinned: the analysis service embeds the examples, creates the topic and moves into it the recent requests that lie clearly nearer it than their current topic (analysis.topic-created-by-user once applied). ${topicCommandNote}`,
  payload: z.strictObject({
    topicId: z.uuid().describe('The id the new topic gets.'),
    label: z.string().min(1).max(80).describe('Its label, 1 to 80 characters, spaces tidied.'),
    examples: z
      .array(z.string().min(1).max(500))
      .min(2)
      .max(20)
      .describe('2 to 20 example requests, each 1 to 500 characters.'),
  }),
  example: {
    topicId: '4c1e9a77-5b2d-4f0e-8a63-2d7f1b9c0e45',
    label: 'Roadside assistance',
    examples: ['my car broke down and I need a tow', 'can you send someone to jump start my battery'],
  },
})

export const chatbotReanalysisRequestedV1 = defineEvent({
  type: 'chatbot.reanalysis-requested',
  version: 1,
  streamType: 'chatbot',
  description:
    "An owner or admin asked for the chatbot's captured messages (since a date, all by default) to be analysed again by the analyzer the analysis service runs now: it queues them and reports progress on the chatbot's topic stream (analysis.reanalysis-started, -progressed, -finished).",
  payload: z.strictObject({
    reanalysisId: z.uuid().describe('The id the re-analysis gets.'),
    since: utcTimestampSchema.optional().describe('Only messages captured at or after this time.'),
  }),
  example: { reanalysisId: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f' },
})

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const chatbotEventDefinitions = [
  chatbotCreatedV1,
  chatbotRenamedV1,
  chatbotSettingsChangedV1,
  chatbotKeyRotatedV1,
  chatbotDeletedV1,
  chatbotTopicRenameRequestedV1,
  chatbotTopicHideRequestedV1,
  chatbotTopicUnhideRequestedV1,
  chatbotTopicMergeRequestedV1,
  chatbotTopicCreationRequestedV1,
  chatbotReanalysisRequestedV1,
  chatbotTopicRenameRequestedV2,
] as const

/** The latest version of each chatbot event type: what readers see after upcasting. */
export const chatbotEventSchema = z.discriminatedUnion('type', [
  chatbotCreatedV1.schema,
  chatbotRenamedV1.schema,
  chatbotSettingsChangedV1.schema,
  chatbotKeyRotatedV1.schema,
  chatbotDeletedV1.schema,
  chatbotTopicRenameRequestedV2.schema,
  chatbotTopicHideRequestedV1.schema,
  chatbotTopicUnhideRequestedV1.schema,
  chatbotTopicMergeRequestedV1.schema,
  chatbotTopicCreationRequestedV1.schema,
  chatbotReanalysisRequestedV1.schema,
])

export const chatbotUpcasters = [
  defineUpcaster(chatbotTopicRenameRequestedV1, chatbotTopicRenameRequestedV2, ({ payload }) => ({
    ...payload,
    previousLabel: null,
  })),
]
