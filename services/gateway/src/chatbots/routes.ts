import { actorTrace, can, type Permission, requirePermission } from '@cas/auth'
import { AppError, documented, errorResponses } from '@cas/http'
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

/** A chatbot in the OpenAPI document's examples. */
export const chatbotExample: ChatbotView = {
  id: '2f4a6c8e-0b1d-4e3f-8a5c-7e9b1d3f5a60',
  name: 'Support bot',
  api_key_prefix: 'svc_live_3kQ9…',
  settings: { customFields: { plan: 'string' } },
  created_at: '2026-11-21T10:00:00.000Z',
}

const withKeyExample = {
  ok: true as const,
  chatbot: chatbotExample,
  apiKey: 'svc_live_3kQ9vL2xR7mN4pT8wY1zB6cF0hJ5dG',
}

const notFound = () => new AppError('not_found', 'No chatbot with this id.')

/**
 * Settings a member may not change, and the permission each needs on top of chatbots:edit: the chatbot's
 * own topics and its signals are the topic managers' (as the topic commands are: a member could otherwise
 * override the topics they manage, or turn bot failures off); turning analysis off and the retention that
 * erases conversations are owners' and admins' (as erasure is).
 */
const MANAGED_SETTINGS = {
  topics: 'topics:manage',
  signals: 'topics:manage',
  analysisEnabled: 'chatbots:govern',
  retentionDays: 'chatbots:govern',
} as const satisfies Record<string, Permission>

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
        operationId: 'createChatbot',
        description:
          'Owners and admins create a chatbot in the current organization, with a name (1–100 ' +
          'characters) and optional settings: customFields (field name → "string" | "number" | ' +
          '"boolean", which capture checks custom fields against), analysisEnabled, topics (label → ' +
          'keywords) and retentionDays. The answer holds its API key (svc_live_…), shown this once: ' +
          'only its hash is kept.',
        summary: 'Create a chatbot and its API key',
        tags,
        security,
        body: z.strictObject({ name: nameSchema, settings: settingsSchema.optional() }),
        response: {
          200: documented(withKeySchema, {
            description: 'Created: the chatbot and its full API key, shown this once.',
            example: withKeyExample,
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
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
        operationId: 'updateChatbot',
        description:
          'Owners, admins and members change the name, the settings, or both; `settings.topics`, ' +
          "`settings.signals` (the chatbot's own topics and its signals), `settings.analysisEnabled` and " +
          "`settings.retentionDays` are owners' and admins' only (403 for a member). `settings` is a JSON " +
          'Merge Patch (RFC 7386): keys given replace theirs, null removes one, others are kept. 404 ' +
          'for a chatbot not in the current organization.',
        summary: 'Rename a chatbot or change its settings',
        tags,
        security,
        params: idParams,
        body: z.strictObject({
          name: nameSchema.optional(),
          settings: settingsPatchSchema.optional(),
        }),
        response: {
          200: documented(chatbotSchema, {
            description: 'Changed: the chatbot as it is now.',
            example: { ...chatbotExample, name: 'Support bot (EU)' },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'chatbots:edit')
      const { orgId } = principal
      const { name, settings } = request.body
      const refused = Object.entries(MANAGED_SETTINGS).filter(
        ([key, permission]) =>
          settings !== undefined && Object.hasOwn(settings, key) && !can(principal.role, permission),
      )
      if (refused.length > 0) {
        throw new AppError(
          'forbidden',
          `Your role (${principal.role}) does not allow changing ${refused.map(([k]) => `settings.${k}`).join(' or ')}: owners and admins manage a chatbot's topics, signals, analysis and retention.`,
        )
      }
      const id = chatbotId(request.params.id)
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
        operationId: 'deleteChatbot',
        description:
          'Owners and admins delete a chatbot for good: its key stops working at once, and its ' +
          'conversations, messages, analytics and events are erased (the event journal keeps only the ' +
          'event saying it was deleted).',
        summary: 'Delete a chatbot with all its data',
        tags,
        security,
        params: idParams,
        response: {
          200: documented(z.object({ ok: z.literal(true) }), {
            description: 'Deleted.',
            example: { ok: true },
          }),
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
        operationId: 'rotateChatbotKey',
        description:
          "Owners and admins replace the chatbot's API key: the old key stops working at once (capture " +
          'with it is 401), and the new one is in this answer only.',
        summary: 'Issue a new API key for a chatbot',
        tags,
        security,
        params: idParams,
        response: {
          200: documented(withKeySchema, {
            description: 'Rotated: the chatbot and its new API key, shown this once.',
            example: withKeyExample,
          }),
          ...errorResponses('unauthorized', 'forbidden', 'not_found'),
        },
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
