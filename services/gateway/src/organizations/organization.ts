import { keepsAnOwner, mayManage } from '@cas/auth'
import {
  type NewEvent,
  newEvent,
  type OrganizationEvent,
  type OrganizationEventType,
  type OrganizationRole,
} from '@cas/events'

export interface Member {
  readonly email: string
  readonly role: OrganizationRole
}

export interface PendingInvitation {
  readonly email: string
  readonly role: OrganizationRole
  /** ISO 8601 UTC. */
  readonly expiresAt: string
  /** Who sent it (null when not known: the inviter's account deleted). */
  readonly invitedBy: string | null
}

/** An organization's members and pending invitations, as its events (or the tables they fill) leave them. */
export interface OrganizationState {
  readonly status: 'absent' | 'active' | 'deleted'
  readonly name: string
  readonly members: ReadonlyMap<string, Member>
  readonly invitations: ReadonlyMap<string, PendingInvitation>
}

export const initialOrganizationState: OrganizationState = {
  status: 'absent',
  name: '',
  members: new Map(),
  invitations: new Map(),
}

/** The signed-in person issuing a command; their role is the state's, not what their session said. */
export interface Actor {
  readonly userId: string
}

export type OrganizationCommand =
  | { readonly type: 'create'; readonly name: string; readonly founder: Actor & { readonly email: string } }
  | {
      readonly type: 'invite'
      readonly actor: Actor
      readonly invitationId: string
      readonly email: string
      readonly role: OrganizationRole
      readonly expiresAt: string
    }
  | { readonly type: 'revoke-invitation'; readonly actor: Actor; readonly invitationId: string }
  | {
      readonly type: 'accept-invitation'
      readonly invitationId: string
      readonly person: Actor & { readonly email: string }
    }
  | {
      readonly type: 'change-role'
      readonly actor: Actor
      readonly userId: string
      readonly role: OrganizationRole
    }
  | { readonly type: 'remove-member'; readonly actor: Actor; readonly userId: string }
  | { readonly type: 'leave'; readonly actor: Actor }
  | { readonly type: 'delete'; readonly actor: Actor }

export type Refusal =
  | 'not_found'
  | 'not_a_member'
  | 'owners_only'
  | 'already_exists'
  | 'already_member'
  | 'already_invited'
  | 'invitation_expired'
  | 'wrong_person'
  | 'last_owner'

export type Decision =
  | { readonly ok: true; readonly events: readonly NewEvent<OrganizationEventType>[] }
  | { readonly ok: false; readonly reason: Refusal }

const refuse = (reason: Refusal): Decision => ({ ok: false, reason })

/**
 * The pending invitations a person sent that they could no longer send with `role` (undefined: they are
 * no longer a member): revoked with the change, so that a removed or demoted admin's invitation does not
 * bring someone in with the rights its sender lost.
 */
function invitationsOutliving(
  state: OrganizationState,
  userId: string,
  role: OrganizationRole | undefined,
): NewEvent<OrganizationEventType>[] {
  return [...state.invitations]
    .filter(([, i]) => i.invitedBy === userId && (role === undefined || !mayManage(role, i.role)))
    .map(([invitationId, i]) => newEvent('organization.invitation-revoked', { invitationId, email: i.email }))
}

/**
 * Decides the events of a command on an organization at `now`. Routes have already checked the coarse
 * permission of the actor's role (libs/auth permissions); this decides against the current state what
 * depends on it: only owners act on owners or grant the owner role, an organization always keeps an
 * owner, an invitation is used once, before it expires, by the person it names.
 */
