import type { OrganizationEvent, OrganizationRole } from '@cas/events'
import type pg from 'pg'
import {
  initialOrganizationState,
  type Member,
  type OrganizationState,
  type PendingInvitation,
} from './organization.ts'

/**
 * Loads an organization's state from the tables its events keep (organizations, memberships, invitations)
 * and locks its row for the rest of the transaction, so that commands on one organization take turns:
 * two owners demoting each other at once cannot both succeed and leave it without an owner.
 * Organizations from before member events existed have no events to replay, but their rows are complete.
 */
export async function loadOrganizationForUpdate(
  client: pg.ClientBase,
  orgId: string,
): Promise<OrganizationState> {
  const { rows: orgs } = await client.query<{ name: string }>(
    'SELECT name FROM organizations WHERE id = $1 FOR UPDATE',
    [orgId],
  )
  const org = orgs[0]
  if (!org) return initialOrganizationState
  const { rows: members } = await client.query<{ user_id: string; email: string; role: OrganizationRole }>(
    `SELECT m.user_id, u.email, m.role FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = $1`,
    [orgId],
  )
  const { rows: invitations } = await client.query<{
    id: string
    email: string
    role: OrganizationRole
    expires_at: Date
    invited_by: string | null
  }>(
    `SELECT id, email, role, expires_at, invited_by FROM invitations
      WHERE org_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [orgId],
  )
  return {
    status: 'active',
    name: org.name,
    members: new Map<string, Member>(members.map((m) => [m.user_id, { email: m.email, role: m.role }])),
    invitations: new Map<string, PendingInvitation>(
      invitations.map((i) => [
        i.id,
        { email: i.email, role: i.role, expiresAt: i.expires_at.toISOString(), invitedBy: i.invited_by },
      ]),
    ),
  }
}

/** What a table row needs beyond the event: secrets and references that events never carry. */
export interface ProjectionExtras {
  /** SHA-256 of an invitation's secret (member-invited). */
  readonly secretHash?: Buffer
  /** Who did it (the inviter; the person accepting). */
  readonly actorId?: string
}

/**
 * The inline projection of an organization event onto its tables, in the transaction that appends it.
 * Deleting the organization cascades to its memberships, invitations and audit log, and its members'
 * sessions lose it as their current organization (ON DELETE SET NULL).
 */
export async function projectOrganizationEvent(
  client: pg.ClientBase,
  event: OrganizationEvent,
  extras: ProjectionExtras = {},
): Promise<void> {
  const orgId = event.orgId
  switch (event.type) {
    case 'organization.created':
      await client.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [
        orgId,
        event.payload.name,
        event.occurredAt,
      ])
      return
    case 'organization.member-invited': {
      if (!extras.secretHash) throw new Error('an invitation is stored with the hash of its secret')
      const { invitationId, email, role, expiresAt } = event.payload
      await client.query(
        `INSERT INTO invitations (id, org_id, email, role, secret_hash, invited_by, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          invitationId,
          orgId,
          email,
          role,
          extras.secretHash,
          extras.actorId ?? null,
          event.occurredAt,
          expiresAt,
        ],
      )
      return
    }
    case 'organization.invitation-revoked':
      await client.query('UPDATE invitations SET revoked_at = $2 WHERE id = $1', [
        event.payload.invitationId,
        event.occurredAt,
      ])
      return
    case 'organization.member-joined': {
      const { userId, role, invitationId } = event.payload
      await client.query(
        'INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)',
        [orgId, userId, role, event.occurredAt],
      )
      if (invitationId !== null) {
        await client.query('UPDATE invitations SET accepted_at = $2, accepted_by = $3 WHERE id = $1', [
          invitationId,
          event.occurredAt,
          userId,
        ])
      }
      return
    }
    case 'organization.member-role-changed':
      await client.query('UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2', [
        orgId,
        event.payload.userId,
        event.payload.role,
      ])
      return
    case 'organization.member-removed':
      await client.query('DELETE FROM memberships WHERE org_id = $1 AND user_id = $2', [
        orgId,
        event.payload.userId,
      ])
      return
    case 'organization.deleted':
      await client.query('DELETE FROM organizations WHERE id = $1', [orgId])
      return
    default: {
      const unhandled: never = event
      throw new Error(`unhandled organization event ${JSON.stringify(unhandled)}`)
    }
  }
}
