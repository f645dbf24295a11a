import { describe, expect, it } from 'vitest'
import {
  expectAccepted,
  expectRejectedAt,
  fixtureIds,
  rawEvent,
  rawEventWithPayload,
} from '../test/support.ts'
import { domainEventSchema } from './domain-event.ts'
import {
  NO_CHATBOT_ID,
  organizationEventDefinitions,
  organizationEventSchema,
  organizationMemberInvitedV1,
  organizationMemberJoinedV1,
  organizationMemberRemovedV1,
  organizationMemberRoleChangedV1,
} from './organization-events.ts'

describe('organization events', () => {
  it.each(organizationEventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s accepts its example, keyed by the organization id',
    (_, definition) => {
      const raw = rawEvent(definition)
      expect(raw).toMatchObject({ streamId: fixtureIds.org, chatbotId: NO_CHATBOT_ID })
      expectAccepted(definition.schema, raw)
      expectAccepted(organizationEventSchema, raw)
      expectAccepted(domainEventSchema, raw)
    },
  )

  it.each(organizationEventDefinitions.map((definition) => [definition.type, definition] as const))(
    '%s belongs to no chatbot: any chatbotId but the nil UUID is refused',
    (_, definition) => {
      expectRejectedAt(
        definition.schema,
        rawEvent(definition, { chatbotId: fixtureIds.chatbot }),
        'chatbotId',
      )
    },
  )

  it('never carries the invitation token, its hash or a password', () => {
    for (const field of ['token', 'tokenHash', 'link', 'password', 'passwordHash']) {
      const result = organizationMemberInvitedV1.schema.safeParse(
        rawEventWithPayload(organizationMemberInvitedV1, { [field]: 'secret' }),
      )
      expect(result.success).toBe(false)
      expect(result.error?.issues).toContainEqual(
        expect.objectContaining({ code: 'unrecognized_keys', keys: [field], path: ['payload'] }),
      )
    }
    const joined = organizationMemberJoinedV1.schema.safeParse(
      rawEventWithPayload(organizationMemberJoinedV1, { password: 'correct horse battery staple' }),
    )
    expect(joined.success).toBe(false)
  })

  it('knows only the four roles', () => {
    expectRejectedAt(
      organizationMemberRoleChangedV1.schema,
      rawEventWithPayload(organizationMemberRoleChangedV1, { role: 'superuser' }),
      'payload.role',
    )
    expectRejectedAt(
      organizationMemberInvitedV1.schema,
      rawEventWithPayload(organizationMemberInvitedV1, { role: 'Owner' }),
      'payload.role',
    )
  })

  it('says whether a member left or was removed', () => {
    expectAccepted(
      organizationMemberRemovedV1.schema,
      rawEventWithPayload(organizationMemberRemovedV1, { reason: 'left' }),
    )
    expectRejectedAt(
      organizationMemberRemovedV1.schema,
      rawEventWithPayload(organizationMemberRemovedV1, { reason: 'fired' }),
      'payload.reason',
    )
  })

  it("records a founder's joining without an invitation", () => {
    expectAccepted(
      organizationMemberJoinedV1.schema,
      rawEventWithPayload(organizationMemberJoinedV1, { role: 'owner', invitationId: null }),
    )
  })
})