export function decide(command: OrganizationCommand, state: OrganizationState, now: Date): Decision {
  if (command.type === 'create') {
    if (state.status !== 'absent') return refuse('already_exists')
    const { userId, email } = command.founder
    return {
      ok: true,
      events: [
        newEvent('organization.created', { name: command.name }),
        newEvent('organization.member-joined', { userId, email, role: 'owner', invitationId: null }),
      ],
    }
  }
  if (state.status !== 'active') return refuse('not_found')

  if (command.type === 'accept-invitation') {
    const invitation = state.invitations.get(command.invitationId)
    if (!invitation) return refuse('not_found')
    if (Date.parse(invitation.expiresAt) <= now.getTime()) return refuse('invitation_expired')
    if (invitation.email !== command.person.email) return refuse('wrong_person')
    if (state.members.has(command.person.userId)) return refuse('already_member')
    return {
      ok: true,
      events: [
        newEvent('organization.member-joined', {
          userId: command.person.userId,
          email: command.person.email,
          role: invitation.role,
          invitationId: command.invitationId,
        }),
      ],
    }
  }

  const actor = state.members.get(command.actor.userId)
  if (!actor) return refuse('not_a_member')
  const owners = [...state.members.values()].filter((m) => m.role === 'owner').length

  switch (command.type) {
    case 'invite': {
      if (!mayManage(actor.role, command.role)) return refuse('owners_only')
      for (const member of state.members.values()) {
        if (member.email === command.email) return refuse('already_member')
      }
      for (const pending of state.invitations.values()) {
        if (pending.email === command.email && Date.parse(pending.expiresAt) > now.getTime()) {
          return refuse('already_invited')
        }
      }
      const { invitationId, email, role, expiresAt } = command
      return {
        ok: true,
        events: [newEvent('organization.member-invited', { invitationId, email, role, expiresAt })],
      }
    }
    case 'revoke-invitation': {
      const invitation = state.invitations.get(command.invitationId)
      if (!invitation) return refuse('not_found')
      if (!mayManage(actor.role, invitation.role)) return refuse('owners_only')
      return {
        ok: true,
        events: [
          newEvent('organization.invitation-revoked', {
            invitationId: command.invitationId,
            email: invitation.email,
          }),
        ],
      }
    }
    case 'change-role': {
      const target = state.members.get(command.userId)
      if (!target) return refuse('not_found')
      if (!mayManage(actor.role, target.role) || !mayManage(actor.role, command.role))
        return refuse('owners_only')
      if (target.role === command.role) return { ok: true, events: [] }
      if (!keepsAnOwner(target.role, owners - 1)) return refuse('last_owner')
      return {
        ok: true,
        events: [
          newEvent('organization.member-role-changed', {
            userId: command.userId,
            email: target.email,
            role: command.role,
            previousRole: target.role,
          }),
          ...invitationsOutliving(state, command.userId, command.role),
        ],
      }
    }
    case 'remove-member':
    case 'leave': {
      const userId = command.type === 'leave' ? command.actor.userId : command.userId
      const target = state.members.get(userId)
      if (!target) return refuse('not_found')
      if (command.type === 'remove-member' && !mayManage(actor.role, target.role))
        return refuse('owners_only')
      if (!keepsAnOwner(target.role, owners - 1)) return refuse('last_owner')
      const reason = userId === command.actor.userId ? 'left' : 'removed'
      return {
        ok: true,
        events: [
          newEvent('organization.member-removed', { userId, email: target.email, role: target.role, reason }),
          ...invitationsOutliving(state, userId, undefined),
        ],
      }
    }
    case 'delete':
      if (actor.role !== 'owner') return refuse('owners_only')
      return { ok: true, events: [newEvent('organization.deleted', {})] }
    default: {
      const unhandled: never = command
      throw new Error(`unhandled organization command ${JSON.stringify(unhandled)}`)
    }
  }
}

/** Folds one event into the state. */
export function evolve(state: OrganizationState, event: OrganizationEvent): OrganizationState {
  switch (event.type) {
    case 'organization.created':
      return { ...initialOrganizationState, status: 'active', name: event.payload.name }
    case 'organization.member-invited': {
      const { invitationId, email, role, expiresAt } = event.payload
      const invitedBy = event.metadata.actorId ?? null
      return {
        ...state,
        invitations: new Map(state.invitations).set(invitationId, { email, role, expiresAt, invitedBy }),
      }
    }
    case 'organization.invitation-revoked':
      return { ...state, invitations: without(state.invitations, event.payload.invitationId) }
    case 'organization.member-joined': {
      const { userId, email, role, invitationId } = event.payload
      return {
        ...state,
        members: new Map(state.members).set(userId, { email, role }),
        invitations: invitationId === null ? state.invitations : without(state.invitations, invitationId),
      }
    }
    case 'organization.member-role-changed': {
      const { userId, email, role } = event.payload
      return { ...state, members: new Map(state.members).set(userId, { email, role }) }
    }
    case 'organization.member-removed':
      return { ...state, members: without(state.members, event.payload.userId) }
    case 'organization.deleted':
      return { ...initialOrganizationState, status: 'deleted', name: state.name }
    default: {
      const unhandled: never = event
      throw new Error(`unhandled organization event ${JSON.stringify(unhandled)}`)
    }
  }
}

function without<Value>(map: ReadonlyMap<string, Value>, key: string): ReadonlyMap<string, Value> {
  const copy = new Map(map)
  copy.delete(key)
  return copy
}
