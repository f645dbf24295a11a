import { requirePermission } from '@cas/auth'
import { defaultsOf, reads } from '@cas/config'
import { withOrgScope } from '@cas/db'
import { AppError, documented, errorResponses } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import {
  analyticsQuery,
  checkInterval,
  type Interval,
  resolveRange,
  sentimentRoleQuery,
  topicsQuery,
} from '../analytics/range.ts'
import type { QueryDeps } from '../deps.ts'
import { waitForChatbots } from '../read-your-writes.ts'
import { readAbandonmentPending } from '../repositories/abandonment-pending.ts'
import {
  checkTimeZone,
  type RollupScope,
  readOverview,
  readSentimentPoints,
} from '../repositories/analytics.ts'
import { chatbotInOrg } from '../repositories/chatbots.ts'
import { readLanguages } from '../repositories/languages.ts'
import { readSignals } from '../repositories/signals.ts'
import { readReclustering, readTopics } from '../repositories/topics.ts'

const count = z.number().int().nonnegative()
const average = z
  .number()
  .nullable()
  .describe('Mean sentiment score (-1..1) of the analyzed messages; null when none.')

const rangeSchema = z
  .object({ from: z.string(), to: z.string() })
  .describe('The range covered, widened to whole UTC hours: from inclusive, to exclusive.')

const overviewResponse = z.object({
  ok: z.literal(true),
  range: rangeSchema,
  totalConversations: count.describe('Conversations with a message in range.'),
  totalMessages: count,
  uniqueUsers: count.describe('Distinct end-user ids (user.id) of those conversations.'),
  avgMessagesPerConversation: z
    .number()
    .describe('totalMessages / totalConversations, 2 decimals; 0 when none.'),
  sentiment: z
    .object({ average, positive: count, neutral: count, negative: count, analyzed: count })
    .describe("The end users' messages: how the customers feel."),
  assistantSentiment: z
    .object({ average, positive: count, neutral: count, negative: count, analyzed: count })
    .describe("The assistant's messages, apart."),
  topTopics: z
    .array(
      z.object({
        topic: z.string().describe("The topic's label."),
        id: z.string().describe('The topic id (GET /api/v1/analytics/topics, ?topic= of the conversations).'),
        count,
      }),
    )
    .describe(
      'The 10 topics of most conversations with a message in range, ranked as on the Topics page (GET /api/v1/analytics/topics: most conversations, then most end-user messages, then by label); "other" apart (otherTopic). `count` is conversations.',
    ),
  otherTopic: z
    .object({ topic: z.string().describe('"Other".'), id: z.string().describe('"other".'), count })
    .nullable()
    .describe(
      'The long tail: conversations with a message in range in no topic close enough (`?topic=other` lists them), apart from topTopics and shown after them, as on the Topics page; null when there are none.',
    ),
  messagesByRole: z.object({ user: count, assistant: count, system: count, tool: count }),
  languages: z
    .object({
      detected: count.describe(
        'End-user messages in range whose language was detected: analysed, 20 characters or more, and placed by the detector (docs/analysis.md, "Languages").',
      ),
      notEnglish: count.describe('Of those, the ones detected in a language other than English.'),
      notEnglishShare: z
        .number()
        .nullable()
        .describe(
          'notEnglish / detected, 4 decimals; null when none was detected. The analysis reads English only: where this is large, sentiment, topics and signals are unreliable.',
        ),
      mainOther: z
        .object({
          language: z.string().describe('ISO 639-1 code, e.g. "es".'),
          messages: count,
        })
        .nullable()
        .describe('The language other than English of most of those messages; null when none.'),
    })
    .describe("The languages of the end users' messages in range."),
})

const sentimentResponse = z.object({
  ok: z.literal(true),
  interval: z.enum(['hour', 'day', 'week']),
  role: z.enum(['user', 'assistant']),
  range: rangeSchema,
  points: z.array(
    z.object({
      bucket: z.string().describe("The bucket's start (local midnight for days and weeks), in UTC."),
      average,
      positive: count,
      neutral: count,
      negative: count,
      count: count.describe('Analyzed messages in the bucket.'),
    }),
  ),
})

