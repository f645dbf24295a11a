import { requirePermission } from '@cas/auth'
import { withOrgScope } from '@cas/db'
import { AppError, documented, errorResponses } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { QueryDeps } from '../deps.ts'

const entrySchema = z.object({
  id: z.uuid().describe('The event the entry was read from.'),
  occurredAt: z.string(),
  action: z
    .string()
    .describe(
      'The event type: organization.created, organization.member-invited, organization.invitation-revoked, ' +
        'organization.member-joined, organization.member-role-changed, organization.member-removed, ' +
        'chatbot.created, chatbot.renamed, chatbot.settings-changed, chatbot.key-rotated, chatbot.deleted, ' +
        'chatbot.topic-rename-requested, chatbot.topic-hide-requested, chatbot.topic-unhide-requested, chatbot.topic-creation-requested, ' +
        "chatbot.topic-merge-requested (a command on the chatbot's topics, details its payload), " +
        'chatbot.reanalysis-requested (a re-analysis of the chatbot, details its payload), ' +
        'conversation.erased (an end-user erasure).',
    ),
  actor: z
    .object({ id: z.uuid(), email: z.string().nullable(), name: z.string().nullable() })
    .nullable()
    .describe('Who did it, as they were then; null when nobody signed in did (none so far).'),
  target: z.object({
    type: z.enum(['organization', 'member', 'invitation', 'chatbot']),
    id: z.string(),
    name: z.string().nullable().describe("The member's or invitee's email, the chatbot's name."),
  }),
  details: z
    .record(z.string(), z.unknown())
    .describe('Per action: roles, the settings patch, erased counts, …'),
})

const auditQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(100).optional().describe('Opaque: the nextCursor of the previous page.'),
})

interface AuditRow {
  event_id: string
  position: string
  occurred_at: Date
  action: string
  actor_id: string | null
  actor_email: string | null
  actor_name: string | null
  target_type: 'organization' | 'member' | 'invitation' | 'chatbot'
  target_id: string
  target_name: string | null
  details: Record<string, unknown>
}

function decodeCursor(cursor: string): string {
  const position = Buffer.from(cursor, 'base64url').toString('utf8')
  if (/^[1-9]\d{0,18}$/.test(position)) return position
  throw new AppError('invalid_request', 'The cursor is not one this API returned.', [
    { path: '/cursor', message: 'invalid cursor', in: 'querystring' },
  ])
}

/**
 * GET /api/v1/audit: who did what in the organization, newest first, paged, for owners and admins. Read,
 * confined to the organization, from audit_entries (migration 0020): the published view of the audit log
 * the gateway writes in the transaction of each action, with the actor's email and name as they were then.
 */
export async function registerAuditRoutes(app: FastifyInstance, deps: QueryDeps): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/v1/audit',
    {
      schema: {
        tags: ['audit'],
        security: [{ session: [] }],
        operationId: 'listAuditEntries',
        description:
          'Owners and admins read who did what in the organization (invitations, roles, members, ' +
          "chatbots and their keys and settings, erasures), newest first, with the actor's email and " +
          'name as they were then. Paged: `limit` at most 100 (default 50); pass `nextCursor` back as ' +
          '`cursor` for the next page (null on the last).',
        summary: "The organization's audit log, newest first",
        querystring: auditQuery,
        response: {
          200: documented(
            z.object({
              ok: z.literal(true),
              entries: z.array(entrySchema),
              nextCursor: z.string().nullable(),
            }),
            {
              description: 'One page of entries, newest first.',
              example: {
                ok: true,
                entries: [
                  {
                    id: '8d0f2b4c-6e8a-4c1d-9f3b-5d7f9b1d3f57',
                    occurredAt: '2026-11-21T10:05:00.000Z',
                    action: 'chatbot.key-rotated',
                    actor: {
                      id: '3d6f0c2a-8b1e-4f5a-9c7d-2e4b6a8c0f13',
                      email: 'ada@example.com',
                      name: 'Ada',
                    },
                    target: {
                      type: 'chatbot',
                      id: '2f4a6c8e-0b1d-4e3f-8a5c-7e9b1d3f5a60',
                      name: 'Support bot',
                    },
                    details: {},
                  },
                ],
                nextCursor: 'MTIzNA',
              },
            },
          ),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'audit:read')
      const { limit, cursor } = request.query
      const before = cursor === undefined ? null : decodeCursor(cursor)
      const rows = await withOrgScope(deps.readerPool, orgId, async (client) => {
        const { rows } = await client.query<AuditRow>(
          `SELECT event_id, position::text, occurred_at, action, actor_id, actor_email, actor_name,
                  target_type, target_id, target_name, details
             FROM audit_entries
            WHERE org_id = $1 AND ($2::bigint IS NULL OR position < $2::bigint)
            ORDER BY audit_entries.position DESC LIMIT $3`,
          [orgId, before, limit + 1],
        )
        return rows
      })
      const page = rows.slice(0, limit)
      const last = page.at(-1)
      return {
        ok: true as const,
        entries: page.map((r) => ({
          id: r.event_id,
          occurredAt: r.occurred_at.toISOString(),
          action: r.action,
          actor: r.actor_id ? { id: r.actor_id, email: r.actor_email, name: r.actor_name } : null,
          target: { type: r.target_type, id: r.target_id, name: r.target_name },
          details: r.details,
        })),
        nextCursor: rows.length > limit && last ? Buffer.from(last.position).toString('base64url') : null,
      }
    },
  )
}
