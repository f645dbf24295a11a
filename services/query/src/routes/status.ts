import { requirePermission } from '@cas/auth'
import {
  BEHIND_AFTER_SECONDS,
  readPipelineStatus,
  STALE_AFTER_SECONDS,
  type StageStatus,
} from '@cas/eventlog'
import { documented, errorResponses } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { QueryDeps } from '../deps.ts'

const stageSchema = z.object({
  state: z
    .enum(['up-to-date', 'behind', 'unknown'])
    .describe(
      `up-to-date: behind by less than ${BEHIND_AFTER_SECONDS} s; behind; unknown: the stage has not reported for ${STALE_AFTER_SECONDS} s (its processes are down) or ever.`,
    ),
  behindSeconds: z
    .number()
    .int()
    .nonnegative()
    .nullable()
    .describe('How long ago the oldest work not done yet was committed; 0 when none; null when unknown.'),
  checkedAt: z.string().nullable().describe('When the stage last reported; null when never.'),
})

const statusResponse = z.object({
  ok: z.literal(true),
  at: z.string().describe('The time the answer is for.'),
  projection: stageSchema.describe(
    'Conversations, messages and analytics: how far behind every event committed (captures, settings, analysis results) they are.',
  ),
  analysis: stageSchema
    .extend({
      analyzer: z
        .string()
        .nullable()
        .describe(
          "The analyzer the analysis service runs now, as name@version (the same as a re-analysis names); null while its model loads or when the stage's state is unknown. Past messages keep the results of the analyzer that read them until re-analysed: GET /api/v1/chatbots/{id}/analyzers counts them.",
        ),
    })
    .describe(
      'Sentiment and topics: how far behind the messages captured for analysis (and re-analyses asked for) it is.',
    ),
})

/** What a tenant is told of a stage: how current, not how much is waiting (other organizations' traffic). */
function publicView({ state, behindSeconds, checkedAt }: StageStatus) {
  return { state, behindSeconds, checkedAt }
}

/**
 * How current the figures are (the dashboard shows it beside them), from the pipeline status the
 * projector and the analysis service keep. About the whole service, which applies every organization's
 * events in one pipeline, so not scoped to one (its counts are for operators: /readyz and the metrics).
 */
export async function registerStatusRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  r.get(
    '/api/v1/status',
    {
      schema: {
        tags: ['status'],
        security: [{ session: [] }],
        operationId: 'getStatus',
        summary: 'How current the figures are',
        description:
          'How current the conversations, analytics and analysis are: up to date, or how many seconds behind. ' +
          'About the whole service (one pipeline applies every organization’s events), without counts.',
        response: {
          200: documented(statusResponse, {
            description: 'The state of the projection and of the analysis.',
            example: {
              ok: true,
              at: '2026-11-21T10:00:10.000Z',
              projection: { state: 'up-to-date', behindSeconds: 0, checkedAt: '2026-11-21T10:00:09.000Z' },
              analysis: {
                state: 'behind',
                behindSeconds: 12,
                checkedAt: '2026-11-21T10:00:08.000Z',
                analyzer: 'semantic@sentence-transformers/all-MiniLM-L6-v2@q8+sentiment:3',
              },
            },
          }),
          ...errorResponses('unauthorized', 'forbidden'),
        },
      },
    },
    async (request) => {
      requirePermission(request, 'analytics:read')
      const at = deps.now()
      const status = await readPipelineStatus(deps.readerPool, at)
      return {
        ok: true as const,
        at: at.toISOString(),
        projection: publicView(status.projection),
        analysis: { ...publicView(status.analysis), analyzer: status.analysis.analyzer ?? null },
      }
    },
  )
}
