import { actorTrace, requirePermission } from '@cas/auth'
import { withTransaction } from '@cas/db'
import { type ConversationEvent, parseRecordedEvent } from '@cas/events'
import { AppError, documented, errorResponses } from '@cas/http'
import { isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { erasureAuditEntry } from '../audit/entries.ts'
import { recordAudit } from '../audit/record.ts'
import { eraseConversations } from './erase.ts'

/**
 * DELETE /api/v1/chatbots/:id/users/:userId: erases every conversation of one end user of the chatbot
 * (user.id as captured) from the journal, every read model and the analysis state; replays don't bring them
 * back. Org-scoped like every chatbot route, for owners and admins; the erasure is in the audit log.
 */
export async function registerErasureRoutes(app: FastifyInstance, deps: { pool: pg.Pool; now: () => Date }) {
  app.withTypeProvider<ZodTypeProvider>().delete(
    '/api/v1/chatbots/:id/users/:userId',
    {
      schema: {
        operationId: 'eraseEndUser',
        description:
          'Owners and admins erase every conversation whose user.id (as captured) is userId: from the ' +
          'event journal, every read model and the analysis state, so that no replay brings them back. ' +
          'The erasure is in the audit log. Erasing a user with no conversations answers 200 with 0. The ' +
          "chatbot's topics are re-clustered soon after, which remakes their keywords and labels without " +
          "the erased user's words (docs/architecture.md says what stays). One chatbot at a time: erase " +
          'the user on each chatbot they wrote to.',
        summary: 'Erase every conversation of one end user of a chatbot',
        tags: ['chatbots'],
        security: [{ session: [] }],
        params: z.object({ id: z.string(), userId: z.string().min(1).max(256) }),
        response: {
          200: documented(z.object({ ok: z.literal(true), conversationsErased: z.number().int() }), {
            description: 'Erased: how many conversations.',
            example: { ok: true, conversationsErased: 3 },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'end-users:erase')
      const { orgId } = principal
      const { id, userId } = request.params
      const erased = await withTransaction(deps.pool, async (client) => {
        const { rows } = await client.query<{ id: string; name: string }>(
          'SELECT id, name FROM chatbots WHERE id = $1 AND org_id = $2 FOR SHARE',
          [isUuid(id) ? id.toLowerCase() : null, orgId],
        )
        const chatbot = rows[0]
        if (!chatbot) throw new AppError('not_found', 'No chatbot with this id.')
        const records = await eraseConversations(
          client,
          { sql: "chatbot_id = $1 AND end_user ->> 'id' = $2", params: [id.toLowerCase(), userId] },
          'end-user-erasure',
          deps.now,
          actorTrace(request, principal),
        )
        const events = records.map((r) => parseRecordedEvent(r) as ConversationEvent)
        const entry = erasureAuditEntry(events, chatbot)
        if (entry) await recordAudit(client, [entry])
        return records.length
      })
      return { ok: true as const, conversationsErased: erased }
    },
  )
}
