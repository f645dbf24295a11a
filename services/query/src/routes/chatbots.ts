import { requirePermission } from '@cas/auth'
import { withOrgScope } from '@cas/db'
import { AppError, errorResponses } from '@cas/http'
import { chatbotSchema, findChatbot, isUuid, listChatbots } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { QueryDeps } from '../deps.ts'

/**
 * Chatbot reads from the chatbot read model (the chatbots table, which the gateway updates in the
 * command's own transaction, so a read right after a command sees it).
 */
export async function registerChatbotReadRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['chatbots']
  const security = [{ session: [] }]

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
        response: { 200: chatbotSchema, ...errorResponses('forbidden', 'unauthorized', 'not_found') },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'chatbots:read')
      const id = request.params.id
      const chatbot = isUuid(id)
        ? await withOrgScope(deps.readerPool, orgId, (client) => findChatbot(client, orgId, id.toLowerCase()))
        : undefined
      if (!chatbot) throw new AppError('not_found', 'No chatbot with this id.')
      return chatbot
    },
  )
}
