import type { OrganizationRole } from '@cas/events'

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
  /** Rename and change settings. */
  'chatbots:edit': ['owner', 'admin', 'member'],
  /** Creating a chatbot shows its key, so it goes with the keys. */
  'chatbots:create': ['owner', 'admin'],
  'chatbots:rotate-key': ['owner', 'admin'],
  'chatbots:delete': ['owner', 'admin'],
  'end-users:erase': ['owner', 'admin'],
  /** Rename, hide, unhide and merge a chatbot's topics. */
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
