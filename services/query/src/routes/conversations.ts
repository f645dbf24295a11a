import { requirePermission } from '@cas/auth'
import { defaultsOf, reads } from '@cas/config'
import { withOrgScope } from '@cas/db'
import { AppError, documented, errorResponses, isoDateTimeSchema } from '@cas/http'
import { isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { invalidQuery } from '../analytics/range.ts'
import type { QueryDeps } from '../deps.ts'
import { waitForChatbots, waitForProjection } from '../read-your-writes.ts'
import { chatbotInOrg } from '../repositories/chatbots.ts'
import {
  conversationMessages,
  findConversation,
  listConversations,
  type PageKey,
  projectedVersion,
  toConversation,
  writtenVersion,
} from '../repositories/conversations.ts'
import { signalsOf } from '../repositories/signals.ts'
import { resolveTopics, themeFilterIds, topicFilterIds } from '../repositories/topics.ts'
import { conversationSignalSchema, signalParamSchema } from './signal-schemas.ts'

const sentimentSchema = z
  .object({ score: z.number(), label: z.enum(['positive', 'neutral', 'negative']) })
  .nullable()

const conversationSchema = z.object({
  id: z.uuid(),
  chatbotId: z.uuid(),
  conversationId: z.string().describe("The caller's conversation id."),
  user: z.record(z.string(), z.unknown()),
  organization: z.record(z.string(), z.unknown()),
  session: z.record(z.string(), z.unknown()),
  custom: z.record(z.string(), z.unknown()),
  messageCount: z.number().int(),
  firstMessageAt: z.string(),
  lastMessageAt: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  sentiment: sentimentSchema.describe(
    "The mean of the end user's messages; null until they are analysed, and when the conversation has no end-user message (its system, tool and assistant messages never make it).",
  ),
  assistantSentiment: sentimentSchema.describe(
    "The mean of the assistant's messages; null until they are analysed, and when there are none.",
  ),
  topics: z.array(z.string()).describe("The labels of the topics of the end user's messages, most first."),
  topicIds: z.array(z.string()).describe('Their ids, in the same order.'),
  preview: z
    .string()
    .nullable()
    .describe(
      "The conversation's first end-user message (by sentAt) with more than whitespace, on one line, at most 160 characters (an ellipsis ends one that was cut); null when the end user has said nothing yet.",
    ),
  signals: z
    .array(conversationSignalSchema)
    .describe(
      'Its signals (docs/analysis.md, "Conversation signals"), built-in ones first; empty when none.',
    ),
})

const conversationExample: z.output<typeof conversationSchema> = {
  id: '0f8e5d2c-7c1b-4e0a-9b3e-2d4f6a8c1e57',
  chatbotId: '2f4a6c8e-0b1d-4e3f-8a5c-7e9b1d3f5a60',
  conversationId: 'chat-0001',
  user: { id: 'u-42', plan: 'pro' },
  organization: {},
  session: {},
  custom: { plan: 'pro' },
  messageCount: 2,
  firstMessageAt: '2026-11-21T10:00:00.000Z',
  lastMessageAt: '2026-11-21T10:00:05.000Z',
  createdAt: '2026-11-21T10:00:06.000Z',
  updatedAt: '2026-11-21T10:00:09.000Z',
  sentiment: { score: -0.3, label: 'negative' },
  assistantSentiment: { score: 0.2, label: 'neutral' },
  topics: ['Password reset'],
  topicIds: ['a1b2c3d4e5f60718'],
  preview: 'How do I reset my password?',
  signals: [
    { name: 'bot_failure', label: null, confidence: 0.71, evidence: ['m-2'], refinedBy: 'llm:gpt-4o-mini' },
  ],
}

const listQuery = z.strictObject({
  chatbotId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(512).optional().describe('Opaque: the nextCursor of the previous page.'),
  from: isoDateTimeSchema.optional().describe('Last message at or after.'),
  to: isoDateTimeSchema.optional().describe('Last message at or before.'),
  userId: z.string().min(1).max(256).optional().describe('End-user id (user.id).'),
  sentiment: z.enum(['positive', 'neutral', 'negative']).optional(),
  signal: signalParamSchema
    .optional()
    .describe('Conversations with this signal (a built-in one, or `custom:<slug>`).'),
  topic: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'A topic id, `other` (the long tail alone, in any case), or part of a topic label or key phrase in any case (`bill` finds "Billing, invoices"): conversations in any topic it matches.',
    ),
  theme: z
    .uuid()
    .optional()
    .describe(
      "A theme id (GET /api/v1/analytics/topics gives each topic's theme): conversations in any topic of the theme. With `topic`, conversations matching both. 404 for a theme the organization (or `chatbotId`) does not have now: themes are regrouped as topics change.",
    ),
  q: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Full-text search in message content, stemmed (English): `crash` also finds crashes, crashed and crashing. Accents are ignored: `devolucion` finds devolución. Web-search syntax: "a phrase", `or`, `-word`. English stop words are not indexed.',
    ),
})

