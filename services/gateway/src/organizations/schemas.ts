import { z } from 'zod'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/passwords.ts'
import { emailSchema, roleSchema } from '../auth/schemas.ts'

export const memberSchema = z.object({
  userId: z.uuid(),
  email: z.string(),
  name: z.string(),
  role: roleSchema,
  joinedAt: z.string(),
})

export const membersResponseSchema = z.object({ ok: z.literal(true), members: z.array(memberSchema) })

const personSchema = z.object({ id: z.uuid(), email: z.string(), name: z.string() }).nullable()

export const invitationSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  role: roleSchema,
  invitedBy: personSchema.describe('null when the inviter has since been deleted.'),
  createdAt: z.string(),
  expiresAt: z.string(),
})

export const invitationsResponseSchema = z.object({
  ok: z.literal(true),
  invitations: z
    .array(invitationSchema)
    .describe('Pending invitations (not used, revoked or expired), newest first.'),
})

export const inviteBodySchema = z.strictObject({ email: emailSchema, role: roleSchema })

export const invitedResponseSchema = z.object({
  ok: z.literal(true),
  invitation: invitationSchema,
  link: z
    .string()
    .describe('The link to accept it, shown this once: only a hash of its secret is kept. Single use.'),
  emailed: z
    .boolean()
    .describe('Whether it was also sent by email (SMTP_URL configured, and the send worked).'),
})

export const roleBodySchema = z.strictObject({ role: roleSchema })

export const tokenSchema = z.string().min(1).max(200).describe('The part of the invitation link after `#`.')

export const lookupBodySchema = z.strictObject({ token: tokenSchema })

export const lookupResponseSchema = z.object({
  ok: z.literal(true),
  invitation: z.object({
    organization: z.object({ name: z.string() }),
    email: z.string().describe('The email it was sent to: accepting signs in or signs up as that person.'),
    role: roleSchema,
    invitedBy: z.string().nullable().describe("The inviter's name."),
    expiresAt: z.string(),
  }),
})

export const acceptBodySchema = z.strictObject({
  token: tokenSchema,
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH)
    .max(PASSWORD_MAX_LENGTH)
    .optional()
    .describe('Without a session: the password of the new account the invitation signs up.'),
  name: z.string().trim().min(1).max(100).optional().describe('Without a session: the new account’s name.'),
})

export const userIdParams = z.object({ userId: z.string() })
export const idParams = z.object({ id: z.string() })

const EXAMPLE_TIME = '2026-11-21T10:00:00.000Z'

/** A member in the OpenAPI document's examples. */
export const memberExample: z.output<typeof memberSchema> = {
  userId: '5b7d9f1a-3c5e-4a7b-9d1f-2a4c6e8a0b13',
  email: 'grace@example.com',
  name: 'Grace',
  role: 'member',
  joinedAt: EXAMPLE_TIME,
}

/** An invitation in the OpenAPI document's examples. */
export const invitationExample: z.output<typeof invitationSchema> = {
  id: '7c9e1a3b-5d7f-4b9c-8e1a-3b5d7f9c1e24',
  email: 'alan@example.com',
  role: 'viewer',
  invitedBy: { id: '3d6f0c2a-8b1e-4f5a-9c7d-2e4b6a8c0f13', email: 'ada@example.com', name: 'Ada' },
  createdAt: EXAMPLE_TIME,
  expiresAt: '2026-11-28T10:00:00.000Z',
}
