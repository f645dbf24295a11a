import { actorTrace, requirePermission, requireUser } from '@cas/auth'
import { withTransaction } from '@cas/db'
import { purgeStreamEvents } from '@cas/eventlog'
import { AppError, documented, errorResponses } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { createOrganization, findAccount } from '../auth/accounts.ts'
import { accountOf, switchOrganization } from '../auth/routes.ts'
import { accountExample, accountResponseSchema, organizationNameSchema } from '../auth/schemas.ts'
import { executeChatbotCommand } from '../chatbots/commands.ts'
import { runOrganizationCommand } from './commands.ts'

export interface OrganizationRouteDeps {
  readonly pool: pg.Pool
  readonly keyring: Keyring
  readonly now: () => Date
}

const TAGS = ['organizations']
const SECURITY = [{ session: [] }]
/** Chatbots created while an organization is being deleted are deleted in another round, this many at most. */
const DELETE_ROUNDS = 5

/**
 * A person's organizations: create one (anyone signed in, also someone who belongs to none), leave the
 * current one, delete it (owners). Each answers with the account as /auth/me does, the session moved to
 * where the person now works.
 */
export function registerOrganizationRoutes(scope: FastifyInstance, deps: OrganizationRouteDeps): void {
  const { pool, now } = deps
  const app = scope.withTypeProvider<ZodTypeProvider>()

  app.post(
    '/api/v1/organizations',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'createOrganization',
        description:
          'Creates an organization (a name of 1–100 characters) owned by the signed-in person, who may ' +
          'belong to none yet, and switches the session to it.',
        summary: 'Create an organization with yourself as its owner, and switch to it',
        body: z.strictObject({ name: organizationNameSchema }),
        response: {
          200: documented(accountResponseSchema, {
            description: 'Created: the account, now working in the new organization as its owner.',
            example: accountExample,
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
      },
    },
    async (request) => {
      const { userId } = requireUser(request)
      const orgId = await withTransaction(pool, async (client) => {
        const { rows } = await client.query<{ id: string; email: string; name: string }>(
          'SELECT id, email, name FROM users WHERE id = $1',
          [userId],
        )
        const user = rows[0]
        if (!user) throw new AppError('unauthorized', 'Sign in first.')
        return createOrganization(client, user, request.body.name, now, actorTrace(request, { userId }))
      })
      await switchOrganization(request, orgId)
      return { ok: true as const, ...(await accountOf(request, pool, userId, orgId)) }
    },
  )

  app.post(
    '/api/v1/organization/leave',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'leaveOrganization',
        description:
          'Leaves the organization the session works in; the session moves to the first organization ' +
          'left, or to none. 409 for its last owner (transfer ownership or delete the organization).',
        summary: 'Leave the current organization (not as its last owner)',
        response: {
          200: documented(accountResponseSchema, {
            description: 'Left: the account, working in its first remaining organization (null when none).',
            example: { ...accountExample, organization: null, organizations: [] },
          }),
          ...errorResponses('unauthorized', 'forbidden', 'conflict'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'organization:leave')
      await withTransaction(pool, (client) =>
        runOrganizationCommand(
          client,
          principal.orgId,
          { type: 'leave', actor: principal },
          { now, trace: actorTrace(request, principal) },
        ),
      )
      return moveToFirstOrganization(request, principal.userId)
    },
  )

  app.delete(
    '/api/v1/organization',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'deleteOrganization',
        description:
          'Owners only. Deletes every chatbot of the organization with its conversations, events and ' +
          'analytics (as DELETE /api/v1/chatbots/{id} does), then the organization with its members, ' +
          'invitations and audit log; the event journal keeps only the events saying so. The session ' +
          'moves to the first organization left. 409 when chatbots keep being created meanwhile: try ' +
          'again.',
        summary:
          'Delete the current organization for good: every chatbot with its data (as DELETE /chatbots/:id), its members, invitations and audit log',
        response: {
          200: documented(accountResponseSchema, {
            description:
              'Deleted: the account, working in its first remaining organization (null when none).',
            example: { ...accountExample, organization: null, organizations: [] },
          }),
          ...errorResponses('unauthorized', 'forbidden', 'conflict'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'organization:delete')
      const trace = actorTrace(request, principal)
      for (let round = 0; ; round++) {
        const { rows } = await pool.query<{ id: string }>('SELECT id FROM chatbots WHERE org_id = $1', [
          principal.orgId,
        ])
        for (const { id } of rows) {
          await executeChatbotCommand(deps, principal.orgId, id, { type: 'delete' }, undefined, trace).catch(
            (err: unknown) => {
              // Deleted meanwhile by someone else: what we wanted.
              if (!(err instanceof AppError && err.code === 'not_found')) throw err
            },
          )
        }
        const deleted = await withTransaction(pool, async (client) => {
          await client.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [principal.orgId])
          const { rows: left } = await client.query('SELECT 1 FROM chatbots WHERE org_id = $1 LIMIT 1', [
            principal.orgId,
          ])
          if (left.length > 0) return false
          await runOrganizationCommand(
            client,
            principal.orgId,
            { type: 'delete', actor: principal },
            { now, trace },
          )
          // As with a chatbot: the journal keeps nothing of it but the event saying it is gone.
          await purgeStreamEvents(client, 'organization', principal.orgId, ['organization.deleted'])
          return true
        })
        if (deleted) break
        if (round >= DELETE_ROUNDS) {
          throw new AppError('conflict', 'Chatbots kept being created in this organization; try again.')
        }
      }
      return moveToFirstOrganization(request, principal.userId)
    },
  )

  /** After leaving or deleting the current organization, the session works in the first one left, if any. */
  async function moveToFirstOrganization(request: Parameters<typeof requireUser>[0], userId: string) {
    const account = await findAccount(pool, userId)
    if (!account) throw new AppError('unauthorized', 'Sign in first.')
    await switchOrganization(request, account.organization?.id ?? null)
    return { ok: true as const, ...account }
  }
}
