import { actorTrace, requirePermission } from '@cas/auth'
import { AppError, errorResponses } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import { settingsPatchSchema, settingsSchema } from '@cas/settings'
import { type ChatbotView, chatbotSchema, isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { issueApiKey } from './api-key.ts'
import { executeChatbotCommand, newChatbotId } from './commands.ts'
import { readChatbot } from './projection.ts'

export interface ChatbotRouteDeps {
  readonly pool: pg.Pool
  readonly keyring: Keyring
  readonly now: () => Date
}

const nameSchema = z.string().trim().min(1).max(100).describe('Display name, 1 to 100 characters.')

const withKeySchema = z.object({
  ok: z.literal(true),
  chatbot: chatbotSchema,
  apiKey: z.string().describe('The full API key. Shown this once; only its hash is kept.'),
})

// Malformed ids are answered like unknown ones (API.md: never reveal existence), so params are not validated.
const idParams = z.object({ id: z.string() })

const notFound = () => new AppError('not_found', 'No chatbot with this id.')

/**
 * Chatbot commands for the dashboard (the reads are the query service's): every route is
 * session-authenticated and organization-scoped.
 */
export async function registerChatbots(app: FastifyInstance, deps: ChatbotRouteDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>()
  const tags = ['chatbots']
  const security = [{ session: [] }]

  const readBack = async (orgId: string, id: string): Promise<ChatbotView> => {
    const chatbot = await readChatbot(deps.pool, orgId, id)
    if (!chatbot) throw notFound()
    return chatbot
  }
  const chatbotId = (id: string) => {
    if (!isUuid(id)) throw notFound()
    return id.toLowerCase()
  }

  r.post(
    '/api/v1/chatbots',
    {
      schema: {
        tags,
        security,
        body: z.strictObject({ name: nameSchema, settings: settingsSchema.optional() }),
        response: { 200: withKeySchema, ...errorResponses('invalid_request', 'unauthorized', 'forbidden') },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'chatbots:create')
      const { orgId } = principal
      const key = issueApiKey()
      const id = newChatbotId()
      const { name, settings = {} } = request.body
      await executeChatbotCommand(
        deps,
        orgId,
        id,
        { type: 'create', name, settings, apiKeyPrefix: key.prefix },
        key,
        actorTrace(request, principal),
      )
      return { ok: true as const, chatbot: await readBack(orgId, id), apiKey: key.key }
    },
  )

  r.patch(
    '/api/v1/chatbots/:id',
    {
      schema: {
        tags,
        security,
        params: idParams,
        body: z.strictObject({
          name: nameSchema.optional(),
          settings: settingsPatchSchema.optional(),
        }),
        response: {
          200: chatbotSchema,
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'chatbots:edit')
      const { orgId } = principal
      const id = chatbotId(request.params.id)
      const { name, settings } = request.body
      await executeChatbotCommand(
        deps,
        orgId,
        id,
        { type: 'update', name, settingsPatch: settings },
        undefined,
        actorTrace(request, principal),
      )
      return readBack(orgId, id)
    },
  )

  r.delete(
    '/api/v1/chatbots/:id',
    {
      schema: {
        tags,
        security,
        params: idParams,
        response: {
          200: z.object({ ok: z.literal(true) }),
          ...errorResponses('unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'chatbots:delete')
      const { orgId } = principal
      await executeChatbotCommand(
        deps,
        orgId,
        chatbotId(request.params.id),
        { type: 'delete' },
        undefined,
        actorTrace(request, principal),
      )
      return { ok: true as const }
    },
  )

  r.post(
    '/api/v1/chatbots/:id/rotate-key',
    {
      schema: {
        tags,
        security,
        params: idParams,
        response: { 200: withKeySchema, ...errorResponses('unauthorized', 'forbidden', 'not_found') },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'chatbots:rotate-key')
      const { orgId } = principal
      const id = chatbotId(request.params.id)
      const key = issueApiKey()
      await executeChatbotCommand(
        deps,
        orgId,
        id,
        { type: 'rotate-key', apiKeyPrefix: key.prefix },
        key,
        actorTrace(request, principal),
      )
      return { ok: true as const, chatbot: await readBack(orgId, id), apiKey: key.key }
    },
  )
}
