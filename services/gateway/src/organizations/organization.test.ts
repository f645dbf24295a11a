import { type NewEvent, NO_CHATBOT_ID, type OrganizationEvent, type OrganizationEventType } from '@cas/events'
import { describe, expect, it } from 'vitest'
import {
  decide,
  evolve,
  initialOrganizationState,
  type OrganizationCommand,
  type OrganizationState,
} from './organization.ts'

const ORG = '0194a1b0-1c2d-7e3f-a4b5-c6d7e8f9a0b1'
const NOW = new Date('2030-01-01T00:00:00Z')
const LATER = '2030-01-08T00:00:00.000Z'
const ids = {
  ann: '00000000-0000-4000-8000-00000000000a',
  bob: '00000000-0000-4000-8000-00000000000b',
  cat: '00000000-0000-4000-8000-00000000000c',
  dan: '00000000-0000-4000-8000-00000000000d',
  invitation: '00000000-0000-4000-8000-0000000000f1',
}

/** Recorded events from decided ones, as the journal would append them (with who asked, as routes do). */
function recorded(events: readonly NewEvent<OrganizationEventType>[], actorId?: string): OrganizationEvent[] {
  return events.map(
    (e, i) =>
      ({
        ...e,
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        occurredAt: NOW.toISOString(),
        orgId: ORG,
        chatbotId: NO_CHATBOT_ID,
        streamId: ORG,
        streamVersion: i + 1,
        position: String(i + 1),
        metadata: actorId === undefined ? {} : { actorId },
      }) as OrganizationEvent,
  )
}

/** given(commands…): the state after each command, decided in turn, has been applied. */
function given(...commands: OrganizationCommand[]) {
  let state: OrganizationState = initialOrganizationState
  for (const command of commands) {
    const decision = decide(command, state, NOW)
    if (!decision.ok) throw new Error(`given ${command.type} was refused: ${decision.reason}`)
    state = recorded(decision.events, 'actor' in command ? command.actor.userId : undefined).reduce(
      evolve,
      state,
    )
  }
  return {
    state,
    when: (command: OrganizationCommand, at: Date = NOW) => {
      const decision = decide(command, state, at)
      return {
        thenEvents: (expected: unknown[]) => {
          expect(decision.ok, JSON.stringify(decision)).toBe(true)
          if (decision.ok)
            expect(decision.events.map((e) => ({ type: e.type, ...e.payload }))).toEqual(expected)
        },
        refused: (reason: string) => expect(decision).toEqual({ ok: false, reason }),
      }
    },
  }
}

const create: OrganizationCommand = {
  type: 'create',
  name: 'Acme',
  founder: { userId: ids.ann, email: 'ann@example.com' },
}
const invite = (
  email: string,
  role: 'owner' | 'admin' | 'member' | 'viewer',
  by = ids.ann,
  id = ids.invitation,
) => ({ type: 'invite', actor: { userId: by }, invitationId: id, email, role, expiresAt: LATER }) as const
const accept = (userId: string, email: string, id = ids.invitation) =>
  ({ type: 'accept-invitation', invitationId: id, person: { userId, email } }) as const
/** Acme: Ann owns it, Bob is an admin, Cat a member. */
const team: OrganizationCommand[] = [
  create,
  invite('bob@example.com', 'admin', ids.ann, ids.bob),
  accept(ids.bob, 'bob@example.com', ids.bob),
  invite('cat@example.com', 'member', ids.ann, ids.cat),
  accept(ids.cat, 'cat@example.com', ids.cat),
]

