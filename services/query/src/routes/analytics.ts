import { requirePermission } from '@cas/auth'
import { withOrgScope } from '@cas/db'
import { AppError, errorResponses } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { analyticsQuery, checkInterval, resolveRange, sentimentQuery } from '../analytics/range.ts'
import type { QueryDeps } from '../deps.ts'
import { chatbotInOrg, checkTimeZone, readOverview, readSentimentPoints } from '../repositories/analytics.ts'

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
  sentiment: z.object({ average, positive: count, neutral: count, negative: count, analyzed: count }),
  topTopics: z
    .array(z.object({ topic: z.string(), count }))
    .describe('The 10 topics of most analyzed messages in range; ties by topic.'),
  messagesByRole: z.object({ user: count, assistant: count, system: count, tool: count }),
})

const sentimentResponse = z.object({
  ok: z.literal(true),
  interval: z.enum(['hour', 'day', 'week']),
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

/** Checks, in the request's organization scope, what only the database can tell: the chatbot and the zone. */
async function checkScope(client: pg.ClientBase, orgId: string, chatbotId: string | undefined, tz: string) {
  // Another organization's chatbot answers like an unknown one (API.md: never reveal existence).
  if (chatbotId !== undefined && !(await chatbotInOrg(client, orgId, chatbotId))) {
    throw new AppError('not_found', 'No chatbot with this id.')
  }
  await checkTimeZone(client, tz)
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

  r.get(
    '/api/v1/analytics/overview',
    {
      schema: {
        tags,
        security,
        description:
          'Aggregate metrics of the organization, or of one chatbot. `tz` is accepted but changes nothing here.',
        querystring: analyticsQuery,
        response: { 200: overviewResponse, ...errors },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'analytics:read')
      const { chatbotId, tz, ...rest } = request.query
      const range = resolveRange(rest, deps.now())
      const overview = await withOrgScope(deps.readerPool, orgId, async (client) => {
        await checkScope(client, orgId, chatbotId, tz)
        return readOverview(client, { orgId, chatbotId, from: range.from, to: range.to })
      })
      return {
        ok: true as const,
        range: { from: range.from.toISOString(), to: range.to.toISOString() },
        ...overview,
      }
    },
  )

  r.get(
    '/api/v1/analytics/sentiment',
    {
      schema: {
        tags,
        security,
        description: 'Sentiment per hour, day or week, with a point for every bucket in range.',
        querystring: sentimentQuery,
        response: { 200: sentimentResponse, ...errors },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'analytics:read')
      const { chatbotId, tz, interval, ...rest } = request.query
      const range = resolveRange(rest, deps.now())
      checkInterval(interval, range)
      const points = await withOrgScope(deps.readerPool, orgId, async (client) => {
        await checkScope(client, orgId, chatbotId, tz)
        return readSentimentPoints(client, { orgId, chatbotId, from: range.from, to: range.to }, interval, tz)
      })
      return {
        ok: true as const,
        interval,
        range: { from: range.from.toISOString(), to: range.to.toISOString() },
        points,
      }
    },
  )
}
