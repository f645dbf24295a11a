import { actorTrace, requirePermission } from '@cas/auth'
import { withTransaction } from '@cas/db'
import { AppError, documented, errorResponses } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import { isUuid } from '@cas/views'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { captureGroup } from '../capture/capture.ts'
import { captureBodySchema, captureResponseSchema } from '../capture/schema.ts'
import { CAPTURE_METRICS } from '../metrics.ts'

export interface TestConversationDeps {
  readonly pool: pg.Pool
  readonly keyring: Keyring
  readonly now: () => Date
}

/**
 * The conversation the dashboard's onboarding sends, and shows as its curl and JavaScript examples
 * (services/web/src/lib/capture-examples.ts holds the same, which its test checks): two messages the
 * analysis gives a clear sentiment. Sent twice, it stores nothing new (the message ids are the same).
 */
export const TEST_CONVERSATION = {
  conversationId: 'welcome-conversation',
  messages: [
    { id: 'welcome-1', role: 'user', content: 'Hi! The setup was quick and I love it.' },
    { id: 'welcome-2', role: 'assistant', content: 'Great to hear! Anything else I can help with?' },
  ],
  user: { id: 'user-1', name: 'Ada' },
} as const

/**
 * POST /api/v1/chatbots/:id/test-conversation: captures TEST_CONVERSATION as the chatbot, with its current
 * key, for a signed-in person who may edit it. The dashboard's "Send a test conversation" needs no key in
 * the page, so it works after a reload too (a key is only ever in the answers to create and rotate). The
 * key is read and the capture made in one transaction, as POST /api/v1/capture makes it.
 */
export async function registerTestConversation(
  app: FastifyInstance,
  deps: TestConversationDeps,
): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/v1/chatbots/:id/test-conversation',
    {
      schema: {
        tags: ['chatbots'],
        operationId: 'sendTestConversation',
        description:
          "For a person who may edit the chatbot: captures the dashboard's example conversation (id " +
          "welcome-conversation, two messages) with the chatbot's current key, as POST /api/v1/capture " +
          'would, so that the dashboard can show a first conversation without the key in the page. Sent ' +
          'again, it stores nothing new. 409 when the key changed meanwhile.',
        summary: "Capture the onboarding's example conversation with the chatbot's key",
        security: [{ session: [] }],
        params: z.object({ id: z.string() }),
        response: {
          200: documented(captureResponseSchema, {
            description: 'Captured, answered as a capture.',
            example: {
              ok: true,
              conversationId: '0f8e5d2c-7c1b-4e0a-9b3e-2d4f6a8c1e57',
              messagesStored: 2,
              analysisQueued: true,
              warnings: [],
            },
          }),
          ...errorResponses('unauthorized', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'chatbots:edit')
      const notFound = new AppError('not_found', 'No chatbot with this id.')
      if (!isUuid(request.params.id)) throw notFound
      const chatbotId = request.params.id.toLowerCase()
      const body = captureBodySchema.parse(TEST_CONVERSATION)
      const outcome = await withTransaction(deps.pool, async (client) => {
        const { rows } = await client.query<{ key_hash: Buffer }>(
          'SELECT key_hash FROM chatbot_api_keys WHERE chatbot_id = $1 AND org_id = $2',
          [chatbotId, principal.orgId],
        )
        const keyHash = rows[0]?.key_hash
        if (!keyHash) throw notFound
        const trace = actorTrace(request, principal)
        return (await captureGroup(client, deps.keyring, [{ keyHash, body, trace }], deps.now))[0]!
      })
      // The key was rotated or the chatbot deleted between the two statements: never a 401 to a session.
      if (outcome instanceof AppError) {
        throw new AppError('conflict', "The chatbot's key changed meanwhile: try again.")
      }
      request.server.metrics.use(CAPTURE_METRICS).messagesStored.inc(outcome.messagesStored)
      return {
        ok: true as const,
        conversationId: outcome.conversationId,
        messagesStored: outcome.messagesStored,
        analysisQueued: outcome.analysisQueued,
        warnings: outcome.warnings,
      }
    },
  )
}
