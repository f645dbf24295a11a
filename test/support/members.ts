import { randomUUID } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { type AccountBody, type Role, randomClientAddress, sessionCookie, TEST_PASSWORD } from './auth.ts'

/** POST /api/v1/invitations as the holder of `cookie`. */
export function invite(app: FastifyInstance, cookie: string, email: string, role: Role) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/invitations',
    headers: { cookie },
    payload: { email, role },
  })
}

/** The token of an invitation answer: the link's fragment. */
export function tokenOf(response: LightMyRequestResponse): string {
  if (response.statusCode !== 200)
    throw new Error(`invitation failed with ${response.statusCode}: ${response.body}`)
  const link = (response.json() as { link: string }).link
  return link.slice(link.indexOf('#') + 1)
}

/** POST /api/v1/invitations/accept, with a session (cookie) or without (signing up with `password`). */
export function accept(
  app: FastifyInstance,
  token: string,
  opts: { cookie?: string; password?: string; name?: string } = {},
) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/invitations/accept',
    remoteAddress: randomClientAddress(),
    headers: opts.cookie ? { cookie: opts.cookie } : {},
    payload: {
      token,
      ...(opts.password === undefined ? {} : { password: opts.password }),
      ...(opts.name === undefined ? {} : { name: opts.name }),
    },
  })
}

export interface Joined extends AccountBody {
  readonly cookie: string
}

/**
 * A new person in the organization of `ownerCookie` with `role`: invited by its owner (or admin), signed up
 * through the invitation, signed in there.
 */
export async function join(
  app: FastifyInstance,
  ownerCookie: string,
  role: Role,
  email = `member-${randomUUID()}@example.com`,
): Promise<Joined> {
  const token = tokenOf(await invite(app, ownerCookie, email, role))
  const response = await accept(app, token, { password: TEST_PASSWORD })
  if (response.statusCode !== 200)
    throw new Error(`accepting failed with ${response.statusCode}: ${response.body}`)
  return { cookie: sessionCookie(response), ...(response.json() as AccountBody) }
}

/** Every role, most powerful first. */
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer']