function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.lastMessageAt, key.id])).toString('base64url')
}

function decodeCursor(cursor: string): PageKey {
  try {
    const [lastMessageAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (typeof lastMessageAt === 'string' && !Number.isNaN(Date.parse(lastMessageAt)) && isUuid(id)) {
      return { lastMessageAt, id }
    }
  } catch {}
  throw new AppError('invalid_request', 'The cursor is not one this API returned.', [
    { path: '/cursor', message: 'invalid cursor', in: 'querystring' },
  ])
}

/**
 * A from/to filter as a UTC instant. ISO 8601 allows zone offsets Postgres refuses (beyond ±15:59), so
 * the database is only ever given the instant, never the caller's spelling of it.
 */
function instant(value: string | undefined): string | undefined {
  return value === undefined ? undefined : new Date(value).toISOString()
}

export async function registerConversationRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['conversations']
  const security = [{ session: [] }]
  const timeoutMs = deps.readYourWritesTimeoutMs ?? defaultsOf(reads).READ_YOUR_WRITES_TIMEOUT_MS

  r.get(
    '/api/v1/conversations',
    {
      schema: {
        operationId: 'listConversations',
        description:
          'The conversations of the organization (or of one chatbot), by last message time, newest ' +
          'first. Filters: `from`/`to` (last message time, ISO 8601 with a zone, both ends inclusive; 400 ' +
          "for a `from` after `to`), `userId` (user.id), `sentiment` (the end user's), `signal`, `topic` " +
          '(a topic id, `other`, or part of a label or key phrase in any case), `theme` (a theme id) and ' +
          '`q` (full-text search in messages, stemmed English, web-search syntax). ' +
          'Paged: `limit` at most 100 (default 20); pass `nextCursor` back as `cursor`. A conversation ' +
          'read right after its capture waits up to READ_YOUR_WRITES_TIMEOUT_MS for it to be projected. ' +
          "404 for a `chatbotId` not in the organization (unknown, deleted or another organization's), " +
          'and for a `theme` the organization (or the chatbot) does not have.',
        summary: 'List conversations, newest first, with filters and full-text search',
        tags,
        security,
        querystring: listQuery,
        response: {
          200: documented(
            z.object({
              ok: z.literal(true),
              conversations: z.array(conversationSchema),
              nextCursor: z.string().nullable(),
            }),
            {
              description: 'One page of conversations, and the cursor of the next (null on the last).',
              example: {
                ok: true,
                conversations: [conversationExample],
                nextCursor: 'WyIyMDI2LTExLTIxVDEwOjAwOjA1LjAwMFoiXQ',
              },
            },
          ),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'conversations:read')
      const { limit, cursor, from, to, topic: topicParam, theme: themeParam, ...filters } = request.query
      // Ids are stored in lower case; one written in capitals is the same id (as a conversation's is).
      const theme = themeParam?.toLowerCase()
      const topic = topicParam && isUuid(topicParam) ? topicParam.toLowerCase() : topicParam
      const after = cursor ? decodeCursor(cursor) : undefined
      const range = { from: instant(from), to: instant(to) }
      // Both ends are inclusive: one instant is a range, a `from` after `to` is a mistake (as in analytics).
      if (range.from && range.to && range.from > range.to) throw invalidQuery('from', 'must not be after to')
      // Whether a signal is on for a chatbot is its settings: read-your-writes for them, as the signals report.
      if (filters.signal !== undefined)
        await waitForChatbots(deps.readerPool, orgId, filters.chatbotId, timeoutMs)
      const page = await withOrgScope(deps.readerPool, orgId, async (client) => {
        // Another organization's chatbot answers like an unknown one (API.md: never reveal existence).
        if (filters.chatbotId !== undefined && !(await chatbotInOrg(client, orgId, filters.chatbotId))) {
          throw new AppError('not_found', 'No chatbot with this id.')
        }
        const byTopic =
          topic === undefined ? undefined : await topicFilterIds(client, orgId, filters.chatbotId, topic)
        const byTheme =
          theme === undefined ? undefined : await themeFilterIds(client, orgId, filters.chatbotId, theme)
        if (theme !== undefined && byTheme === undefined)
          throw new AppError('not_found', 'No theme with this id.')
        const topicIds =
          byTopic && byTheme ? byTopic.filter((id) => byTheme.includes(id)) : (byTopic ?? byTheme)
        const rows = await listConversations(client, orgId, { ...filters, ...range, topicIds }, limit, after)
        const resolved = await resolveTopics(
          client,
          orgId,
          rows.flatMap((r) => r.topics),
        )
        const shown = rows.slice(0, limit)
        const signals = await signalsOf(
          client,
          orgId,
          shown.map((r) => r.id),
        )
        return {
          rows,
          conversations: shown.map((r) => ({
            ...toConversation(r, resolved),
            signals: signals.get(r.id) ?? [],
          })),
        }
      })
      const { rows } = page
      const last = page.conversations.at(-1)
      const nextCursor =
        rows.length > limit && last ? encodeCursor({ lastMessageAt: last.lastMessageAt, id: last.id }) : null
      return { ok: true as const, conversations: page.conversations, nextCursor }
    },
  )

  r.get(
    '/api/v1/conversations/:id',
    {
      schema: {
        operationId: 'getConversation',
        description:
          "A conversation by the service's id (the `id` of the list and of capture's answer, not the " +
          "caller's conversationId), with every message in order of sentAt and each message's " +
          'sentiment. 404 for an id not in the organization; 503 with Retry-After while a conversation ' +
          'just captured is not projected yet.',
        summary: 'One conversation with its messages',
        tags,
        security,
        params: z.object({ id: z.string() }),
        response: {
          200: documented(
            z.object({
              ok: z.literal(true),
              conversation: conversationSchema.extend({
                messages: z.array(
                  z.object({
                    id: z.string(),
                    role: z.string(),
                    content: z.string(),
                    sentAt: z.string(),
                    sentiment: sentimentSchema,
                    analyzer: z
                      .string()
                      .nullable()
                      .describe(
                        'The analyzer whose results the message carries, as name@version; null until it is analysed. Past messages keep the results of the analyzer that read them until re-analysed (GET /api/v1/chatbots/{id}/analyzers).',
                      ),
                  }),
                ),
              }),
            }),
            {
              description: 'The conversation and its messages.',
              example: {
                ok: true,
                conversation: {
                  ...conversationExample,
                  messages: [
                    {
                      id: 'm-1',
                      role: 'user',
                      content: 'How do I reset my password?',
                      sentAt: '2026-11-21T10:00:00.000Z',
                      sentiment: { score: -0.3, label: 'negative' },
                      analyzer: 'semantic@minilm+rules-v9',
                    },
                    {
                      id: 'm-2',
                      role: 'assistant',
                      content: 'Use the link on the sign-in page.',
                      sentAt: '2026-11-21T10:00:05.000Z',
                      sentiment: { score: 0.2, label: 'neutral' },
                      analyzer: 'semantic@minilm+rules-v9',
                    },
                  ],
                },
              },
            },
          ),
          ...errorResponses('forbidden', 'unauthorized', 'not_found', 'unavailable'),
        },
      },
    },
    async (request, reply) => {
      const { orgId } = requirePermission(request, 'conversations:read')
      const id = request.params.id.toLowerCase()
      const notFound = () => new AppError('not_found', 'No conversation with this id.')
      if (!isUuid(id)) throw notFound()
      const written = await withOrgScope(deps.readerPool, orgId, (client) =>
        writtenVersion(client, orgId, id),
      )
      if (written === undefined) throw notFound()
      await waitForProjection(
        async () =>
          (await withOrgScope(deps.readerPool, orgId, (client) => projectedVersion(client, orgId, id))) >=
          written,
        timeoutMs,
      )
      const found = await withOrgScope(deps.readerPool, orgId, async (client) => {
        const row = await findConversation(client, orgId, id)
        if (!row) return undefined
        const resolved = await resolveTopics(client, orgId, row.topics)
        const signals = (await signalsOf(client, orgId, [id])).get(id) ?? []
        return {
          ...toConversation(row, resolved),
          signals,
          messages: await conversationMessages(client, orgId, id),
        }
      })
      if (!found) {
        reply.header('retry-after', '1')
        throw new AppError('unavailable', 'The conversation is still being processed; try again shortly.')
      }
      return { ok: true as const, conversation: found }
    },
  )
}
