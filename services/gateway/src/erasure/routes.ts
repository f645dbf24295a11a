import { requireSession } from '@cas/auth'
import { withTransaction } from '@cas/db'
import { AppError, errorResponses, eventTrace } from '@cas/http'
import { isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { eraseConversations } from './erase.ts'

/**
 * DELETE /api/v1/chatbots/:id/users/:userId: erases every conversation of one end user of the chatbot
 * (user.id as captured) from the journal, every read model and the analysis state; replays don't bring them
 * back. Org-scoped like every chatbot route.
 */
export async function registerErasureRoutes(app: FastifyInstance, deps: { pool: pg.Pool; now: () => Date }) {
  app.withTypeProvider<ZodTypeProvider>().delete(
    '/api/v1/chatbots/:id/users/:userId',
    {
      schema: {
        tags: ['chatbots'],
        security: [{ session: [] }],
        params: z.object({ id: z.string(), userId: z.string().min(1).max(256) }),
        response: {
          200: z.object({ ok: z.literal(true), conversationsErased: z.number().int() }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const { orgId } = requireSession(request)
      const { id, userId } = request.params
      const erased = await withTransaction(deps.pool, async (client) => {
        const { rows } = await client.query(
          'SELECT 1 FROM chatbots WHERE id = $1 AND org_id = $2 FOR SHARE',
          [isUuid(id) ? id.toLowerCase() : null, orgId],
        )
        if (rows.length === 0) throw new AppError('not_found', 'No chatbot with this id.')
        return eraseConversations(
          client,
          { sql: "chatbot_id = $1 AND end_user ->> 'id' = $2", params: [id.toLowerCase(), userId] },
          'end-user-erasure',
          deps.now,
          eventTrace(request),
        )
      })
      return { ok: true as const, conversationsErased: erased }
    },
  )
}