const trendSchema = z
  .array(z.object({ bucket: z.string(), messages: count }))
  .describe('End-user messages in the topic per bucket, every bucket in range.')
const topicFigures = {
  conversations: count.describe(
    'Conversations with a message in range (any role) that are in the topic now, wherever in time their ' +
      'requests of it lie: a conversation active in range whose request came before it counts, so ' +
      '`messages` can be 0 beside it. The same set as GET /api/v1/conversations?topic= over the range.',
  ),
  messages: count.describe("The topic's end-user messages in range."),
  share: z
    .number()
    .describe('conversations / the conversations in range that have a topic ("other" included).'),
  averageSentiment: average.describe(
    "The mean sentiment of the topic's end-user messages in range; null when none.",
  ),
  trend: trendSchema,
}
const topicsResponse = z.object({
  ok: z.literal(true),
  interval: z.enum(['hour', 'day', 'week']),
  range: rangeSchema,
  conversationsWithTopics: count.describe('Conversations with a message in range that have a topic.'),
  topics: z
    .array(
      z.object({
        id: z.string().describe('Stable topic id: filter conversations with ?topic=<id>.'),
        chatbotId: z.uuid(),
        label: z.string(),
        keywords: z.array(z.string()),
        configured: z.boolean().describe("One of the chatbot's own topics (settings.topics)."),
        theme: z
          .object({
            id: z.string().describe('Filter conversations with ?theme=<id>.'),
            label: z.string(),
          })
          .nullable()
          .describe(
            "The theme the topic is grouped in: the chatbot's topics grouped by their meaning into a handful of themes, labelled from their words; null when none (the lexical and LLM analyzers' key phrases, a topic not grouped yet).",
          ),
        ...topicFigures,
        examples: z
          .array(
            z.object({
              id: z.uuid(),
              conversationId: z.string(),
              lastMessageAt: z.string(),
              sentiment: z.enum(['positive', 'neutral', 'negative']).nullable(),
              excerpt: z
                .string()
                .nullable()
                .describe('The first end-user message of it in the topic (200 characters).'),
            }),
          )
          .describe('The most recent conversations of the topic, at most 3.'),
      }),
    )
    .describe('Most conversations first (ties: more messages, then label).'),
  themes: z
    .array(
      z.object({
        id: z.string().describe('Filter conversations with ?theme=<id>.'),
        chatbotId: z.uuid(),
        label: z.string().describe('One or two words its topics share ("Card", "Claim, policy").'),
        conversations: count.describe(
          'Conversations with a message in range in any of its topics (one in two of them counts once).',
        ),
        messages: count.describe("Its topics' end-user messages in range."),
        share: z.number().describe('conversations / the conversations in range that have a topic.'),
        topicIds: z
          .array(z.string())
          .describe('Its topics with conversations in range, as ranked (those beyond `limit` too).'),
      }),
    )
    .describe('The themes of the topics with conversations in range, most conversations first.'),
  other: z
    .object(topicFigures)
    .nullable()
    .describe("The long tail: end users' messages no topic is similar enough to (?topic=other)."),
  hiddenTopics: z
    .array(z.object({ id: z.string(), chatbotId: z.uuid(), label: z.string() }))
    .describe(
      'Topics an owner or admin hid (POST /api/v1/chatbots/{id}/topics/{topicId}/hide): left out of `topics` and `themes`, whatever the range; unhide them to show them again.',
    ),
  quietTopics: z
    .array(z.object({ id: z.string(), chatbotId: z.uuid(), label: z.string() }))
    .describe(
      'Topics a lead keeps (renamed, created from examples or merged into: pinned), not hidden, that no conversation with a message in range is in: a correction stays in sight, to rename, merge or hide, when a re-analysis or a quiet range empties it. Re-clustering never retires a pinned topic.',
    ),
  reclustering: z
    .object({
      settling: z
        .boolean()
        .describe(
          'Requests have arrived since the last re-clustering: topics may still split, merge or be retired at the next run (within TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS).',
        ),
      lastReclusteredAt: z
        .string()
        .nullable()
        .describe(
          "When the chatbot's topics were last re-clustered (the latest of the chatbots'); null: never.",
        ),
      retrying: z
        .object({
          attempts: z.number().int().describe('Attempts that failed in a row (the most of the chatbots).'),
          nextAttemptAt: z.string().describe('When the next attempt is due, at the earliest (the soonest).'),
        })
        .nullable()
        .describe(
          'The last re-clustering run failed and is retried per its policy (analysis.topics-recluster-failed); null when the last run succeeded. Requests still join topics inside their spreads meanwhile.',
        ),
    })
    .describe(
      "The background re-clustering of the chatbot's topics (of the organization's chatbots without chatbotId).",
    ),
})