describe('the organization decider', () => {
  it('creates an organization with its founder as owner', () => {
    given()
      .when(create)
      .thenEvents([
        { type: 'organization.created', name: 'Acme' },
        {
          type: 'organization.member-joined',
          userId: ids.ann,
          email: 'ann@example.com',
          role: 'owner',
          invitationId: null,
        },
      ])
    given(create).when(create).refused('already_exists')
  })

  describe('invitations', () => {
    it('are made by owners and admins with any role but owner, which only owners give', () => {
      given(...team)
        .when(invite('dan@example.com', 'viewer', ids.bob))
        .thenEvents([
          {
            type: 'organization.member-invited',
            invitationId: ids.invitation,
            email: 'dan@example.com',
            role: 'viewer',
            expiresAt: LATER,
          },
        ])
      given(...team)
        .when(invite('dan@example.com', 'owner', ids.bob))
        .refused('owners_only')
      given(...team)
        .when(invite('dan@example.com', 'owner', ids.ann))
        .thenEvents([expect.objectContaining({ type: 'organization.member-invited', role: 'owner' })])
    })

    it('are refused for a member, or while the email has one pending, but not once that one expired', () => {
      given(...team)
        .when(invite('cat@example.com', 'viewer'))
        .refused('already_member')
      given(...team, invite('dan@example.com', 'viewer'))
        .when(invite('dan@example.com', 'member', ids.ann, ids.dan))
        .refused('already_invited')
      given(...team, invite('dan@example.com', 'viewer'))
        .when(invite('dan@example.com', 'member', ids.ann, ids.dan), new Date(LATER))
        .thenEvents([expect.objectContaining({ type: 'organization.member-invited', role: 'member' })])
    })

    it('are accepted once, by the person they name, before they expire, with their role', () => {
      const pending = given(...team, invite('dan@example.com', 'viewer'))
      pending.when(accept(ids.dan, 'dan@example.com')).thenEvents([
        {
          type: 'organization.member-joined',
          userId: ids.dan,
          email: 'dan@example.com',
          role: 'viewer',
          invitationId: ids.invitation,
        },
      ])
      pending.when(accept(ids.dan, 'eve@example.com')).refused('wrong_person')
      pending.when(accept(ids.dan, 'dan@example.com'), new Date(LATER)).refused('invitation_expired')
      given(...team, invite('dan@example.com', 'viewer'), accept(ids.dan, 'dan@example.com'))
        .when(accept(ids.dan, 'dan@example.com'))
        .refused('not_found')
    })

    it('are revoked by owners and admins (an owner invitation by owners only), and are gone then', () => {
      given(...team, invite('dan@example.com', 'member'))
        .when({ type: 'revoke-invitation', actor: { userId: ids.bob }, invitationId: ids.invitation })
        .thenEvents([
          { type: 'organization.invitation-revoked', invitationId: ids.invitation, email: 'dan@example.com' },
        ])
      given(...team, invite('dan@example.com', 'owner'))
        .when({ type: 'revoke-invitation', actor: { userId: ids.bob }, invitationId: ids.invitation })
        .refused('owners_only')
      given(...team, invite('dan@example.com', 'member'), {
        type: 'revoke-invitation',
        actor: { userId: ids.ann },
        invitationId: ids.invitation,
      })
        .when(accept(ids.dan, 'dan@example.com'))
        .refused('not_found')
    })
  })

  describe("an inviter's invitations", () => {
    // Bob (admin) invited Dan as an admin and Eve as a viewer; Ann (owner) invited Fay as a member.
    const eve = '00000000-0000-4000-8000-0000000000e1'
    const fay = '00000000-0000-4000-8000-0000000000e2'
    const pending = [
      ...team,
      invite('dan@example.com', 'admin', ids.bob),
      invite('eve@example.com', 'viewer', ids.bob, eve),
      invite('fay@example.com', 'member', ids.ann, fay),
    ]
    const revoked = (invitationId: string, email: string) => ({
      type: 'organization.invitation-revoked',
      invitationId,
      email,
    })

    it('are revoked with the removal of the person who sent them, and only theirs', () => {
      given(...pending)
        .when({ type: 'remove-member', actor: { userId: ids.ann }, userId: ids.bob })
        .thenEvents([
          {
            type: 'organization.member-removed',
            userId: ids.bob,
            email: 'bob@example.com',
            role: 'admin',
            reason: 'removed',
          },
          revoked(ids.invitation, 'dan@example.com'),
          revoked(eve, 'eve@example.com'),
        ])
      given(...pending)
        .when({ type: 'leave', actor: { userId: ids.bob } })
        .thenEvents([
          {
            type: 'organization.member-removed',
            userId: ids.bob,
            email: 'bob@example.com',
            role: 'admin',
            reason: 'left',
          },
          revoked(ids.invitation, 'dan@example.com'),
          revoked(eve, 'eve@example.com'),
        ])
    })

    it('are revoked when their sender is demoted to a role that could not send them', () => {
      given(...pending)
        .when({ type: 'change-role', actor: { userId: ids.ann }, userId: ids.bob, role: 'member' })
        .thenEvents([
          {
            type: 'organization.member-role-changed',
            userId: ids.bob,
            email: 'bob@example.com',
            role: 'member',
            previousRole: 'admin',
          },
          revoked(ids.invitation, 'dan@example.com'),
          revoked(eve, 'eve@example.com'),
        ])
      // An owner made admin keeps the invitations an admin could send, and loses an owner invitation.
      const gus = '00000000-0000-4000-8000-0000000000e3'
      const hal = '00000000-0000-4000-8000-0000000000e4'
      given(
        ...pending,
        invite('gus@example.com', 'owner', ids.ann, gus),
        accept(gus, 'gus@example.com', gus),
        invite('hal@example.com', 'owner', gus, hal),
        invite('ivy@example.com', 'admin', gus, ids.dan),
      )
        .when({ type: 'change-role', actor: { userId: ids.ann }, userId: gus, role: 'admin' })
        .thenEvents([
          {
            type: 'organization.member-role-changed',
            userId: gus,
            email: 'gus@example.com',
            role: 'admin',
            previousRole: 'owner',
          },
          revoked(hal, 'hal@example.com'),
        ])
    })

    it('cannot be accepted once revoked so', () => {
      given(...pending, { type: 'remove-member', actor: { userId: ids.ann }, userId: ids.bob })
        .when(accept(ids.dan, 'dan@example.com'))
        .refused('not_found')
      given(...pending, { type: 'remove-member', actor: { userId: ids.ann }, userId: ids.bob })
        .when(accept(fay, 'fay@example.com', fay))
        .thenEvents([
          {
            type: 'organization.member-joined',
            userId: fay,
            email: 'fay@example.com',
            role: 'member',
            invitationId: fay,
          },
        ])
    })
  })

  describe('roles', () => {
    it('are changed by admins for non-owners, by owners for anyone; unchanged changes nothing', () => {
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.bob }, userId: ids.cat, role: 'viewer' })
        .thenEvents([
          {
            type: 'organization.member-role-changed',
            userId: ids.cat,
            email: 'cat@example.com',
            role: 'viewer',
            previousRole: 'member',
          },
        ])
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.bob }, userId: ids.ann, role: 'admin' })
        .refused('owners_only')
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.bob }, userId: ids.cat, role: 'owner' })
        .refused('owners_only')
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.ann }, userId: ids.cat, role: 'owner' })
        .thenEvents([expect.objectContaining({ role: 'owner', previousRole: 'member' })])
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.ann }, userId: ids.cat, role: 'member' })
        .thenEvents([])
    })

    it('never leave the organization without an owner', () => {
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.ann }, userId: ids.ann, role: 'admin' })
        .refused('last_owner')
      const twoOwners = [
        ...team,
        { type: 'change-role', actor: { userId: ids.ann }, userId: ids.bob, role: 'owner' },
      ] as const
      given(...twoOwners)
        .when({ type: 'change-role', actor: { userId: ids.bob }, userId: ids.ann, role: 'member' })
        .thenEvents([expect.objectContaining({ userId: ids.ann, role: 'member', previousRole: 'owner' })])
    })

    it('are only changed for members, by members', () => {
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.ann }, userId: ids.dan, role: 'viewer' })
        .refused('not_found')
      given(...team)
        .when({ type: 'change-role', actor: { userId: ids.dan }, userId: ids.cat, role: 'viewer' })
        .refused('not_a_member')
    })
  })

  describe('removing and leaving', () => {
    it('removes non-owners by admins and owners by owners only', () => {
      given(...team)
        .when({ type: 'remove-member', actor: { userId: ids.bob }, userId: ids.cat })
        .thenEvents([
          {
            type: 'organization.member-removed',
            userId: ids.cat,
            email: 'cat@example.com',
            role: 'member',
            reason: 'removed',
          },
        ])
      given(...team)
        .when({ type: 'remove-member', actor: { userId: ids.bob }, userId: ids.ann })
        .refused('owners_only')
    })

    it('lets anyone leave but the last owner', () => {
      given(...team)
        .when({ type: 'leave', actor: { userId: ids.cat } })
        .thenEvents([expect.objectContaining({ userId: ids.cat, role: 'member', reason: 'left' })])
      given(...team)
        .when({ type: 'leave', actor: { userId: ids.ann } })
        .refused('last_owner')
      given(...team)
        .when({ type: 'remove-member', actor: { userId: ids.ann }, userId: ids.ann })
        .refused('last_owner')
    })

    it('takes a removed member out: they can no longer act', () => {
      given(...team, { type: 'remove-member', actor: { userId: ids.ann }, userId: ids.bob })
        .when(invite('dan@example.com', 'viewer', ids.bob))
        .refused('not_a_member')
    })
  })

  it('is deleted by an owner only, and then takes no command', () => {
    given(...team)
      .when({ type: 'delete', actor: { userId: ids.bob } })
      .refused('owners_only')
    given(...team)
      .when({ type: 'delete', actor: { userId: ids.ann } })
      .thenEvents([{ type: 'organization.deleted' }])
    given(...team, { type: 'delete', actor: { userId: ids.ann } })
      .when(invite('dan@example.com', 'viewer'))
      .refused('not_found')
  })
})
