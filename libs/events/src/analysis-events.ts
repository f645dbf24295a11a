import { z } from 'zod'
import { defineEvent } from './envelope.ts'
import { utcTimestampSchema } from './primitives.ts'
import { TOPIC_COMMAND_EVENT_TYPES } from './topic-commands.ts'
import { defineUpcaster } from './upcasting.ts'

const analyzerSchema = z
  .strictObject({ name: z.string().min(1), version: z.string().min(1) })
  .describe('The analyzer that produced the result, so results of different models can be told apart.')

/**
 * An analyzer as name@version: the form analysis_results, rm_messages, the status row and re-analyses name it
 * in, compared across them (a chatbot's messages read by an earlier analyzer), so made here alone.
 */
export function analyzerId(analyzer: { readonly name: string; readonly version: string }): string {
  return `${analyzer.name}@${analyzer.version}`
}

const sentimentSchema = z.strictObject({
  score: z.number().min(-1).max(1).describe('-1 most negative … 1 most positive.'),
  label: z.enum(['positive', 'neutral', 'negative']),
})

const topicsSchema = z.array(z.string().min(1))

const messageIdSchema = z.string().min(1).max(256).describe("The caller's message id.")

const exampleAnalyzer = { name: 'llm-sentiment', version: '2025-01' }
/** v2's and v3's example results: one message with its sentiment and topic. */
const exampleResultsV2 = [
  {
    messageId: 'm-1',
    sentiment: { score: -0.6, label: 'negative' as const },
    topics: [{ id: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21', label: 'refund, money back' }],
  },
]

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

/** The topic id of the long tail: end users' messages no topic is similar enough to. */
export const OTHER_TOPIC_ID = 'other'

const topicIdSchema = z
  .string()
  .min(1)
  .describe(
    'A stable topic id: a UUID for a topic discovered by the language model or configured in settings.topics ' +
      '(see analysis.topic-discovered), "other" for the long tail no topic takes; for the lexical and LLM ' +
      'analyzers, whose topics are key phrases, the phrase itself.',
  )

const topicRefSchema = z.strictObject({
  id: topicIdSchema,
  label: z
    .string()
    .describe("The topic's label when the result was recorded (analysis.topic-relabeled changes it)."),
})

const topicRefsSchema = z
  .array(topicRefSchema)
  .describe("End users' messages only: other roles' messages never have topics.")

/** v2: topics are ids (stable, relabeled by events) with their label at the time, not labels alone. */
export const analysisMessagesAnalyzedV2 = defineEvent({
  type: 'analysis.messages-analyzed',
  version: 2,
  streamType: 'analysis',
  description:
    "Messages of a conversation were analyzed, or re-placed in a newly found topic; streamId is the internal conversation id. Each message's latest result replaces its earlier ones.",
  payload: z.strictObject({
    analyzer: analyzerSchema,
    results: z
      .array(
        z.strictObject({
          messageId: messageIdSchema,
          sentiment: sentimentSchema,
          topics: topicRefsSchema,
        }),
      )
      .min(1),
  }),
  example: {
    analyzer: exampleAnalyzer,
    results: exampleResultsV2,
  },
})

const resultsV2Schema = analysisMessagesAnalyzedV2.payload.shape.results

/**
 * v3: `signalsDecided`, whether the conversation's signals were decided again with these results, so that
 * a re-placement in a topic (which analyses nothing) is told apart from an analysis.
 */
export const analysisMessagesAnalyzedV3 = defineEvent({
  type: 'analysis.messages-analyzed',
  version: 3,
  streamType: 'analysis',
  description:
    "Messages of a conversation were analyzed, or re-placed in another topic; streamId is the internal conversation id. Each message's latest result replaces its earlier ones.",
  payload: z.strictObject({
    analyzer: analyzerSchema,
    results: resultsV2Schema,
    signalsDecided: z
      .boolean()
      .nullable()
      .describe(
        "true: the messages were analysed and the conversation's signals decided again with them, in the same transaction (analysis.signals-detected follows only when they changed). false: the results only moved to another topic (a newly found topic took them, a re-clustering moved them, a topic was created from examples): nothing was analysed, the signals were not decided. null: recorded as v1 or v2, which did not say (read as decided, as before v3).",
      ),
  }),
  example: {
    analyzer: exampleAnalyzer,
    results: exampleResultsV2,
    signalsDecided: true,
  },
})

/**
 * A result's `language` for an end user's message too short (or too unlike any language) to tell: ISO 639's
 * "undetermined". Not a detection: the language rollup does not count it.
 */
export const UNDETERMINED_LANGUAGE = 'und'

const resultV4Schema = resultsV2Schema.element.extend({
  language: z
    .string()
    .regex(/^([a-z]{2,3})$/)
    .optional()
    .describe(
      `End users' messages analysed: the language detected in the text (ISO 639-1, e.g. "en", "es"; "${UNDETERMINED_LANGUAGE}" when the text is under 20 characters or the detector is unsure). Absent for other roles' messages and where nothing was analysed (the result only moved to another topic): the message keeps the language it had. Read from v1 to v3: absent.`,
    ),
})

/** v4: each end-user message's detected `language`, so a lead can be told the analysis reads another language. */
export const analysisMessagesAnalyzedV4 = defineEvent({
  type: 'analysis.messages-analyzed',
  version: 4,
  streamType: 'analysis',
  description:
    "Messages of a conversation were analyzed, or re-placed in another topic; streamId is the internal conversation id. Each message's latest result replaces its earlier ones.",
  payload: z.strictObject({
    analyzer: analyzerSchema,
    results: z.array(resultV4Schema).min(1),
    signalsDecided: analysisMessagesAnalyzedV3.payload.shape.signalsDecided,
  }),
  example: {
    analyzer: exampleAnalyzer,
    results: [{ ...exampleResultsV2[0]!, language: 'en' }],
    signalsDecided: true,
  },
})

export const analysisConversationAnalyzedV2 = defineEvent({
  type: 'analysis.conversation-analyzed',
  version: 2,
  streamType: 'analysis',
  description:
    "A conversation as a whole was analyzed; streamId is the internal conversation id. sentiment and topics describe the end user's messages.",
  payload: z.strictObject({
    analyzer: analyzerSchema,
    sentiment: sentimentSchema.describe(
      "The mean of the end user's messages (of all messages when the conversation has none).",
    ),
    assistantSentiment: sentimentSchema
      .nullable()
      .describe("The mean of the assistant's messages; null when there are none."),
    topics: topicRefsSchema.describe('The topics of most of its end-user messages, most first; at most 5.'),
  }),
  example: {
    analyzer: exampleAnalyzer,
    sentiment: { score: -0.6, label: 'negative' },
    assistantSentiment: { score: 0.4, label: 'positive' },
    topics: [{ id: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21', label: 'refund, money back' }],
  },
})

/**
 * v3: `sentiment` is null when the conversation has no end-user message (v2 took the mean of all its
 * messages then, so a system prompt and a tool result made "the end user's" sentiment).
 */
export const analysisConversationAnalyzedV3 = defineEvent({
  type: 'analysis.conversation-analyzed',
  version: 3,
  streamType: 'analysis',
  description:
    "A conversation as a whole was analyzed; streamId is the internal conversation id. sentiment and topics describe the end user's messages.",
  payload: z.strictObject({
    analyzer: analyzerSchema,
    sentiment: sentimentSchema
      .nullable()
      .describe(
        "The mean of the end user's messages; null when the conversation has none (its system, tool and assistant messages are not the end user's). Read from v2, the mean of all its messages when it had none, as v2 recorded it.",
      ),
    assistantSentiment: sentimentSchema
      .nullable()
      .describe("The mean of the assistant's messages; null when there are none."),
    topics: topicRefsSchema.describe('The topics of most of its end-user messages, most first; at most 5.'),
  }),
  example: {
    analyzer: exampleAnalyzer,
    sentiment: null,
    assistantSentiment: { score: 0.4, label: 'positive' },
    topics: [],
  },
})

const topicStreamNote =
  "streamId is the chatbot's id: the chatbot's topics are one stream of the analysis stream type, so its topic events are in order."

export const analysisTopicDiscoveredV1 = defineEvent({
  type: 'analysis.topic-discovered',
  version: 1,
  streamType: 'analysis',
  description: `A chatbot has a new topic: found among its end users' messages by the language model, or configured in its settings.topics. ${topicStreamNote}`,
  payload: z.strictObject({
    topicId: z.uuid().describe('Stable: results name the topic by it from now on.'),
    label: z.string().describe("A short label from its members' own words (or the configured label)."),
    keywords: z
      .array(z.string())
      .describe('Its most distinctive terms, most first (or the configured keywords).'),
    configured: z.boolean().describe("Whether it is one of the chatbot's own topics (settings.topics)."),
  }),
  example: {
    topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
    label: 'refund, money back',
    keywords: ['refund', 'money back', 'return', 'charge'],
    configured: false,
  },
})

export const analysisTopicRelabeledV1 = defineEvent({
  type: 'analysis.topic-relabeled',
  version: 1,
  streamType: 'analysis',
  description: `A topic's label or keywords changed as it grew (or its configured keywords changed). ${topicStreamNote}`,
  payload: z.strictObject({
    topicId: z.uuid(),
    label: z.string(),
    keywords: z.array(z.string()),
  }),
  example: {
    topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
    label: 'refund, return',
    keywords: ['refund', 'return', 'money back'],
  },
})

export const analysisTopicMergedV1 = defineEvent({
  type: 'analysis.topic-merged',
  version: 1,
  streamType: 'analysis',
  description: `Two topics turned out to be one: topicId's messages count in \`into\` from now on, and topicId is not used again. ${topicStreamNote}`,
  payload: z.strictObject({
    topicId: z.uuid().describe('The topic merged away.'),
    into: z.uuid().describe('The topic that remains (the older one, or the configured one).'),
  }),
  example: { topicId: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10', into: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const analysisTopicSplitV1 = defineEvent({
  type: 'analysis.topic-split',
  version: 1,
  streamType: 'analysis',
  description: `Re-clustering found that a topic held more than one request: topicId keeps its id (and label) on its larger part, and each topic of \`into\` (announced by analysis.topic-discovered just before) took another part. The messages that moved are in their conversations' analysis.messages-analyzed events. ${topicStreamNote}`,
  payload: z.strictObject({
    topicId: z.uuid().describe('The topic that split; it remains, holding its larger part.'),
    into: z.array(z.uuid()).min(1).describe('The new topics holding the other parts.'),
  }),
  example: {
    topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
    into: ['1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10'],
  },
})

export const analysisTopicRetiredV1 = defineEvent({
  type: 'analysis.topic-retired',
  version: 1,
  streamType: 'analysis',
  description: `Re-clustering found no topic in what topicId held lately: it takes no message from now on. Its recent messages moved (to other topics or to "other") by their conversations' analysis.messages-analyzed events; older results that name it keep counting in it. ${topicStreamNote}`,
  payload: z.strictObject({ topicId: z.uuid().describe('The topic retired; its id is not used again.') }),
  example: { topicId: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10' },
})

const userTopicNote =
  "A decision of an owner or admin of the chatbot's organization (metadata.actor says who), on the chatbot's topic stream: streamId is the chatbot's id."

export const analysisTopicRenamedByUserV1 = defineEvent({
  type: 'analysis.topic-renamed-by-user',
  version: 1,
  streamType: 'analysis',
  description: `A topic was renamed by hand: its label is pinned from now on (neither growth nor re-clustering relabels it, and re-clustering leaves the topic and its members as they are, like the chatbot's own topics). ${userTopicNote}`,
  payload: z.strictObject({
    topicId: z.uuid(),
    label: z.string().min(1).max(80).describe("The new label, distinct from the chatbot's other topics'."),
  }),
  example: { topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21', label: 'Refunds' },
})

export const analysisTopicHiddenV1 = defineEvent({
  type: 'analysis.topic-hidden',
  version: 1,
  streamType: 'analysis',
  description: `A topic was hidden: analytics lists and the dashboard leave it out until it is unhidden. Messages keep joining it, and conversations keep it. ${userTopicNote}`,
  payload: z.strictObject({ topicId: z.uuid() }),
  example: { topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const analysisTopicUnhiddenV1 = defineEvent({
  type: 'analysis.topic-unhidden',
  version: 1,
  streamType: 'analysis',
  description: `A hidden topic is shown again. ${userTopicNote}`,
  payload: z.strictObject({ topicId: z.uuid() }),
  example: { topicId: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const analysisTopicMergedByUserV1 = defineEvent({
  type: 'analysis.topic-merged-by-user',
  version: 1,
  streamType: 'analysis',
  description: `A topic was merged by hand into another: topicId's messages count in \`into\` from now on (as for analysis.topic-merged), topicId is not used again, and \`into\` is pinned: re-clustering leaves it and its members as they are, so that it never undoes the merge. ${userTopicNote}`,
  payload: z.strictObject({
    topicId: z.uuid().describe('The topic merged away.'),
    into: z.uuid().describe('The topic that remains, with its label.'),
  }),
  example: { topicId: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10', into: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21' },
})

export const analysisThemesAssignedV1 = defineEvent({
  type: 'analysis.themes-assigned',
  version: 1,
  streamType: 'analysis',
  description: `A chatbot's topics were grouped into themes anew (its topics were found, relabeled or merged): the payload is the whole grouping and replaces the one before. A topic in no theme has none. ${topicStreamNote}`,
  payload: z.strictObject({
    themes: z
      .array(
        z.strictObject({
          themeId: z
            .uuid()
            .describe(
              'Stable while the theme keeps most of its topics: filter conversations with ?theme=<id>.',
            ),
          label: z
            .string()
            .min(1)
            .describe('A broad label from its topics\' own words ("Card", "Claim, policy").'),
          topicIds: z.array(z.uuid()).min(1).describe('Its topics (none merged away).'),
        }),
      )
      .describe(
        'Every theme of the chatbot; each topic is in at most one. Empty when its topics make no themes (fewer than four, or no grouping in which each theme holds at most half of them).',
      ),
  }),
  example: {
    themes: [
      {
        themeId: '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5b',
        label: 'Card',
        topicIds: ['9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21', '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10'],
      },
    ],
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

/** The built-in conversation signals, decided by services/analysis/src/signals/detect.ts: the one list. */
export const BUILTIN_SIGNAL_NAMES = [
  'escalation',
  'bot_failure',
  'repetition',
  'frustration',
  'resolution',
  'abandonment',
] as const

export const signalNameSchema = z
  .string()
  .regex(new RegExp(`^(${BUILTIN_SIGNAL_NAMES.join('|')}|custom:[a-z0-9-]{1,64})$`))
  .describe(
    `A built-in signal (${BUILTIN_SIGNAL_NAMES.join(', ')}) or a chatbot's own, \`custom:\` and the slug of its label.`,
  )

export const analysisSignalsDetectedV1 = defineEvent({
  type: 'analysis.signals-detected',
  version: 1,
  streamType: 'analysis',
  description:
    "A conversation's signals, all of them as of now: each replaces the conversation's earlier ones (an empty list: none). Decided when its messages are analysed and once more when its quiet period has passed (abandonment); streamId is the internal conversation id.",
  payload: z.strictObject({
    analyzer: analyzerSchema.describe(
      'The analyzer whose cues decided them: its version includes the rules of the signals.',
    ),
    signals: z.array(
      z.strictObject({
        name: signalNameSchema,
        label: z.string().min(1).max(100).optional().describe("A chatbot's own signal's label."),
        confidence: z.number().min(0).max(1).describe('0.5 at the threshold, towards 1 beyond it.'),
        evidence: z.array(messageIdSchema).describe('The messages it fired on, in conversation order.'),
        refinedBy: z
          .string()
          .regex(/^llm:.+$/)
          .optional()
          .describe(
            'Set when the signal was borderline and an LLM (`llm:` and its model) confirmed it (SIGNALS_LLM_REFINE=borderline); absent when the local model decided it alone. A borderline signal the LLM rejected is not listed.',
          ),
      }),
    ),
    settled: z
      .boolean()
      .describe(
        'Whether the quiet period has passed: abandonment is decided, and nothing changes until a new message.',
      ),
  }),
  example: {
    analyzer: exampleAnalyzer,
    signals: [
      { name: 'bot_failure', confidence: 0.93, evidence: ['m-2'] },
      { name: 'escalation', confidence: 0.81, evidence: ['m-3'] },
      {
        name: 'custom:asks-for-a-discount',
        label: 'asks for a discount',
        confidence: 0.7,
        evidence: ['m-1'],
        refinedBy: 'llm:gpt-4o-mini',
      },
    ],
    settled: false,
  },
})

/** v1 topics were labels (key phrases): each is its own id. v1 had no assistant sentiment. */
const asTopicRefs = (labels: readonly string[]) => labels.map((label) => ({ id: label, label }))

export const analysisUpcasters = [
  defineUpcaster(analysisMessagesAnalyzedV1, analysisMessagesAnalyzedV2, ({ payload }) => ({
    analyzer: payload.analyzer,
    results: payload.results.map((r) => ({ ...r, topics: asTopicRefs(r.topics) })),
  })),
  defineUpcaster(analysisMessagesAnalyzedV2, analysisMessagesAnalyzedV3, ({ payload }) => ({
    ...payload,
    signalsDecided: null,
  })),
  defineUpcaster(analysisMessagesAnalyzedV3, analysisMessagesAnalyzedV4, ({ payload }) => payload),
  defineUpcaster(analysisConversationAnalyzedV1, analysisConversationAnalyzedV2, ({ payload }) => ({
    analyzer: payload.analyzer,
    sentiment: payload.sentiment,
    assistantSentiment: null,
    topics: asTopicRefs(payload.topics),
  })),
  defineUpcaster(analysisConversationAnalyzedV2, analysisConversationAnalyzedV3, ({ payload }) => payload),
]

export const analysisTopicsSettlingV1 = defineEvent({
  type: 'analysis.topics-settling',
  version: 1,
  streamType: 'analysis',
  description: `The chatbot's first request since its topics were last re-clustered was placed: its topics are settling until the next re-clustering (analysis.topics-reclustered). ${topicStreamNote}`,
  payload: z.strictObject({
    since: utcTimestampSchema.describe('When the first request waiting for re-clustering was placed.'),
  }),
  example: { since: '2026-11-28T09:15:00.000Z' },
})

export const analysisTopicsReclusteredV1 = defineEvent({
  type: 'analysis.topics-reclustered',
  version: 1,
  streamType: 'analysis',
  description: `The chatbot's topics were re-clustered (after the run's lineage events). \`settling\` says whether requests placed while it ran still wait for the next run. ${topicStreamNote}`,
  payload: z.strictObject({
    reclusteredAt: utcTimestampSchema.describe('When the run committed.'),
    settling: z.boolean().describe('Requests placed since the run read its window wait for the next run.'),
    clustered: z.number().int().nonnegative().describe('Requests the run clustered (its window).'),
    topics: z.number().int().nonnegative().describe('Clusters the run found.'),
  }),
  example: { reclusteredAt: '2026-11-28T09:20:00.000Z', settling: false, clustered: 1200, topics: 18 },
})

export const analysisTopicsReclusterFailedV1 = defineEvent({
  type: 'analysis.topics-recluster-failed',
  version: 1,
  streamType: 'analysis',
  description: `A re-clustering run of the chatbot's topics failed (its clustering thread timed out or failed, or its commit did). The re-clustering policy (ReclusterPolicy, services/analysis/src/topics/reclusterer.ts) retries it after 30 s, doubling, up to TOPIC_RECLUSTER_MAX_ATTEMPTS; then it starts over after TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS. Analysis goes on meanwhile: requests join topics inside their spreads or wait. The next analysis.topics-reclustered ends the failures. ${topicStreamNote}`,
  payload: z.strictObject({
    attempt: z.number().int().positive().describe('The failed attempt, from 1.'),
    maxAttempts: z.number().int().positive().describe('Attempts before the run starts over later.'),
    nextAttemptAt: utcTimestampSchema.describe('When the run is tried again, at the earliest.'),
    startsOver: z.boolean().describe('The last attempt failed: the next starts a fresh count.'),
  }),
  example: { attempt: 1, maxAttempts: 3, nextAttemptAt: '2026-11-28T09:20:30.000Z', startsOver: false },
})

export const analysisTopicCreatedByUserV1 = defineEvent({
  type: 'analysis.topic-created-by-user',
  version: 1,
  streamType: 'analysis',
  description: `A topic was created from an owner's or admin's example phrases (chatbot.topic-creation-requested): its label is pinned from now on. The recent requests that lie clearly nearer it than their current topic moved into it, by their conversations' analysis.messages-analyzed events, after this one. ${userTopicNote}`,
  payload: z.strictObject({
    topicId: z.uuid().describe('The new topic.'),
    label: z.string().min(1).max(80).describe('Its label, as given.'),
    keywords: z
      .array(z.string())
      .describe("Its most frequent terms, from the examples' and its members' words."),
    examples: z.number().int().min(2).describe('How many example phrases it was made from.'),
  }),
  example: {
    topicId: '4c1e9a77-5b2d-4f0e-8a63-2d7f1b9c0e45',
    label: 'Roadside assistance',
    keywords: ['tow', 'car', 'battery', 'break'],
    examples: 4,
  },
})

const reanalysisNote =
  "Progress of a re-analysis an owner or admin asked for (chatbot.reanalysis-requested), on the chatbot's topic stream (streamId is the chatbot's id)."

export const analysisReanalysisStartedV1 = defineEvent({
  type: 'analysis.reanalysis-started',
  version: 1,
  streamType: 'analysis',
  description: `The chatbot's captured messages were queued for analysis by the analyzer named. ${reanalysisNote}`,
  payload: z.strictObject({
    reanalysisId: z.uuid().describe('The re-analysis (chatbot.reanalysis-requested).'),
    total: z
      .number()
      .int()
      .nonnegative()
      .describe(
        'Captures queued (a capture already analysed by this analyzer version is not queued again, but counts).',
      ),
    analyzer: z.string().describe('The analyzer, as name@version.'),
  }),
  example: { reanalysisId: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f', total: 1200, analyzer: 'minilm@3' },
})

export const analysisReanalysisProgressedV1 = defineEvent({
  type: 'analysis.reanalysis-progressed',
  version: 1,
  streamType: 'analysis',
  description: `More of a re-analysis' captures were analysed. ${reanalysisNote}`,
  payload: z.strictObject({
    reanalysisId: z.uuid(),
    done: z.number().int().nonnegative().describe('Captures analysed (or failed for good) so far.'),
    total: z.number().int().nonnegative(),
  }),
  example: { reanalysisId: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f', done: 600, total: 1200 },
})

export const analysisReanalysisFinishedV1 = defineEvent({
  type: 'analysis.reanalysis-finished',
  version: 1,
  streamType: 'analysis',
  description: `Every capture of a re-analysis was analysed, or failed for good. ${reanalysisNote}`,
  payload: z.strictObject({
    reanalysisId: z.uuid(),
    done: z.number().int().nonnegative().describe('Captures analysed.'),
    failed: z.number().int().nonnegative().describe('Captures whose analysis failed for good.'),
  }),
  example: { reanalysisId: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f', done: 1199, failed: 1 },
})

export const analysisReanalysisFailedV1 = defineEvent({
  type: 'analysis.reanalysis-failed',
  version: 1,
  streamType: 'analysis',
  description: `A re-analysis could not be started: the analysis service tried its command as often as its policy allows (command-runner.ts) and set it aside. Nothing of it was queued; another may be asked for. ${reanalysisNote}`,
  payload: z.strictObject({
    reanalysisId: z.uuid(),
    analyzer: z.string().describe('The analyzer that was to run, as name@version.'),
    attempts: z.number().int().positive().describe('How often the command was tried.'),
    reason: z
      .string()
      .describe(
        "What a lead may read: never the service's internals (those are in its log and its commands table).",
      ),
  }),
  example: {
    reanalysisId: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f',
    analyzer: 'minilm@3',
    attempts: 5,
    reason: 'The analysis service could not queue the captures (5 attempts). Ask again, or ask an operator.',
  },
})

export const analysisTopicCommandHandledV1 = defineEvent({
  type: 'analysis.topic-command-handled',
  version: 1,
  streamType: 'analysis',
  description: `What the analysis service did with an owner's or admin's topic command (a chatbot.topic-*-requested event; causationId is its id), in the transaction that applied it, after the events it produced: applied, unchanged (it changed nothing), refused (the topics as they were then did not allow it: its topic merged away meanwhile, say) or failed (tried as often as the command policy allows, then set aside). Every topic command gets one, in the order of the chatbot's stream, so commandStreamVersion tells how far the chatbot's topic commands have been handled. ${userTopicNote}`,
  payload: z.strictObject({
    commandEventId: z.uuid().describe('The command event handled (chatbot-events).'),
    commandStreamVersion: z
      .number()
      .int()
      .positive()
      .describe("The command event's streamVersion on the chatbot's stream."),
    commandType: z.enum(TOPIC_COMMAND_EVENT_TYPES),
    outcome: z.enum(['applied', 'unchanged', 'refused', 'failed']),
    reason: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Why a command was refused (not_found, gone, configured, label_taken, bad_target, no_language_model, or what topic creation gives) or failed; absent otherwise.',
      ),
  }),
  example: {
    commandEventId: '3c1d9e2a-5b7f-4a10-9c2e-8f4b6d0a1e35',
    commandStreamVersion: 14,
    commandType: 'chatbot.topic-merge-requested',
    outcome: 'refused',
    reason: 'gone',
  },
})

/**
 * v2: `moved`, how many requests a topic creation moved into the new topic (trial2: a creation whose
 * requests all sat in a pinned topic, one a user had merged into, moved none and said nothing of it).
 */
export const analysisTopicCommandHandledV2 = defineEvent({
  type: 'analysis.topic-command-handled',
  version: 2,
  streamType: 'analysis',
  description: analysisTopicCommandHandledV1.description,
  payload: analysisTopicCommandHandledV1.payload.extend({
    moved: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe(
        "An applied topic creation (chatbot.topic-creation-requested): how many of the window's requests moved into the new topic, 0 included (requests held by the chatbot's own topics keep their topic; until 2026-12-01 pinned ones, those a user renamed, created or merged into, kept theirs too). null for other commands, a creation refused or failed, and an event recorded as v1, which did not say.",
      ),
  }),
  example: {
    commandEventId: '3c1d9e2a-5b7f-4a10-9c2e-8f4b6d0a1e35',
    commandStreamVersion: 15,
    commandType: 'chatbot.topic-creation-requested',
    outcome: 'applied',
    moved: 0,
  },
})

/** Defined after the versions they join (analysisUpcasters come before these types' definitions). */
export const analysisTopicCommandUpcasters = [
  defineUpcaster(analysisTopicCommandHandledV1, analysisTopicCommandHandledV2, ({ payload }) => ({
    ...payload,
    moved: null,
  })),
]

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const analysisEventDefinitions = [
  analysisMessagesAnalyzedV1,
  analysisConversationAnalyzedV1,
  analysisFailedV1,
  analysisMessagesAnalyzedV2,
  analysisConversationAnalyzedV2,
  analysisTopicDiscoveredV1,
  analysisTopicRelabeledV1,
  analysisTopicMergedV1,
  analysisTopicSplitV1,
  analysisTopicRetiredV1,
  analysisThemesAssignedV1,
  analysisSignalsDetectedV1,
  analysisTopicRenamedByUserV1,
  analysisTopicHiddenV1,
  analysisTopicUnhiddenV1,
  analysisTopicMergedByUserV1,
  analysisTopicsSettlingV1,
  analysisTopicsReclusteredV1,
  analysisTopicCreatedByUserV1,
  analysisReanalysisStartedV1,
  analysisReanalysisProgressedV1,
  analysisReanalysisFinishedV1,
  analysisReanalysisFailedV1,
  analysisTopicsReclusterFailedV1,
  analysisTopicCommandHandledV1,
  analysisMessagesAnalyzedV3,
  analysisConversationAnalyzedV3,
  analysisTopicCommandHandledV2,
  analysisMessagesAnalyzedV4,
] as const

/** The latest version of each analysis event type: what readers see after upcasting. */
export const analysisEventSchema = z.discriminatedUnion('type', [
  analysisMessagesAnalyzedV4.schema,
  analysisConversationAnalyzedV3.schema,
  analysisFailedV1.schema,
  analysisTopicDiscoveredV1.schema,
  analysisTopicRelabeledV1.schema,
  analysisTopicMergedV1.schema,
  analysisTopicSplitV1.schema,
  analysisTopicRetiredV1.schema,
  analysisTopicRenamedByUserV1.schema,
  analysisTopicHiddenV1.schema,
  analysisTopicUnhiddenV1.schema,
  analysisTopicMergedByUserV1.schema,
  analysisThemesAssignedV1.schema,
  analysisSignalsDetectedV1.schema,
  analysisTopicsSettlingV1.schema,
  analysisTopicsReclusteredV1.schema,
  analysisTopicCreatedByUserV1.schema,
  analysisReanalysisStartedV1.schema,
  analysisReanalysisProgressedV1.schema,
  analysisReanalysisFinishedV1.schema,
  analysisReanalysisFailedV1.schema,
  analysisTopicsReclusterFailedV1.schema,
  analysisTopicCommandHandledV2.schema,
])