const EXAMPLE_RANGE = { from: '2026-10-29T10:00:00.000Z', to: '2026-11-28T11:00:00.000Z' }
const EXAMPLE_CHATBOT = '2f4a6c8e-0b1d-4e3f-8a5c-7e9b1d3f5a60'

const overviewExample: z.output<typeof overviewResponse> = {
  ok: true,
  range: EXAMPLE_RANGE,
  totalConversations: 120,
  totalMessages: 480,
  uniqueUsers: 95,
  avgMessagesPerConversation: 4,
  sentiment: { average: 0.12, positive: 90, neutral: 110, negative: 40, analyzed: 240 },
  assistantSentiment: { average: 0.35, positive: 120, neutral: 115, negative: 5, analyzed: 240 },
  topTopics: [
    { topic: 'Password reset', id: 'a1b2c3d4e5f60718', count: 40 },
    { topic: 'Billing, invoices', id: 'b2c3d4e5f6071829', count: 25 },
  ],
  otherTopic: { topic: 'Other', id: 'other', count: 12 },
  messagesByRole: { user: 240, assistant: 240, system: 0, tool: 0 },
  languages: {
    detected: 200,
    notEnglish: 6,
    notEnglishShare: 0.03,
    mainOther: { language: 'es', messages: 4 },
  },
}

