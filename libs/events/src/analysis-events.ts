import { z } from 'zod'
import { defineEvent } from './envelope.ts'

const analyzerSchema = z
  .strictObject({ name: z.string().min(1), version: z.string().min(1) })
  .describe('The analyzer that produced the result, so results of different models can be told apart.')

const sentimentSchema = z.strictObject({
  score: z.number().min(-1).max(1).describe('-1 most negative … 1 most positive.'),
  label: z.enum(['positive', 'neutral', 'negative']),
})

const topicsSchema = z.array(z.string().min(1))

const messageIdSchema = z.string().min(1).max(256).describe("The caller's message id.")

const exampleAnalyzer = { name: 'llm-sentiment', version: '2025-01' }

export const analysisMessagesAnalyzedV1 = defineEvent({
  type: 'analysis.messages-analyzed',
  version: 1,
  streamType: 'analysis',
  description: 'Messages of a conversation were analyzed; streamId is the internal conversation id.',
  payload: z.strictObject({
    analyzer: analyzerSchema,
    results: z
      .array(z.strictObject({ messageId: messageIdSchema, sentiment: sentimentSchema, topics: topicsSchema }))
      .min(1),
  }),
  example: {
    analyzer: exampleAnalyzer,
    results: [{ messageId: 'm-1', sentiment: { score: 0.1, label: 'neutral' }, topics: ['pricing'] }],
  },
})

export const analysisConversationAnalyzedV1 = defineEvent({
  type: 'analysis.conversation-analyzed',
  version: 1,
  streamType: 'analysis',
  description: 'A conversation as a whole was analyzed; streamId is the internal conversation id.',
  payload: z.strictObject({ analyzer: analyzerSchema, sentiment: sentimentSchema, topics: topicsSchema }),
  example: {
    analyzer: exampleAnalyzer,
    sentiment: { score: 0.6, label: 'positive' },
    topics: ['pricing', 'plans'],
  },
})

export const analysisFailedV1 = defineEvent({
  type: 'analysis.failed',
  version: 1,
  streamType: 'analysis',
  description: 'An analysis attempt failed; streamId is the internal conversation id.',
  payload: z.strictObject({
    messageIds: z.array(messageIdSchema).describe('The messages the failed attempt covered.'),
    reason: z.string().min(1),
    attempt: z.int().min(1).describe('1 for the first attempt.'),
    retryable: z.boolean().describe('Whether the analysis will be attempted again.'),
  }),
  example: { messageIds: ['m-1', 'm-2'], reason: 'model timed out', attempt: 1, retryable: true },
})

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const analysisEventDefinitions = [
  analysisMessagesAnalyzedV1,
  analysisConversationAnalyzedV1,
  analysisFailedV1,
] as const

/** The latest version of each analysis event type: what readers see after upcasting. */
export const analysisEventSchema = z.discriminatedUnion('type', [
  analysisMessagesAnalyzedV1.schema,
  analysisConversationAnalyzedV1.schema,
  analysisFailedV1.schema,
])
