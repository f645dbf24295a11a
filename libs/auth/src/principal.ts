import { AppError } from '@cas/http'
import type { FastifyRequest } from 'fastify'
import './session-store.ts'

/** The signed-in user a dashboard request acts for. */
export interface Principal {
  readonly userId: string
  readonly orgId: string
}

/**
 * The principal of a request's session, or a 401. Cheap (no query): the session was loaded from its row
 * when the request arrived, expiry included, and deleting a user deletes their session rows.
 */
export function requireSession(request: FastifyRequest): Principal {
  // Null once the session has been destroyed during this request.
  const session = request.session as FastifyRequest['session'] | null
  const userId = session?.userId
  const orgId = session?.orgId
  if (!userId || !orgId) throw new AppError('unauthorized', 'Sign in first.')
  return { userId, orgId }
}
