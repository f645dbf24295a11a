import { requirePermission } from '@cas/auth'
import { withOrgScope } from '@cas/db'
import { AppError, errorResponses } from '@cas/http'
import { chatbotSchema, isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
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
export async function registerChatbotReadRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['chatbots']
  const security = [{ session: [] }]
  const timeoutMs = deps.readYourWritesTimeoutMs ?? 2_000
  const caughtUp = (orgId: string, id?: string) => () =>
    withOrgScope(deps.readerPool, orgId, async (client) => (await chatbotsBehind(client, orgId, id)) === 0)

  r.get(
    '/api/v1/chatbots',
    {
      schema: {
        tags,
        security,
        response: { 200: z.array(chatbotSchema), ...errorResponses('forbidden', 'unauthorized') },
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
        tags,
        security,
        params: z.object({ id: z.string() }),
        response: {
          200: chatbotSchema,
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
}