const topicsExample: z.output<typeof topicsResponse> = {
  ok: true,
  interval: 'week',
  range: EXAMPLE_RANGE,
  conversationsWithTopics: 77,
  themes: [
    {
      id: '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5b',
      chatbotId: EXAMPLE_CHATBOT,
      label: 'Account',
      conversations: 40,
      messages: 52,
      share: 0.52,
      topicIds: ['a1b2c3d4e5f60718'],
    },
  ],
  topics: [
    {
      id: 'a1b2c3d4e5f60718',
      chatbotId: EXAMPLE_CHATBOT,
      label: 'Password reset',
      keywords: ['password', 'reset', 'link'],
      configured: false,
      theme: { id: '4f3e1a0b-7c2d-4e5f-8a9b-0c1d2e3f4a5b', label: 'Account' },
      conversations: 40,
      messages: 52,
      share: 0.52,
      averageSentiment: -0.2,
      trend: [
        { bucket: '2026-11-16T00:00:00.000Z', messages: 20 },
        { bucket: '2026-11-23T00:00:00.000Z', messages: 32 },
      ],
      examples: [
        {
          id: '0f8e5d2c-7c1b-4e0a-9b3e-2d4f6a8c1e57',
          conversationId: 'chat-0001',
          lastMessageAt: '2026-11-27T09:30:00.000Z',
          sentiment: 'negative',
          excerpt: 'How do I reset my password? The link never arrives.',
        },
      ],
    },
  ],
  other: {
    conversations: 12,
    messages: 14,
    share: 0.16,
    averageSentiment: 0,
    trend: [
      { bucket: '2026-11-16T00:00:00.000Z', messages: 6 },
      { bucket: '2026-11-23T00:00:00.000Z', messages: 8 },
    ],
  },
  hiddenTopics: [
    { id: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10', chatbotId: EXAMPLE_CHATBOT, label: 'thanks, bye' },
  ],
  quietTopics: [
    { id: '7d2e9b14-6a3f-4c8e-9b1d-5e0f2a4c6b83', chatbotId: EXAMPLE_CHATBOT, label: 'Roadside assistance' },
  ],
  reclustering: { settling: true, lastReclusteredAt: '2026-11-28T10:58:00.000Z', retrying: null },
}

const sentimentExample: z.output<typeof sentimentResponse> = {
  ok: true,
  interval: 'day',
  role: 'user',
  range: { from: '2026-11-26T00:00:00.000Z', to: '2026-11-28T00:00:00.000Z' },
  points: [
    { bucket: '2026-11-26T00:00:00.000Z', average: 0.1, positive: 12, neutral: 20, negative: 5, count: 37 },
    { bucket: '2026-11-27T00:00:00.000Z', average: null, positive: 0, neutral: 0, negative: 0, count: 0 },
  ],
}

const rateSchema = z.number().min(0).max(1)
const signalsResponse = z.object({
  ok: z.literal(true),
  interval: z.enum(['hour', 'day', 'week']),
  range: rangeSchema,
  conversations: count.describe('Conversations whose last message is in range.'),
  signals: z
    .array(
      z.object({
        name: z
          .string()
          .describe(
            'A built-in signal, or custom:<slug>; every built-in one is listed, a custom one while it is on for a chatbot of the scope (or stored for a chatbot not yet projected).',
          ),
        label: z.string().nullable().describe("A chatbot's own signal's label (null for a built-in one)."),
        enabled: z
          .boolean()
          .describe(
            'On for the chatbot (`settings.signals`); for the organization, on for one of its chatbots at least. A signal off is counted nowhere: 0 conversations, 0 checked.',
          ),
        conversations: count.describe(
          'Conversations in range with the signal, of the chatbots for which it is on now.',
        ),
        conversationsChecked: count.describe(
          "Conversations in range checked for the signal: the rate's denominator. Of the chatbots for which it is on, those whose signals were last decided (when they were last analysed) in a period it was on (from the chatbot's creation, or from the settings change that turned it on or added it, to the one that turned it off), those that carry it, and those decided before the start of a finished re-analysis that ran while it was on; a conversation not analysed yet is checked for none.",
        ),
        rate: rateSchema.describe('conversations / conversationsChecked (0 when none was checked).'),
        trend: z
          .array(
            z.object({
              bucket: z.string(),
              conversations: count,
              conversationsChecked: count,
              rate: rateSchema,
            }),
          )
          .describe(
            "Per bucket of the last message's time: conversations with the signal, those checked for it, and their rate.",
          ),
      }),
    )
    .describe('Built-in signals first, in their documented order, then custom ones by name.'),
  topics: z
    .array(
      z.object({
        id: z.string().describe('The topic id (?topic= of the conversations).'),
        label: z.string(),
        conversations: count,
        signals: z
          .record(
            z.string(),
            z.object({
              conversations: count.describe("The topic's conversations with the signal."),
              conversationsChecked: count.describe(
                "The topic's conversations checked for the signal (as the signal's own conversationsChecked): the rate's denominator.",
              ),
              rate: rateSchema.describe('conversations / conversationsChecked (0 when none was checked).'),
            }),
          )
          .describe('Knowledge gaps: bot_failure, escalation, repetition, frustration and abandonment.'),
      }),
    )
    .describe(
      'Per topic (most conversations first), the rates of the knowledge-gap signals. Topics an owner or admin hid are left out, here and from `needsAttention`, as from the topics report; their conversations still count in `signals`.',
    ),
  needsAttention: z
    .array(
      z.object({
        id: z.string(),
        label: z.string(),
        conversations: count,
        botFailures: count,
        conversationsChecked: count.describe(
          "The topic's conversations checked for bot_failure: the denominator of botFailureRate and score.",
        ),
        botFailureRate: rateSchema.describe('botFailures / conversationsChecked.'),
        score: rateSchema.describe(
          "The lower bound of the 95 % Wilson interval of the bot-failure rate: the ranking's key.",
        ),
        examples: z
          .array(z.uuid())
          .describe(
            'Its latest conversations with a bot failure (at most 3): GET /api/v1/conversations/{id}.',
          ),
        exampleConversations: z
          .array(
            z.object({
              id: z.uuid().describe('GET /api/v1/conversations/{id}.'),
              conversationId: z.string().describe("The caller's conversation id."),
              firstMessageAt: z.string().describe('When the conversation started: its first message.'),
              excerpt: z
                .string()
                .nullable()
                .describe(
                  "The end user's first message in this topic (or a topic merged into it), as the Topics page's examples show it, on one line, at most 160 characters (an ellipsis ends one that was cut); where no message carries the topic, the conversation list's `preview` (the end user's first message); null when the end user has said nothing yet.",
                ),
            }),
          )
          .describe(
            '`examples` in the same order, each with what tells them apart: when it started and what the end user asked in the topic.',
          ),
        link: z
          .string()
          .describe(
            "The conversation list filtered to the topic and bot_failure over the report's range (`from`, and `to` less a millisecond, as the list's `to` is inclusive): the conversations counted in `botFailures`.",
          ),
      }),
    )
    .describe('Topics with a bot failure, ranked by how often the bot fails their users.'),
  buckets: z.array(z.object({ bucket: z.string(), conversations: count })),
  abandonmentPending: z
    .object({
      conversations: count.describe(
        "Conversations in range still within their chatbot's quiet period (`settings.signals.abandonmentAfterMinutes`, 30 by default) since their last end-user or assistant message: their abandonment is not decided yet, so `abandonment` may still rise after the status reads up to date. Chatbots with abandonment off have none.",
      ),
      nextDueAt: z
        .string()
        .nullable()
        .describe(
          "When the first of them leaves its quiet period (its last end-user or assistant message's time plus the quiet period); the analysis decides it at its next sweep (every 30 s). Null when none waits.",
        ),
      quietPeriodMinutes: z
        .number()
        .nullable()
        .describe(
          "The quiet period of the scope's chatbots with abandonment on, in minutes, when they share one; null when they differ or none has it on.",
        ),
    })
    .describe(
      "The range's conversations whose abandonment is still to be decided, as of the request, by each chatbot's quiet period now.",
    ),
})

const signalsExample: z.output<typeof signalsResponse> = {
  ok: true,
  interval: 'week',
  range: EXAMPLE_RANGE,
  conversations: 120,
  signals: [
    {
      name: 'bot_failure',
      label: null,
      enabled: true,
      conversations: 18,
      conversationsChecked: 120,
      rate: 0.15,
      trend: [
        { bucket: '2026-11-16T00:00:00.000Z', conversations: 8, conversationsChecked: 50, rate: 0.16 },
        { bucket: '2026-11-23T00:00:00.000Z', conversations: 10, conversationsChecked: 70, rate: 0.1429 },
      ],
    },
  ],
  topics: [
    {
      id: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
      label: 'Password reset',
      conversations: 40,
      signals: {
        bot_failure: { conversations: 12, conversationsChecked: 40, rate: 0.3 },
        escalation: { conversations: 6, conversationsChecked: 40, rate: 0.15 },
        repetition: { conversations: 5, conversationsChecked: 40, rate: 0.125 },
        frustration: { conversations: 4, conversationsChecked: 40, rate: 0.1 },
        abandonment: { conversations: 7, conversationsChecked: 40, rate: 0.175 },
      },
    },
  ],
  needsAttention: [
    {
      id: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
      label: 'Password reset',
      conversations: 40,
      botFailures: 12,
      conversationsChecked: 40,
      botFailureRate: 0.3,
      score: 0.1806,
      examples: ['0f8e5d2c-7c1b-4e0a-9b3e-2d4f6a8c1e57'],
      exampleConversations: [
        {
          id: '0f8e5d2c-7c1b-4e0a-9b3e-2d4f6a8c1e57',
          conversationId: 'chat-0001',
          firstMessageAt: '2026-11-27T09:29:12.000Z',
          excerpt: 'How do I reset my password? The link never arrives.',
        },
      ],
      link: `/api/v1/conversations?${new URLSearchParams({
        topic: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
        signal: 'bot_failure',
        from: EXAMPLE_RANGE.from,
        to: '2026-11-28T10:59:59.999Z',
      })}`,
    },
  ],
  buckets: [
    { bucket: '2026-11-16T00:00:00.000Z', conversations: 50 },
    { bucket: '2026-11-23T00:00:00.000Z', conversations: 70 },
  ],
  abandonmentPending: { conversations: 12, nextDueAt: '2026-11-29T23:41:05.000Z', quietPeriodMinutes: 30 },
}

/** Checks, in the request's organization scope, what only the database can tell: the chatbot and the zone. */
async function checkScope(client: pg.ClientBase, orgId: string, chatbotId: string | undefined, tz: string) {
  // Another organization's chatbot answers like an unknown one (API.md: never reveal existence).
  if (chatbotId !== undefined && !(await chatbotInOrg(client, orgId, chatbotId))) {
    throw new AppError('not_found', 'No chatbot with this id.')
  }
  await checkTimeZone(client, tz)
}

interface ScopedQuery {
  readonly chatbotId?: string | undefined
  readonly tz: string
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly days?: number | undefined
}

/**
 * An analytics request's common part: its range resolved (and, when it has buckets, the interval checked
 * against it), then `read` run in the organization's scope once the chatbot and the zone are known good.
 */
async function readScoped<T>(
  deps: QueryDeps,
  orgId: string,
  query: ScopedQuery,
  interval: Interval | undefined,
  read: (client: pg.ClientBase, scope: RollupScope) => Promise<T>,
): Promise<{ range: { from: string; to: string }; result: T }> {
  const { chatbotId, tz } = query
  const range = resolveRange({ from: query.from, to: query.to, days: query.days }, deps.now(), tz)
  if (interval !== undefined) checkInterval(interval, range)
  const result = await withOrgScope(deps.readerPool, orgId, async (client) => {
    await checkScope(client, orgId, chatbotId, tz)
    return read(client, { orgId, chatbotId, from: range.from, to: range.to })
  })
  return { range: { from: range.from.toISOString(), to: range.to.toISOString() }, result }
}

/**
 * Dashboard analytics, from the projector's hourly rollups only (see repositories/analytics.ts). Ranges
 * resolve to whole UTC hours (analytics/range.ts), and responses say which hours they cover.
 */
export async function registerAnalyticsRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['analytics']
  const security = [{ session: [] }]
  const errors = errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found')
  const readYourWritesTimeoutMs =
    deps.readYourWritesTimeoutMs ?? defaultsOf(reads).READ_YOUR_WRITES_TIMEOUT_MS

  r.get(
    '/api/v1/analytics/overview',
    {
      schema: {
        tags,
        security,
        operationId: 'getAnalyticsOverview',
        summary: 'Conversations, messages, users, sentiment and top topics over a range',
        description:
          'Aggregate figures of the organization, or of one chatbot (`chatbotId`), over a range: `from`/`to`, ' +
          'or the `days` (default 30, at most 365) before `to` (default now), widened to whole UTC hours. ' +
          'Computed from hourly rollups. `tz` changes no figure here; only a `to` on one of its local ' +
          'midnights rounds down to that hour, as for the other analytics. A conversation counts when any of ' +
          'its messages lies in the range, in each topic it is in now (topTopics). `uniqueUsers` counts an ' +
          "end user's user.id once across the scope's chatbots. 404 for a chatbot not in the organization.",
        querystring: analyticsQuery,
        response: {
          200: documented(overviewResponse, {
            description: 'The figures over the range the answer names.',
            example: overviewExample,
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'analytics:read')
      const { range, result } = await readScoped(
        deps,
        orgId,
        request.query,
        undefined,
        async (client, scope) => ({
          ...(await readOverview(client, scope)),
          languages: await readLanguages(client, scope),
        }),
      )
      return { ok: true as const, range, ...result }
    },
  )

  r.get(
    '/api/v1/analytics/topics',
    {
      schema: {
        tags,
        security,
        operationId: 'getAnalyticsTopics',
        summary: 'What end users talk about: topics with their figures, trend and examples',
        description:
          'What end users talk about: the topics found in their messages (or configured in settings.topics), ' +
          'with conversations, messages, share, sentiment, a trend per `interval` (hour, day, week; hour for ' +
          'ranges of at most 7 days) and up to 3 recent examples; most conversations first, `limit` at most ' +
          '1,000 (default 20). The long tail no topic is close enough to is `other`, apart. Range parameters ' +
          'as for the overview; `tz` sets the day and week buckets.',
        querystring: topicsQuery,
        response: {
          200: documented(topicsResponse, {
            description: 'The topics over the range, and the long tail apart.',
            example: topicsExample,
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'analytics:read')
      const { chatbotId, tz, interval, limit } = request.query
      const { range, result } = await readScoped(
        deps,
        orgId,
        request.query,
        interval,
        async (client, scope) => ({
          ...(await readTopics(client, scope, interval, tz, limit)),
          reclustering: await readReclustering(client, orgId, chatbotId),
        }),
      )
      return { ok: true as const, interval, range, ...result }
    },
  )

  r.get(
    '/api/v1/analytics/signals',
    {
      schema: {
        tags,
        security,
        operationId: 'getAnalyticsSignals',
        summary:
          'Where the bot lets users down: conversation signals, knowledge gaps and topics needing attention',
        description:
          'Conversation signals (escalation, bot failure, repetition, frustration, resolution, abandonment, and custom ones) over the conversations whose last message is in range: counts, rates and trends per `interval`; per topic the knowledge-gap rates; and the topics that need attention, ranked by how often the bot fails their users. Range, `chatbotId`, `tz`, `interval` and `limit` as for the topics.',
        querystring: topicsQuery,
        response: {
          200: documented(signalsResponse, {
            description: 'The signals over the range, per topic, and the topics needing attention.',
            example: signalsExample,
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'analytics:read')
      const { chatbotId, tz, interval, limit } = request.query
      // Which signals are on, and a custom one's label, are the chatbots' settings: read-your-writes for them.
      await waitForChatbots(deps.readerPool, orgId, chatbotId, readYourWritesTimeoutMs)
      const { range, result: report } = await readScoped(
        deps,
        orgId,
        request.query,
        interval,
        async (client, scope) => ({
          ...(await readSignals(client, scope, interval, tz, limit)),
          abandonmentPending: await readAbandonmentPending(client, scope, deps.now()),
        }),
      )
      return {
        ok: true as const,
        interval,
        range,
        ...report,
        needsAttention: report.needsAttention.map((t) => ({
          ...t,
          link: `/api/v1/conversations?${new URLSearchParams({
            ...(chatbotId ? { chatbotId } : {}),
            topic: t.id,
            signal: 'bot_failure',
            from: range.from,
            // The list's `to` is inclusive ("at or before"), the report's exclusive.
            to: new Date(Date.parse(range.to) - 1).toISOString(),
          })}`,
        })),
      }
    },
  )

  r.get(
    '/api/v1/analytics/sentiment',
    {
      schema: {
        tags,
        security,
        operationId: 'getAnalyticsSentiment',
        summary: 'Sentiment over time, one point per hour, day or week',
        description:
          "Sentiment per hour, day or week, with a point for every bucket in range: the end users' messages, " +
          "or the assistant's with `role=assistant`. Range parameters as for the overview; `tz` sets where " +
          'days and weeks start.',
        querystring: sentimentRoleQuery,
        response: {
          200: documented(sentimentResponse, {
            description: 'One point per bucket in range, empty buckets included.',
            example: sentimentExample,
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'analytics:read')
      const { tz, interval, role } = request.query
      const { range, result: points } = await readScoped(
        deps,
        orgId,
        request.query,
        interval,
        (client, scope) => readSentimentPoints(client, scope, interval, tz, role),
      )
      return { ok: true as const, interval, role, range, points }
    },
  )
}
