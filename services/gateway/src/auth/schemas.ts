import { PERMISSIONS, type Permission } from '@cas/auth'
import { organizationRoles } from '@cas/events'
import { z } from 'zod'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.ts'

/**
 * Trimmed and lowercased before the format check, so ` Ann@Example.COM ` is ann@example.com everywhere.
 * The part before @ is at most 64 characters (RFC 5321), which the email format requires and z.email()
 * does not check.
 */
export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .check(z.email())
  .refine((email) => email.lastIndexOf('@') <= 64, 'the part before @ is longer than 64 characters')

export const organizationNameSchema = z.string().trim().min(1).max(100)

export const signupBodySchema = z.object({
  email: emailSchema,
  password: z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH),
  name: z.string().trim().min(1).max(100).optional().describe('Defaults to the part of the email before @.'),
  organizationName: organizationNameSchema,
})

export const loginBodySchema = z.object({
  email: emailSchema,
  // No minimum beyond non-empty: the length rule applies when a password is chosen, not when it is used.
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
})

export const roleSchema = z
  .enum(organizationRoles)
  .describe('owner, admin, member or viewer (docs/api.md has what each may do).')

const userSchema = z.object({ id: z.uuid(), email: z.string(), name: z.string() })
const organizationSummarySchema = z.object({ id: z.uuid(), name: z.string(), role: roleSchema })

export const accountResponseSchema = z.object({
  ok: z.literal(true),
  user: userSchema,
  organization: organizationSummarySchema
    .extend({
      permissions: z
        .array(z.enum(Object.keys(PERMISSIONS) as [Permission, ...Permission[]]))
        .describe('What the role allows here; the server checks every request all the same.'),
    })
    .nullable()
    .describe('The organization this session works in; null when the person belongs to none.'),
  organizations: z
    .array(organizationSummarySchema)
    .describe('Every organization the person belongs to, in the order they joined.'),
})

export const okResponseSchema = z.object({ ok: z.literal(true) })

/** The account in the OpenAPI document's examples: an owner of one organization. */
export const accountExample: z.output<typeof accountResponseSchema> = {
  ok: true,
  user: { id: '3d6f0c2a-8b1e-4f5a-9c7d-2e4b6a8c0f13', email: 'ada@example.com', name: 'Ada' },
  organization: {
    id: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d',
    name: 'Acme',
    role: 'owner',
    permissions: Object.keys(PERMISSIONS) as Permission[],
  },
  organizations: [{ id: '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d', name: 'Acme', role: 'owner' }],
}
