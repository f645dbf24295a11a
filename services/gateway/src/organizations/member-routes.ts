import { actorTrace, requirePermission } from '@cas/auth'
import { withTransaction } from '@cas/db'
import type { OrganizationRole } from '@cas/events'
import { AppError, documented, errorResponses } from '@cas/http'
import { isUuid } from '@cas/views'
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { z } from 'zod'
import { runOrganizationCommand } from './commands.ts'
import { invitationLink, issueInvitation } from './invitation-token.ts'
import type { InvitationMailer } from './mailer.ts'
import {
  idParams,
  invitationExample,
  invitationsResponseSchema,
  inviteBodySchema,
  invitedResponseSchema,
  memberExample,
  memberSchema,
  membersResponseSchema,
  roleBodySchema,
  userIdParams,
} from './schemas.ts'

export interface MemberRouteDeps {
  readonly pool: pg.Pool
  readonly now: () => Date
  readonly invitationTtlDays: number
  /** Sends invitations by email when SMTP_URL is configured. */
  readonly mailer?: InvitationMailer
  /** The per-organization limit on creating invitations. */
  readonly invitationRateLimit: preHandlerAsyncHookHandler
}

const TAGS = ['members']
const SECURITY = [{ session: [] }]

const memberNotFound = () => new AppError('not_found', 'No member with this id in this organization.')
const invitationNotFound = () => new AppError('not_found', 'No pending invitation with this id.')

/**
 * The current organization's members and invitations (GET /api/v1/members, /api/v1/invitations and the
 * changes to them). Reads go to the tables the organization's events keep, changes through its decider;
 * every route checks the caller's role first (libs/auth permissions), the decider what depends on the
 * organization's state (owners, the last owner, pending invitations).
 */
export function registerMemberRoutes(scope: FastifyInstance, deps: MemberRouteDeps): void {
  const { pool, now } = deps
  const app = scope.withTypeProvider<ZodTypeProvider>()

  app.get(
    '/api/v1/members',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'listMembers',
        description:
          'Members of the organization the session works in, with their roles (owners, admins and ' +
          'members may read them).',
        summary: "The organization's members, in the order they joined",
        response: {
          200: documented(membersResponseSchema, {
            description: 'The members.',
            example: { ok: true, members: [memberExample] },
          }),
          ...errorResponses('unauthorized', 'forbidden'),
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'members:read')
      return { ok: true as const, members: await listMembers(pool, orgId) }
    },
  )

  app.patch(
    '/api/v1/members/:userId',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'updateMemberRole',
        description:
          "Owners and admins change a member's role; only owners act on an owner or give the owner " +
          'role, and the last owner cannot be demoted (409). 404 for someone who is not a member. The ' +
          'pending invitations the member sent that their new role could not send are revoked with it.',
        summary: "Change a member's role (owners only for the owner role; never the last owner's)",
        params: userIdParams,
        body: roleBodySchema,
        response: {
          200: documented(z.object({ ok: z.literal(true), member: memberSchema }), {
            description: 'Changed: the member with their new role.',
            example: { ok: true, member: { ...memberExample, role: 'admin' } },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'members:manage')
      const userId = memberId(request.params.userId)
      await withTransaction(pool, (client) =>
        runOrganizationCommand(
          client,
          principal.orgId,
          { type: 'change-role', actor: principal, userId, role: request.body.role },
          { now, trace: actorTrace(request, principal) },
        ),
      )
      const member = (await listMembers(pool, principal.orgId)).find((m) => m.userId === userId)
      if (!member) throw memberNotFound()
      return { ok: true as const, member }
    },
  )

  app.delete(
    '/api/v1/members/:userId',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'removeMember',
        description:
          'Owners and admins remove a member (only owners remove an owner; never the last owner: 409). ' +
          'Their sessions in this organization stop working at once, and the invitations they sent are revoked.',
        summary: 'Remove a member; they lose access with their very next request',
        params: userIdParams,
        response: {
          200: documented(z.object({ ok: z.literal(true) }), {
            description: 'Removed.',
            example: { ok: true },
          }),
          ...errorResponses('unauthorized', 'forbidden', 'not_found', 'conflict'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'members:manage')
      const userId = memberId(request.params.userId)
      await withTransaction(pool, (client) =>
        runOrganizationCommand(
          client,
          principal.orgId,
          { type: 'remove-member', actor: principal, userId },
          { now, trace: actorTrace(request, principal) },
        ),
      )
      return { ok: true as const }
    },
  )

  app.get(
    '/api/v1/invitations',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'listInvitations',
        description: 'Invitations not yet used, revoked or expired, newest first (owners and admins).',
        summary: 'Pending invitations to the organization',
        response: {
          200: documented(invitationsResponseSchema, {
            description: 'The pending invitations.',
            example: { ok: true, invitations: [invitationExample] },
          }),
          ...errorResponses('unauthorized', 'forbidden'),
        },
      },
    },
    async (request) => {
      const { orgId } = requirePermission(request, 'members:manage')
      return { ok: true as const, invitations: await listPendingInvitations(pool, orgId, now()) }
    },
  )

  app.post(
    '/api/v1/invitations',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'createInvitation',
        description:
          'Owners and admins invite an email with a role (only owners invite owners). The answer holds ' +
          'the link to accept it, shown this once (only a hash of its secret is kept), and whether it ' +
          'was emailed (SMTP_URL). 409 when the email is already a member. At most ' +
          'INVITATION_RATE_LIMIT_PER_HOUR invitations per organization per hour (429).',
        summary: 'Invite someone by email with a role; the link is in this answer only',
        body: inviteBodySchema,
        response: {
          200: documented(invitedResponseSchema, {
            description: 'Invited: the invitation, its single-use link and whether it was emailed.',
            example: {
              ok: true,
              invitation: invitationExample,
              link: 'http://127.0.0.1:3000/join#7c9e1a3b5d7f4b9c8e1a3b5d7f9c1e24.q2V8x7Lr0pW4mZ9t',
              emailed: false,
            },
          }),
          ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'conflict', 'rate_limited'),
        },
      },
      // The role first, so that those who may not invite cannot use up the organization's allowance.
      preHandler: [
        async (request: FastifyRequest) => void requirePermission(request, 'members:manage'),
        deps.invitationRateLimit,
      ],
    },
    async (request) => {
      const principal = requirePermission(request, 'members:manage')
      const { email, role } = request.body
      const issued = issueInvitation()
      const expiresAt = new Date(now().getTime() + deps.invitationTtlDays * 86_400_000)
      const { state } = await withTransaction(pool, (client) =>
        runOrganizationCommand(
          client,
          principal.orgId,
          {
            type: 'invite',
            actor: principal,
            invitationId: issued.id,
            email,
            role,
            expiresAt: expiresAt.toISOString(),
          },
          {
            now,
            trace: actorTrace(request, principal),
            extras: { secretHash: issued.secretHash, actorId: principal.userId },
          },
        ),
      )
      const invitation = (await listPendingInvitations(pool, principal.orgId, now())).find(
        (i) => i.id === issued.id,
      )
      if (!invitation) throw new Error('the invitation just created is not pending')
      const link = invitationLink(`${request.protocol}://${request.host}`, issued.token)
      const emailed = await sendInvitation(request, deps.mailer, {
        to: email,
        organizationName: state.name,
        inviterName: invitation.invitedBy?.name ?? 'Someone',
        role,
        link,
        expiresAt,
      })
      return { ok: true as const, invitation, link, emailed }
    },
  )

  app.delete(
    '/api/v1/invitations/:id',
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        operationId: 'revokeInvitation',
        description:
          'Owners and admins revoke a pending invitation; 404 when it is not pending in this ' +
          'organization.',
        summary: 'Revoke a pending invitation; its link stops working at once',
        params: idParams,
        response: {
          200: documented(z.object({ ok: z.literal(true) }), {
            description: 'Revoked.',
            example: { ok: true },
          }),
          ...errorResponses('unauthorized', 'forbidden', 'not_found'),
        },
      },
    },
    async (request) => {
      const principal = requirePermission(request, 'members:manage')
      const { id } = request.params
      if (!isUuid(id)) throw invitationNotFound()
      await withTransaction(pool, (client) =>
        runOrganizationCommand(
          client,
          principal.orgId,
          { type: 'revoke-invitation', actor: principal, invitationId: id.toLowerCase() },
          { now, trace: actorTrace(request, principal) },
        ),
      )
      return { ok: true as const }
    },
  )
}

