import type { OrganizationRole } from '@cas/events'
import { AppError, type EventTrace, eventTrace } from '@cas/http'
import type { FastifyRequest } from 'fastify'
import { can, type Permission } from './permissions.ts'
import './session-store.ts'

/** A signed-in person, with the organization they are working in when they have one. */
export interface SignedIn {
  readonly userId: string
  /** null when they belong to no organization (removed from their only one) or have not picked one. */
  readonly orgId: string | null
  readonly role: OrganizationRole | null
}

/** The signed-in person a dashboard request acts for, in their current organization, with their role. */
export interface Principal {
  readonly userId: string
  readonly orgId: string
  readonly role: OrganizationRole
}

/**
 * The signed-in person of a request's session, or a 401. Cheap (no query): the session and the person's
 * current role were loaded together when the request arrived (session-store.ts), expiry included.
 */
export function requireUser(request: FastifyRequest): SignedIn {
  // Null once the session has been destroyed during this request.
  const session = request.session as FastifyRequest['session'] | null
  const userId = session?.userId
  if (!userId) throw new AppError('unauthorized', 'Sign in first.')
  const orgId = session.orgId ?? null
  const role = session.role ?? null
  return orgId && role ? { userId, orgId, role } : { userId, orgId: null, role: null }
}

/**
 * The principal of a request whose role in its current organization has `permission`: 401 without a
 * session, 403 `forbidden` without a current organization or for a role that may not. The role was read
 * with the session, at this request, so a removal or a lowered role applies at once.
 */
export function requirePermission(request: FastifyRequest, permission: Permission): Principal {
  const { userId, orgId, role } = requireUser(request)
  if (!orgId || !role) {
    // True whether they belong to other organizations or none: removed from this one, it deleted, or never
    // chosen (the dashboard shows its organization switcher then; trial9 read "not a member of any" as a lie).
    throw new AppError(
      'forbidden',
      'You are not working in an organization: you were removed from the one this session used, or it ' +
        'was deleted. Switch to another of yours (PUT /api/v1/auth/organization; GET /api/v1/auth/me ' +
        'lists them), create one, or accept an invitation.',
    )
  }
  if (!can(role, permission)) {
    throw new AppError('forbidden', `Your role (${role}) does not allow this in this organization.`)
  }
  return { userId, orgId, role }
}

/** The tracing metadata of the events a signed-in person's request commits, naming them as the actor. */
export function actorTrace(request: FastifyRequest, principal: { userId: string }): EventTrace {
  return { ...eventTrace(request), actorId: principal.userId }
}
