// Without zod or Node: the dashboard imports this file (@cas/auth/permissions).
import { type OrganizationRole, organizationRoles } from '@cas/events/roles'

/**
 * What each role may do in its organization: the permission matrix of docs/api.md, enforced on the server
 * by requirePermission for every session route (403 `forbidden` for a role without the permission). Who
 * may act on owners (invite one, change or remove one) is decided by the organization's decider: only
 * owners, and never so as to leave the organization without one.
 */
export const PERMISSIONS = {
  'conversations:read': ['owner', 'admin', 'member', 'viewer'],
  /** Analytics, topics, and how current the figures are (GET /api/v1/status). */
  'analytics:read': ['owner', 'admin', 'member', 'viewer'],
  'chatbots:read': ['owner', 'admin', 'member'],
  /** Rename and change settings (but those of topics:manage and chatbots:govern below). */
  'chatbots:edit': ['owner', 'admin', 'member'],
  /**
   * The settings that stop or erase a chatbot's data: `analysisEnabled` (off, nothing captured is analysed)
   * and `retentionDays` (the retention job erases older conversations, as end-users:erase does one person's).
   * PATCH /api/v1/chatbots/{id} checks this on top of chatbots:edit.
   */
  'chatbots:govern': ['owner', 'admin'],
  /** Creating a chatbot shows its key, so it goes with the keys. */
  'chatbots:create': ['owner', 'admin'],
  'chatbots:rotate-key': ['owner', 'admin'],
  'chatbots:delete': ['owner', 'admin'],
  'end-users:erase': ['owner', 'admin'],
  /**
   * Rename, hide, unhide, merge and create a chatbot's topics, re-analyse it, and change its own topics and
   * signals (settings.topics, settings.signals: PATCH /api/v1/chatbots/{id} checks this on top of chatbots:edit).
   */
  'topics:manage': ['owner', 'admin'],
  'members:read': ['owner', 'admin', 'member'],
  /** Invite, list and revoke invitations, change roles, remove members (owners: see above). */
  'members:manage': ['owner', 'admin'],
  'audit:read': ['owner', 'admin'],
  /** Anyone may leave (but the last owner, which the decider refuses). */
  'organization:leave': ['owner', 'admin', 'member', 'viewer'],
  'organization:delete': ['owner'],
} as const satisfies Record<string, readonly OrganizationRole[]>

export type Permission = keyof typeof PERMISSIONS

export function can(role: OrganizationRole, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly OrganizationRole[]).includes(role)
}

/** Every permission of a role, for the dashboard to show only what may be used (the server still decides). */
export function permissionsOf(role: OrganizationRole): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((permission) => can(role, permission))
}

/** The roles, from most to least powerful. */
export const ROLES: readonly OrganizationRole[] = organizationRoles

/**
 * The owner rules, on top of the permissions: only owners act on owners (invite one, give or take the
 * owner role, remove one, revoke an owner's invitation). The organization's decider enforces them; the
 * dashboard offers only what they allow.
 */
export function mayActOnRole(actor: OrganizationRole, role: OrganizationRole): boolean {
  return actor === 'owner' || role !== 'owner'
}

/**
 * Whether the organization keeps an owner once a person of `role` leaves, is removed or loses the owner
 * role, `otherOwners` being the owners besides that person.
 */
export function keepsAnOwner(role: OrganizationRole, otherOwners: number): boolean {
  return role !== 'owner' || otherOwners > 0
}

/** The roles someone may give: those they may act on, when they may manage members at all. */
export function rolesGrantableBy(role: OrganizationRole): OrganizationRole[] {
  return can(role, 'members:manage') ? ROLES.filter((r) => mayActOnRole(role, r)) : []
}

/** Whether someone may change, remove or revoke the invitation of a person with `target`'s role. */
export function mayManage(actor: OrganizationRole, target: OrganizationRole): boolean {
  return can(actor, 'members:manage') && mayActOnRole(actor, target)
}
