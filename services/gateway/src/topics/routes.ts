import { randomUUID } from 'node:crypto'
import { actorTrace, requirePermission } from '@cas/auth'
import type { TopicCommand } from '@cas/events'
import { AppError, documented, errorResponses, isoDateTimeSchema } from '@cas/http'
import { isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { executeReanalysisRequest, executeTopicCommand, executeTopicCreation } from './commands.ts'

export interface TopicRouteDeps {
  readonly pool: pg.Pool
  readonly now: () => Date
}

// Malformed ids are answered like unknown ones (API.md: never reveal existence), so params are not validated.
const params = z.object({ id: z.string(), topicId: z.string() })

/** Something a person can see: not only whitespace, invisible format characters (U+200B…) or controls. */
const VISIBLE = /[^\s\p{C}]/u
/** Control characters other than whitespace (which a label's spaces collapse to one). */
const CONTROL = /[^\P{Cc}\t\n\r]/u

/**
 * Text a person types, trimmed: 1 to `max` characters with something visible. A blank one (once trimmed) gets
 * one reason a person can act on, not also zod's "expected >=1 characters".
 */
const visibleText = (max: number, what: string) =>
  z
    .string()
    .trim()
    .min(1, { error: `${what} needs a visible character`, abort: true })
    .max(max)
    .regex(VISIBLE, `${what} needs a visible character`)

/** A topic's label as a person gives it: 1 to 80 characters, something visible, no control characters. */
const labelSchema = visibleText(80, 'a label').refine(
  (label) => !CONTROL.test(label),
  'a label has no control characters',
)

/** An example request: 1 to 500 characters, something visible. */
const exampleSchema = visibleText(500, 'an example')

const topicSchema = z
  .object({
    id: z.string().describe("The topic's id."),
    label: z.string().describe('Its label as of now.'),
    pinned: z
      .boolean()
      .describe('Renamed or merged into by hand: its label and members are kept by re-clustering.'),
    hidden: z.boolean().describe('Left out of analytics lists and the dashboard (it still takes messages).'),
    configured: z.boolean().describe("One of the chatbot's own topics (settings.topics)."),
    mergedInto: z.string().nullable().describe('The topic it was merged into, if it was.'),
  })
  .describe(
    'The topic as the command leaves it (the lists show it once the analysis service has applied it).',
  )

const answerSchema = z.object({
  ok: z.literal(true),
  topic: topicSchema,
  commandId: z
    .string()
    .nullable()
    .describe(
      "The command's id (its event on the chatbot's stream): follow what becomes of it in GET /api/v1/chatbots/{id}/topics/commands. null when the command changes nothing and none was committed.",
    ),
})

const exampleCommandId = '3c1d9e2a-5b7f-4a10-9c2e-8f4b6d0a1e35'

const exampleTopic: z.infer<typeof topicSchema> = {
  id: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
  label: 'Refunds',
  pinned: true,
  hidden: false,
  configured: false,
  mergedInto: null,
}

/**
 * Topic commands for the dashboard (issue 31, item 6): owners and admins rename, hide, unhide and merge a
 * chatbot's topics. Each commits a command event on the chatbot's stream that the analysis service applies (commands.ts).
 */
export async function registerTopicCommands(app: FastifyInstance, deps: TopicRouteDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['topics']
  const security = [{ session: [] }]
  const ids = (p: { id: string; topicId: string }) => {
    if (!isUuid(p.id)) throw new AppError('not_found', 'No chatbot with this id.')
    if (!isUuid(p.topicId)) throw new AppError('not_found', 'No topic with this id.')
    return { chatbotId: p.id.toLowerCase(), topicId: p.topicId.toLowerCase() }
  }
  const errors = errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict')

  const route = (
    name: 'rename' | 'hide' | 'unhide' | 'merge',
    doc: { operationId: string; summary: string; description: string; example: typeof exampleTopic },
    body: z.ZodType | undefined,
    command: (body: unknown) => TopicCommand,
  ) =>
    r.post(
      `/api/v1/chatbots/:id/topics/:topicId/${name}`,
      {
        schema: {
          operationId: doc.operationId,
          summary: doc.summary,
          description: doc.description,
          tags,
          security,
          params,
          ...(body ? { body } : {}),
          response: {
            200: documented(answerSchema, {
              description: 'Done (or nothing to do): the topic as it is now.',
              example: { ok: true as const, topic: doc.example, commandId: exampleCommandId },
            }),
            ...errors,
          },
        },
      },
      async (request) => {
        const principal = requirePermission(request, 'topics:manage')
        const { chatbotId, topicId } = ids(request.params)
        const { topic, commandId } = await executeTopicCommand(
          deps,
          principal.orgId,
          chatbotId,
          topicId,
          command(request.body),
          actorTrace(request, principal),
        )
        return { ok: true as const, topic, commandId }
      },
    )

  r.post(
    '/api/v1/chatbots/:id/topics',
    {
      schema: {
        operationId: 'createTopic',
        summary: 'Create a topic from examples',
        description:
          'Owners and admins create a topic of their own: a label (1 to 80 characters, something visible, no control characters; no other topic\'s, nor "Other", the long tail\'s) and 2 to 20 example requests (each 1 to 500 characters, something visible). Commits chatbot.topic-creation-requested; the analysis service embeds the examples, creates the topic with its label pinned (analysis.topic-created-by-user), and moves into it the chatbot\'s recent requests that lie clearly nearer it than their current topic: inside its spread, by the rule the topic model places messages with. Later requests like the examples join it. The answer is the topic as it will be; it shows in the topic list once the analysis service has created it. 409 for a label another topic has, or "Other".',
        tags,
        security,
        params: z.object({ id: z.string() }),
        body: z.strictObject({
          label: labelSchema.describe("The topic's label, 1 to 80 characters."),
          examples: z
            .array(exampleSchema)
            .min(2)
            .max(20)
            .describe('2 to 20 example requests, each 1 to 500 characters.'),
        }),
        response: {
          200: documented(answerSchema, {
            description: 'Asked for: the topic as it will be.',
            example: {
              ok: true as const,
              topic: {
                ...exampleTopic,
                id: '4c1e9a77-5b2d-4f0e-8a63-2d7f1b9c0e45',
                label: 'Roadside assistance',
              },
              commandId: exampleCommandId,
            },
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'topics:manage')
      if (!isUuid(request.params.id)) throw new AppError('not_found', 'No chatbot with this id.')
      const { topic, commandId } = await executeTopicCreation(
        deps,
        principal.orgId,
        request.params.id.toLowerCase(),
        { topicId: randomUUID(), label: request.body.label, examples: request.body.examples },
        actorTrace(request, principal),
      )
      return { ok: true as const, topic, commandId }
    },
  )
  route(
    'rename',
    {
      operationId: 'renameTopic',
      summary: 'Rename a topic and pin its label',
      description:
        "Owners and admins give a topic a label of their own (1 to 80 characters, something visible, no control characters). The label is pinned: the topic's growth and re-clustering never change it, and re-clustering leaves the topic and its members as they are. 409 for one of the chatbot's own topics (settings.topics: rename it there), for a label another of the chatbot's topics has or \"Other\" (the long tail's), and for a topic merged away or retired. Commits chatbot.topic-rename-requested; the analysis service applies it (analysis.topic-renamed-by-user).",
      example: exampleTopic,
    },
    z.strictObject({
      label: labelSchema.describe('The new label, 1 to 80 characters.'),
    }),
    (body) => ({ type: 'rename', label: (body as { label: string }).label }),
  )
  r.post(
    '/api/v1/chatbots/:id/reanalysis',
    {
      schema: {
        operationId: 'startReanalysis',
        summary: 'Re-analyse a chatbot',
        description:
          "Owners and admins send the chatbot's captured messages (those captured at or after `since`, all by default; the body is `{}` for all) through the analyzer the analysis service runs now, as `npm run reanalyze` does: the results carry that analyzer's name and version and replace earlier ones in the read models. Commits chatbot.reanalysis-requested; the analysis service queues the captures (analysis.reanalysis-started) and reports progress (analysis.reanalysis-progressed, analysis.reanalysis-finished): follow it with GET /api/v1/chatbots/{id}/reanalysis. 202 with the re-analysis' id; 409 while an earlier re-analysis of the chatbot is running.",
        tags,
        security,
        params: z.object({ id: z.string() }),
        body: z.strictObject({
          since: isoDateTimeSchema.optional().describe('Only messages captured at or after this time.'),
        }),
        response: {
          202: documented(z.object({ ok: z.literal(true), reanalysisId: z.string() }), {
            description: 'Asked for: the analysis service starts it shortly.',
            example: { ok: true as const, reanalysisId: '5d2e8f10-3a4b-4c6d-9e7f-1a2b3c4d5e6f' },
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const principal = requirePermission(request, 'topics:manage')
      if (!isUuid(request.params.id)) throw new AppError('not_found', 'No chatbot with this id.')
      const since = request.body.since
      const { reanalysisId } = await executeReanalysisRequest(
        deps,
        principal.orgId,
        request.params.id.toLowerCase(),
        { reanalysisId: randomUUID(), ...(since ? { since: new Date(since).toISOString() } : {}) },
        actorTrace(request, principal),
      )
      return reply.code(202).send({ ok: true as const, reanalysisId })
    },
  )
  route(
    'hide',
    {
      operationId: 'hideTopic',
      summary: 'Hide a topic from analytics',
      description:
        'Owners and admins hide a topic: analytics lists and the dashboard leave it out until it is unhidden. It still takes messages, and conversations keep it. Hiding a hidden topic changes nothing. Commits chatbot.topic-hide-requested; the analysis service applies it (analysis.topic-hidden).',
      example: { ...exampleTopic, pinned: false, label: 'thanks, bye', hidden: true },
    },
    undefined,
    () => ({ type: 'hide' }),
  )
  route(
    'unhide',
    {
      operationId: 'unhideTopic',
      summary: 'Show a hidden topic again',
      description:
        'Owners and admins show a hidden topic in analytics again. Unhiding a shown topic changes nothing. Commits chatbot.topic-unhide-requested; the analysis service applies it (analysis.topic-unhidden).',
      example: { ...exampleTopic, pinned: false, label: 'thanks, bye' },
    },
    undefined,
    () => ({ type: 'unhide' }),
  )
  route(
    'merge',
    {
      operationId: 'mergeTopic',
      summary: 'Merge a topic into another',
      description:
        "Owners and admins merge the topic into `into`, another topic of the chatbot: its conversations count in `into` from now on, and it is not used again. `into` keeps its label and is pinned, so re-clustering never undoes the merge. 400 when `into` is the topic itself, not one of the chatbot's, or merged away or retired; 409 for one of the chatbot's own topics (settings.topics) or a topic already merged away or retired. Commits chatbot.topic-merge-requested; the analysis service applies it (analysis.topic-merged-by-user). The answer is the merged topic.",
      example: {
        ...exampleTopic,
        id: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10',
        label: 'money back',
        pinned: false,
        mergedInto: exampleTopic.id,
      },
    },
    z.strictObject({ into: z.string().describe('The id of the topic that remains.') }),
    (body) => ({ type: 'merge', into: (body as { into: string }).into.toLowerCase() }),
  )
}
