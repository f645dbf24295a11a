import { z } from 'zod'
import { defineEvent, type EventDefinition } from './envelope.ts'
import { utcTimestampSchema, uuidSchema } from './primitives.ts'

import { organizationRoles } from './roles.ts'

export { type OrganizationRole, organizationRoles } from './roles.ts'

/**
 * Organization events belong to no chatbot: their envelope's `chatbotId` is always the nil UUID, so that
 * every envelope keeps the same shape (and readers that look up a chatbot by it find none).
 */
export const NO_CHATBOT_ID = '00000000-0000-0000-0000-000000000000'

const roleSchema = z.enum(organizationRoles).describe('owner, admin, member or viewer.')
// Emails of the organization's own people (never of its chatbots' end users), stored lowercased.
const emailSchema = z.string().min(3).max(254).describe("The person's email, lowercased.")
const userIdSchema = uuidSchema.describe("The person's user id.")
const invitationIdSchema = uuidSchema.describe(
  'The invitation (never its token, which only the link carries).',
)

/** defineEvent for the organization stream, with the envelope's chatbotId pinned to the nil UUID. */
function defineOrganizationEvent<const Type extends string, Payload extends z.ZodType>(definition: {
  type: Type
  description: string
  payload: Payload
  example: z.input<Payload>
}) {
  const defined = defineEvent({ ...definition, version: 1, streamType: 'organization' })
  return {
    ...defined,
    schema: defined.schema.extend({
      chatbotId: uuidSchema
        .regex(/^0{8}-0{4}-0{4}-0{4}-0{12}$/, 'organization events belong to no chatbot: the nil UUID')
        .describe('Organization events belong to no chatbot: always the nil UUID.'),
    }),
  } satisfies EventDefinition
}

export const organizationCreatedV1 = defineOrganizationEvent({
  type: 'organization.created',
  description:
    'An organization was created (at sign-up, or by a signed-in person); a member-joined event for its first owner follows. Organizations created before member events existed have no such event: their stream starts with whatever happened to them next.',
  payload: z.strictObject({ name: z.string().min(1).max(100) }),
  example: { name: 'Analytical Engines' },
})

export const organizationMemberInvitedV1 = defineOrganizationEvent({
  type: 'organization.member-invited',
  description:
    'An owner or admin invited someone by email with a role. The invitation is pending until accepted, revoked or expired.',
  payload: z.strictObject({
    invitationId: invitationIdSchema,
    email: emailSchema,
    role: roleSchema,
    expiresAt: utcTimestampSchema.describe('After this the invitation can no longer be accepted.'),
  }),
  example: {
    invitationId: '0194a1c0-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
    email: 'grace@example.com',
    role: 'member',
    expiresAt: '2025-01-22T09:30:03.250Z',
  },
})

export const organizationInvitationRevokedV1 = defineOrganizationEvent({
  type: 'organization.invitation-revoked',
  description: 'A pending invitation was revoked; its link no longer works.',
  payload: z.strictObject({ invitationId: invitationIdSchema, email: emailSchema }),
  example: { invitationId: '0194a1c0-5e6f-7a8b-9c0d-1e2f3a4b5c6d', email: 'grace@example.com' },
})

export const organizationMemberJoinedV1 = defineOrganizationEvent({
  type: 'organization.member-joined',
  description:
    "A person became a member: by accepting an invitation (signing up, or as an existing person), or as the organization's creator.",
  payload: z.strictObject({
    userId: userIdSchema,
    email: emailSchema,
    role: roleSchema,
    invitationId: invitationIdSchema.nullable().describe('null for the creator of the organization.'),
  }),
  example: {
    userId: '0194a1c1-6f70-7b8c-8d0e-2f3a4b5c6d7e',
    email: 'grace@example.com',
    role: 'member',
    invitationId: '0194a1c0-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
  },
})

export const organizationMemberRoleChangedV1 = defineOrganizationEvent({
  type: 'organization.member-role-changed',
  description: "A member's role was changed; it applies to their very next request.",
  payload: z.strictObject({
    userId: userIdSchema,
    email: emailSchema,
    role: roleSchema.describe('The new role.'),
    previousRole: roleSchema,
  }),
  example: {
    userId: '0194a1c1-6f70-7b8c-8d0e-2f3a4b5c6d7e',
    email: 'grace@example.com',
    role: 'admin',
    previousRole: 'member',
  },
})

export const organizationMemberRemovedV1 = defineOrganizationEvent({
  type: 'organization.member-removed',
  description:
    'A member left, or was removed by an owner or admin; they lose access with their very next request.',
  payload: z.strictObject({
    userId: userIdSchema,
    email: emailSchema,
    role: roleSchema.describe('The role they had.'),
    reason: z.enum(['removed', 'left']).describe('Removed by someone else, or left by themselves.'),
  }),
  example: {
    userId: '0194a1c1-6f70-7b8c-8d0e-2f3a4b5c6d7e',
    email: 'grace@example.com',
    role: 'admin',
    reason: 'removed',
  },
})

export const organizationDeletedV1 = defineOrganizationEvent({
  type: 'organization.deleted',
  description:
    'An owner deleted the organization: every chatbot of it was deleted first (each with its chatbot.deleted event), then its members, invitations and audit log. The journal keeps nothing of the stream but this event.',
  payload: z.strictObject({}),
  example: {},
})

/** Every published version, oldest first; the JSON Schemas are generated from this list. */
export const organizationEventDefinitions = [
  organizationCreatedV1,
  organizationMemberInvitedV1,
  organizationInvitationRevokedV1,
  organizationMemberJoinedV1,
  organizationMemberRoleChangedV1,
  organizationMemberRemovedV1,
  organizationDeletedV1,
] as const

/** The latest version of each organization event type: what readers see after upcasting. */
export const organizationEventSchema = z.discriminatedUnion('type', [
  organizationCreatedV1.schema,
  organizationMemberInvitedV1.schema,
  organizationInvitationRevokedV1.schema,
  organizationMemberJoinedV1.schema,
  organizationMemberRoleChangedV1.schema,
  organizationMemberRemovedV1.schema,
  organizationDeletedV1.schema,
])
