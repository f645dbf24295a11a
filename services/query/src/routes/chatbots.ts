import { requirePermission } from '@cas/auth'
import { defaultsOf, reads } from '@cas/config'
import { withOrgScope } from '@cas/db'
import { readPipelineStatus } from '@cas/eventlog'
import { AppError, documented, errorResponses } from '@cas/http'
import { chatbotSchema, isUuid } from '@cas/views'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import type { QueryDeps } from '../deps.ts'
import { waitForProjection } from '../read-your-writes.ts'
import { chatbotsBehind, findChatbot, listChatbots } from '../repositories/chatbots.ts'

/**
 * Chatbot reads from the projector's chatbot read model (rm_chatbots). Read-your-writes as for
 * conversations: a read waits, bounded, until the read model has reached the version the write side
 * recorded for the chatbot's stream (for a list, for every chatbot of the organization). A deleted
 * chatbot is gone at once: its deletion is read from its destroyed data key, not from the read model.
 */
const chatbotExample: z.output<typeof chatbotSchema> = {
  id: '2f4a6c8e-0b1d-4e3f-8a5c-7e9b1d3f5a60',
  name: 'Support bot',
  api_key_prefix: 'svc_live_3kQ9…',
  settings: { customFields: { plan: 'string' } },
  created_at: '2026-11-21T10:00:00.000Z',
}

