import { can, requirePermission } from '@cas/auth'
import { defaultsOf, reads } from '@cas/config'
import { withOrgScope } from '@cas/db'
import { AppError, documented, errorResponses } from '@cas/http'
import { isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { QueryDeps } from '../deps.ts'
import { waitForProjection } from '../read-your-writes.ts'
import { chatbotInOrg, chatbotsBehind } from '../repositories/chatbots.ts'

const commandSchema = z.object({
  id: z.string().describe("The command's id: the `commandId` its POST answered."),
  type: z.enum(['rename', 'hide', 'unhide', 'merge', 'create']),
  topicId: z.string().describe('The topic it names (for a creation, the id the new topic gets).'),
  topicLabel: z
    .string()
    .nullable()
    .describe("That topic's label as of now (null for a topic the chatbot does not have)."),
  into: z.string().nullable().describe('A merge: the topic that is to remain; null otherwise.'),
  intoLabel: z.string().nullable().describe("That topic's label as of now."),
  label: z.string().nullable().describe('A rename: the new label; a creation: the label; null otherwise.'),
  previousLabel: z
    .string()
    .nullable()
    .describe(
      "A rename: the topic's label when the rename was sent (kept after the topic's label changes); null for other commands and for renames sent before it was recorded.",
    ),
  actor: z
    .object({
      id: z.string(),
      name: z.string().nullable(),
      email: z
        .string()
        .nullable()
        .describe('Their email as it was then, for those who may read the members (null for viewers).'),
    })
    .nullable()
    .describe('Who sent it, as they were then.'),
  requestedAt: z.string(),
  status: z
    .enum(['pending', 'applied', 'unchanged', 'refused', 'failed'])
    .describe(
      'pending until the analysis service has handled it; then applied, unchanged (it changed nothing), refused (the topics as they were by then did not allow it: reason says why) or failed (tried as often as the command policy allows, then set aside).',
    ),
  reason: z
    .string()
    .nullable()
    .describe(
      'Refused: not_found, gone, configured, label_taken, bad_target, no_language_model, or what topic creation gives; failed: a sentence. null otherwise.',
    ),
  moved: z
    .number()
    .int()
    .nullable()
    .describe(
      "An applied creation: how many of the chatbot's recent requests moved into the new topic, 0 included (requests in the chatbot's own topics keep their topic, and none may be near enough; until 2026-12-01 requests in pinned topics, those a user renamed, created or merged into, kept theirs too). null for other commands, a creation not applied, and creations handled before this was recorded.",
    ),
  handledAt: z.string().nullable(),
})

const listSchema = z.object({ ok: z.literal(true), commands: z.array(commandSchema) })

const query = z.strictObject({
  limit: z.coerce.number().int().min(1).max(50).default(50).describe('At most 50 (the default).'),
})

interface CommandRow {
  command_id: string
  type: z.infer<typeof commandSchema>['type']
  topic_id: string
  topic_label: string | null
  into_topic_id: string | null
  into_label: string | null
  label: string | null
  previous_label: string | null
  actor_id: string | null
  actor_name: string | null
  actor_email: string | null
  requested_at: Date
  status: z.infer<typeof commandSchema>['status']
  reason: string | null
  moved: number | null
  handled_at: Date | null
}

/**
 * GET /api/v1/chatbots/:id/topics/commands: what became of the chatbot's latest topic commands (issue 31,
 * item 6), from rm_topic_command_log. A command shows once its request is projected (a command that
 * returned: read-your-writes, as for the chatbot); an outcome projected before its request waits for it.
 * The wait is on rm_chatbots at the chatbot stream's version: the projector folds the request into both
 * read models (registry.ts) and writes them in one transaction, so that version covers the log too.
 */
export async function registerTopicCommandRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const timeoutMs = deps.readYourWritesTimeoutMs ?? defaultsOf(reads).READ_YOUR_WRITES_TIMEOUT_MS
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v1/chatbots/:id/topics/commands',
    {
      schema: {
        tags: ['topics'],
        security: [{ session: [] }],
        operationId: 'listTopicCommands',
        summary: "What became of the chatbot's latest topic commands",
        description:
          "Those who may read the topics read the chatbot's latest topic commands (rename, hide, unhide, merge, create: the POSTs under /api/v1/chatbots/{id}/topics), newest first, at most `limit` (50): what was asked, by whom, when, and what the analysis service made of it. A command is `pending` until the analysis service has handled it, and may then be refused although its POST answered 200 (re-clustering retired its topic meanwhile, say): `reason` says why. A command just answered is listed (read-your-writes). 404 for a chatbot not of the current organization.",
        params: z.object({ id: z.string() }),
        querystring: query,
        response: {
          200: documented(listSchema, {
            description: 'The latest commands, newest first.',
            example: {
              ok: true as const,
              commands: [
                {
                  id: '3c1d9e2a-5b7f-4a10-9c2e-8f4b6d0a1e35',
                  type: 'merge' as const,
                  topicId: '1f6a2c55-0f1e-4a7b-8d0c-3b9e5d2a7c10',
                  topicLabel: 'money back',
                  into: '9b0c4a52-2f7e-4c47-9d3e-6a4f3c1f8e21',
                  intoLabel: 'Refunds',
                  label: null,
                  previousLabel: null,
                  actor: {
                    id: '3d6f0c2a-8b1e-4f5a-9c7d-2e4b6a8c0f13',
                    name: 'Ada',
                    email: 'ada@example.com',
                  },
                  requestedAt: '2026-11-29T10:00:00.000Z',
                  status: 'refused' as const,
                  reason: 'gone',
                  moved: null,
                  handledAt: '2026-11-29T10:00:02.000Z',
                },
              ],
            },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { orgId, role } = requirePermission(request, 'analytics:read')
      if (!isUuid(request.params.id)) throw new AppError('not_found', 'No chatbot with this id.')
      const id = request.params.id.toLowerCase()
      const withEmail = can(role, 'members:read')
      await waitForProjection(
        () => withOrgScope(deps.readerPool, orgId, async (c) => (await chatbotsBehind(c, orgId, id)) === 0),
        timeoutMs,
      )
      const rows = await withOrgScope(deps.readerPool, orgId, async (client) => {
        if (!(await chatbotInOrg(client, orgId, id)))
          throw new AppError('not_found', 'No chatbot with this id.')
        const { rows } = await client.query<CommandRow>(
          `SELECT c.command_id, c.type, c.topic_id, t.label AS topic_label, c.into_topic_id, i.label AS into_label,
                  c.label, c.previous_label, c.actor_id, a.actor_name, a.actor_email, c.requested_at, c.status,
                  c.reason, c.moved, c.handled_at
             FROM rm_topic_command_log c
             LEFT JOIN rm_topics t ON t.chatbot_id = c.chatbot_id AND t.id = c.topic_id
             LEFT JOIN rm_topics i ON i.chatbot_id = c.chatbot_id AND i.id = c.into_topic_id
             LEFT JOIN audit_entries a ON a.event_id = c.command_id
            WHERE c.chatbot_id = $1 AND c.org_id = $2 AND c.requested_at IS NOT NULL
            ORDER BY c.command_stream_version DESC LIMIT $3`,
          [id, orgId, request.query.limit],
        )
        return rows
      })
      return {
        ok: true as const,
        commands: rows.map((r) => ({
          id: r.command_id,
          type: r.type,
          topicId: r.topic_id,
          topicLabel: r.topic_label,
          into: r.into_topic_id,
          intoLabel: r.into_label,
          label: r.label,
          previousLabel: r.previous_label,
          actor: r.actor_id
            ? { id: r.actor_id, name: r.actor_name, email: withEmail ? r.actor_email : null }
            : null,
          requestedAt: r.requested_at.toISOString(),
          status: r.status,
          reason: r.reason,
          moved: r.moved,
          handledAt: r.handled_at?.toISOString() ?? null,
        })),
      }
    },
  )
}
