import { withTransaction } from '@cas/db'
import type { OrganizationRole } from '@cas/events'
import { AppError, documented, errorResponses, eventTrace, rateLimitHeaders } from '@cas/http'
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { createUser } from '../auth/accounts.ts'
import { hashPassword } from '../auth/passwords.ts'
import { accountOf, signIn, switchOrganization } from '../auth/routes.ts'
import { accountExample, accountResponseSchema } from '../auth/schemas.ts'
import { runOrganizationCommand } from './commands.ts'
import { parseInvitationToken, secretMatches } from './invitation-token.ts'
import { acceptBodySchema, lookupBodySchema, lookupResponseSchema } from './schemas.ts'

export interface InvitationRouteDeps {
  readonly pool: pg.Pool
  readonly now: () => Date
  /** The per-client-address limit: these routes take a token from anyone. */
  readonly addressRateLimit: preHandlerAsyncHookHandler
}

const TAGS = ['members']

interface InvitationRow {
  id: string
  org_id: string
  org_name: string
  email: string
  role: OrganizationRole
  secret_hash: Buffer
  inviter_name: string | null
  expires_at: Date
  accepted_at: Date | null
  revoked_at: Date | null
}

const invalidLink = () =>
  new AppError('not_found', 'This invitation link is not valid: check that it was copied whole.')

/**
 * What an invitation link's token opens: one pending invitation, found by the id in the token and proven
 * by its secret (compared in constant time with the stored hash). Until the secret is proven every failure
 * reads the same; after that, the holder may learn that it was used, revoked or has expired.
 */
async function openInvitation(pool: pg.Pool, token: string, now: Date): Promise<InvitationRow> {
  const parsed = parseInvitationToken(token)
  if (!parsed) throw invalidLink()
  const { rows } = await pool.query<InvitationRow>(
    `SELECT i.id, i.org_id, o.name AS org_name, i.email, i.role, i.secret_hash, u.name AS inviter_name,
            i.expires_at, i.accepted_at, i.revoked_at
       FROM invitations i JOIN organizations o ON o.id = i.org_id LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.id = $1`,
    [parsed.id],
  )
  const row = rows[0]
  if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw invalidLink()
  if (row.accepted_at) throw new AppError('not_found', 'This invitation has already been used.')
  if (row.revoked_at) throw new AppError('not_found', 'This invitation was revoked.')
  if (row.expires_at <= now)
    throw new AppError('not_found', 'This invitation has expired; ask for a new one.')
  return row
}

/**
 * Opening an invitation link: what it is for (POST /api/v1/invitations/lookup), and accepting it (POST
 * /api/v1/invitations/accept): a signed-in person joins as themselves when the invitation names their
 * email; without a session, the invitation signs up a new person with its email. The token travels in the
 * body, never in a URL, so it stays out of logs.
 */
export function registerInvitationRoutes(scope: FastifyInstance, deps: InvitationRouteDeps): void {
  const { pool, now } = deps
  const app = scope.withTypeProvider<ZodTypeProvider>()

  app.post(
    '/api/v1/invitations/lookup',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupInvitation',
        security: [],
        description:
          'Anyone holding an invitation link (its token, the part after #) reads what it invites to, ' +
          'without a session: the organization, the email, the role, the inviter. 404 for a link that ' +
          'is wrong, used, revoked or expired. Rate-limited per client address.',
        summary: 'What an invitation link invites to (no session needed)',
        body: lookupBodySchema,
        response: {
          200: documented(lookupResponseSchema, {
            description: 'What the invitation invites to.',
            example: {
              ok: true,
              invitation: {
                organization: { name: 'Acme' },
                email: 'alan@example.com',
                role: 'viewer',
                invitedBy: 'Ada',
                expiresAt: '2026-11-28T10:00:00.000Z',
              },
            },
            headers: rateLimitHeaders,
          }),
          ...errorResponses('invalid_request', 'forbidden', 'not_found', 'rate_limited'),
        },
      },
      onRequest: deps.addressRateLimit,
    },
    async (request) => {
      const row = await openInvitation(pool, request.body.token, now())
      return {
        ok: true as const,
        invitation: {
          organization: { name: row.org_name },
          email: row.email,
          role: row.role,
          invitedBy: row.inviter_name,
          expiresAt: row.expires_at.toISOString(),
        },
      }
    },
  )

  app.post(
    '/api/v1/invitations/accept',
    {
      schema: {
        tags: TAGS,
        operationId: 'acceptInvitation',
        // A session is optional: with one, the signed-in person joins; without, a new one signs up.
        security: [],
        description:
          'With a session: joins the organization as the signed-in person, whose email must be the ' +
          "invitation's (403 otherwise). Without one: signs up a new person with the invitation's " +
          'email, the given password (at least 10 characters) and name, and signs them in (409 when ' +
          'that email already has an account: sign in first). Either way the session then works in the ' +
          'organization. 404 for a link that is wrong, used, revoked or expired.',
        summary:
          'Accept an invitation: as the signed-in person it names, or by signing up with its email and a password',
        body: acceptBodySchema,
        response: {
          200: documented(accountResponseSchema, {
            description: 'Joined: the account, working in the organization it joined.',
            example: accountExample,
            headers: rateLimitHeaders,
          }),
          ...errorResponses(
            'invalid_request',
            'unauthorized',
            'forbidden',
            'not_found',
            'conflict',
            'rate_limited',
          ),
        },
      },
      onRequest: deps.addressRateLimit,
    },
    async (request) => {
      const row = await openInvitation(pool, request.body.token, now())
      const userId = request.session.userId
      if (userId) {
        await acceptAs(request, pool, now, row, userId)
        await switchOrganization(request, row.org_id)
        return { ok: true as const, ...(await accountOf(request, pool, userId, row.org_id)) }
      }
      const { password, name } = request.body
      if (password === undefined) {
        throw new AppError('invalid_request', 'Choose a password for your new account, or sign in first.', [
          { path: '/password', message: 'required to sign up without a session' },
        ])
      }
      const passwordHash = await hashPassword(password)
      const joined = await withTransaction(pool, async (client) => {
        const user = await createUser(
          client,
          {
            email: row.email,
            name: name ?? row.email.slice(0, row.email.lastIndexOf('@')).slice(0, 100),
            passwordHash,
          },
          now(),
        )
        if (user === 'email_taken') return user
        await accept(client, request, now, row, { userId: user.id, email: user.email })
        return user
      })
      if (joined === 'email_taken') {
        throw new AppError(
          'conflict',
          'An account with this email already exists: sign in, then open the invitation link again.',
        )
      }
      return signIn(request, pool, joined.id, row.org_id)
    },
  )
}

async function acceptAs(
  request: FastifyRequest,
  pool: pg.Pool,
  now: () => Date,
  row: InvitationRow,
  userId: string,
): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId])
    const email = rows[0]?.email
    if (!email) throw new AppError('unauthorized', 'Sign in first.')
    await accept(client, request, now, row, { userId, email })
  })
}

function accept(
  client: pg.ClientBase,
  request: FastifyRequest,
  now: () => Date,
  row: InvitationRow,
  person: { userId: string; email: string },
) {
  return runOrganizationCommand(
    client,
    row.org_id,
    { type: 'accept-invitation', invitationId: row.id, person },
    { now, trace: { ...eventTrace(request), actorId: person.userId } },
  )
}