export async function registerChatbotReadRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['chatbots']
  const security = [{ session: [] }]
  const timeoutMs = deps.readYourWritesTimeoutMs ?? defaultsOf(reads).READ_YOUR_WRITES_TIMEOUT_MS
  const caughtUp = (orgId: string, id?: string) => () =>
    withOrgScope(deps.readerPool, orgId, async (client) => (await chatbotsBehind(client, orgId, id)) === 0)
  /**
   * `read` in the organization's scope, for a chatbot (`param`, `:id`) of the current organization that a reader
   * (chatbots:read) asks about: 404 for a malformed id or one not of the organization.
   */
  const readOfChatbot = <T>(
    request: FastifyRequest,
    param: string,
    read: (client: pg.ClientBase, orgId: string, id: string) => Promise<T>,
  ): Promise<T> => {
    const { orgId } = requirePermission(request, 'chatbots:read')
    const notFound = () => new AppError('not_found', 'No chatbot with this id.')
    if (!isUuid(param)) throw notFound()
    const id = param.toLowerCase()
    return withOrgScope(deps.readerPool, orgId, async (client) => {
      if (!(await findChatbot(client, orgId, id))) throw notFound()
      return read(client, orgId, id)
    })
  }

  r.get(
    '/api/v1/chatbots',
    {
      schema: {
        operationId: 'listChatbots',
        description:
          'Owners, admins and members list the chatbots of the organization the session works in, with ' +
          'their settings and the first characters of their keys (never a whole key). A chatbot just ' +
          'created or changed is listed as it now is (read-your-writes).',
        summary: "The organization's chatbots",
        tags,
        security,
        response: {
          200: documented(z.array(chatbotSchema), {
            description: 'The chatbots.',
            example: [chatbotExample],
          }),
          ...errorResponses('forbidden', 'unauthorized'),
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'chatbots:read')
      await waitForProjection(caughtUp(orgId), timeoutMs)
      return withOrgScope(deps.readerPool, orgId, (client) => listChatbots(client, orgId))
    },
  )

  r.get(
    '/api/v1/chatbots/:id',
    {
      schema: {
        operationId: 'getChatbot',
        description:
          'Owners, admins and members read one chatbot of the current organization (404 for any other ' +
          'id). A chatbot just created is waited for up to READ_YOUR_WRITES_TIMEOUT_MS; 503 with ' +
          'Retry-After when it is still not there.',
        summary: 'One chatbot',
        tags,
        security,
        params: z.object({ id: z.string() }),
        response: {
          200: documented(chatbotSchema, {
            description: 'The chatbot.',
            example: chatbotExample,
          }),
          ...errorResponses('forbidden', 'unauthorized', 'not_found', 'unavailable'),
        },
      },
    },
    async (request, reply) => {
      const { orgId } = requirePermission(request, 'chatbots:read')
      const notFound = () => new AppError('not_found', 'No chatbot with this id.')
      if (!isUuid(request.params.id)) throw notFound()
      const id = request.params.id.toLowerCase()
      const projected = await waitForProjection(caughtUp(orgId, id), timeoutMs)
      const chatbot = await withOrgScope(deps.readerPool, orgId, (client) => findChatbot(client, orgId, id))
      if (chatbot) return chatbot
      if (projected) throw notFound()
      // Created, but the read model has not got there within the bound.
      reply.header('retry-after', '1')
      throw new AppError('unavailable', 'The chatbot is still being processed; try again shortly.')
    },
  )

  const reanalysisSchema = z.object({
    reanalysis: z
      .object({
        id: z.string().describe("The re-analysis' id (the answer of POST /api/v1/chatbots/{id}/reanalysis)."),
        status: z
          .enum(['running', 'finished', 'failed'])
          .describe(
            'failed: it could not be started (analysis.reanalysis-failed); another may be asked for.',
          ),
        analyzer: z.string().describe('The analyzer it runs, as name@version.'),
        done: z.number().int().describe('Captures analysed so far.'),
        failed: z.number().int().describe('Captures whose analysis failed for good (known once finished).'),
        total: z.number().int().describe('Captures it queued.'),
        started_at: z.string(),
        finished_at: z.string().nullable(),
        reason: z.string().nullable().describe('Why it failed, for a lead; null unless failed.'),
      })
      .nullable()
      .describe('The latest re-analysis the analysis service started; null when there has been none.'),
  })
  r.get(
    '/api/v1/chatbots/:id/reanalysis',
    {
      schema: {
        operationId: 'getReanalysis',
        description:
          "Owners, admins and members read the progress of the chatbot's latest re-analysis (POST /api/v1/chatbots/{id}/reanalysis), as the analysis service reports it (analysis.reanalysis-*). A re-analysis just asked for shows once the analysis service has started it. 404 for a chatbot not of the current organization.",
        summary: "A chatbot's latest re-analysis",
        tags,
        security,
        params: z.object({ id: z.string() }),
        response: {
          200: documented(reanalysisSchema, {
            description: 'The latest re-analysis, or null.',
            example: {
              reanalysis: {
                id: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f',
                status: 'running' as const,
                analyzer: 'minilm@3',
                done: 600,
                failed: 0,
                total: 1200,
                started_at: '2026-11-28T10:00:00.000Z',
                finished_at: null,
                reason: null,
              },
            },
          }),
          ...errorResponses('forbidden', 'unauthorized', 'not_found'),
        },
      },
    },
    async (request) =>
      readOfChatbot(request, request.params.id, async (client, orgId, id) => {
        const { rows } = await client.query<{
          id: string
          status: 'running' | 'finished' | 'failed'
          analyzer: string
          done: number
          failed: number
          total: number
          started_at: Date
          finished_at: Date | null
          reason: string | null
        }>(
          `SELECT reanalysis_id AS id, status, analyzer, done, failed, total, started_at, finished_at, reason
             FROM rm_reanalysis WHERE chatbot_id = $1 AND org_id = $2`,
          [id, orgId],
        )
        const row = rows[0]
        return {
          reanalysis: row
            ? {
                ...row,
                started_at: row.started_at.toISOString(),
                finished_at: row.finished_at?.toISOString() ?? null,
              }
            : null,
        }
      }),
  )
  const analyzersSchema = z.object({
    current: z
      .string()
      .nullable()
      .describe(
        'The analyzer the analysis service runs now, as name@version (GET /api/v1/status); null while its model loads or when the analysis service has not reported for 30 s.',
      ),
    analyzers: z
      .array(
        z.object({
          analyzer: z.string().describe('name@version.'),
          messages: z.number().int().describe("The chatbot's messages whose results are this analyzer's."),
          current: z.boolean().describe('The analyzer running now.'),
        }),
      )
      .describe("Every analyzer whose results the chatbot's messages carry, most messages first."),
    outdated: z
      .number()
      .int()
      .nullable()
      .describe(
        "Messages whose results are another analyzer's than the one running now: a re-analysis (POST /api/v1/chatbots/{id}/reanalysis) brings them up to date. null when the current analyzer is not known.",
      ),
  })
  r.get(
    '/api/v1/chatbots/:id/analyzers',
    {
      schema: {
        operationId: 'getChatbotAnalyzers',
        description:
          "Owners, admins and members read which analyzers the chatbot's messages were analysed by, beside the one running now. A message keeps the sentiment, topics, language and signals of the analyzer that read it until it is re-analysed, so after an upgrade the figures mix the two until a re-analysis. Messages not analysed yet are not counted. 404 for a chatbot not of the current organization.",
        summary: "The analyzers of a chatbot's messages",
        tags,
        security,
        params: z.object({ id: z.string() }),
        response: {
          200: documented(analyzersSchema, {
            description: 'The analyzers, and how many messages an earlier one read.',
            example: {
              current: 'semantic@minilm+rules-v9',
              analyzers: [
                { analyzer: 'semantic@minilm+rules-v9', messages: 1840, current: true },
                { analyzer: 'semantic@minilm+rules-v8', messages: 312, current: false },
              ],
              outdated: 312,
            },
          }),
          ...errorResponses('forbidden', 'unauthorized', 'not_found'),
        },
      },
    },
    async (request) =>
      readOfChatbot(request, request.params.id, async (client, orgId, id) => {
        const current = (await readPipelineStatus(client, deps.now())).analysis.analyzer ?? null
        const { rows } = await client.query<{ analyzer: string; messages: number }>(
          `SELECT analyzer, count(*)::int AS messages FROM rm_messages
            WHERE chatbot_id = $1 AND org_id = $2 AND analyzer IS NOT NULL
            GROUP BY analyzer ORDER BY messages DESC, analyzer`,
          [id, orgId],
        )
        return {
          current,
          analyzers: rows.map((row) => ({ ...row, current: row.analyzer === current })),
          outdated:
            current === null
              ? null
              : rows.filter((row) => row.analyzer !== current).reduce((sum, row) => sum + row.messages, 0),
        }
      }),
  )
}