/** Malformed ids are answered like unknown ones (API.md: never reveal existence). */
function memberId(id: string): string {
  if (!isUuid(id)) throw memberNotFound()
  return id.toLowerCase()
}

/** Emails an invitation when a mailer is configured; a failure is logged, the link is shown anyway. */
async function sendInvitation(
  request: FastifyRequest,
  mailer: InvitationMailer | undefined,
  mail: Parameters<InvitationMailer['send']>[0],
): Promise<boolean> {
  if (!mailer) return false
  try {
    await mailer.send(mail)
    return true
  } catch (err) {
    request.log.warn({ err }, 'sending the invitation email failed; the inviter has the link')
    return false
  }
}

interface MemberRow {
  user_id: string
  email: string
  name: string
  role: OrganizationRole
  joined_at: Date
}

export async function listMembers(pool: pg.Pool, orgId: string) {
  const { rows } = await pool.query<MemberRow>(
    `SELECT m.user_id, u.email, u.name, m.role, m.joined_at
       FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = $1 ORDER BY m.joined_at, m.user_id`,
    [orgId],
  )
  return rows.map((r) => ({
    userId: r.user_id,
    email: r.email,
    name: r.name,
    role: r.role,
    joinedAt: r.joined_at.toISOString(),
  }))
}

interface InvitationRow {
  id: string
  email: string
  role: OrganizationRole
  inviter_id: string | null
  inviter_email: string | null
  inviter_name: string | null
  created_at: Date
  expires_at: Date
}

async function listPendingInvitations(pool: pg.Pool, orgId: string, now: Date) {
  const { rows } = await pool.query<InvitationRow>(
    `SELECT i.id, i.email, i.role, u.id AS inviter_id, u.email AS inviter_email, u.name AS inviter_name,
            i.created_at, i.expires_at
       FROM invitations i LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.org_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2
      ORDER BY i.created_at DESC, i.id`,
    [orgId, now],
  )
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    role: r.role,
    invitedBy:
      r.inviter_id && r.inviter_email && r.inviter_name !== null
        ? { id: r.inviter_id, email: r.inviter_email, name: r.inviter_name }
        : null,
    createdAt: r.created_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
  }))
}
