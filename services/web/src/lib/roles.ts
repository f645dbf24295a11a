import type { Role } from '../api/types.ts'

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer']

/** What each role may do, in a sentence (the README's permission matrix). */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  owner: 'everything, including members, roles and deleting the organization',
  admin: 'members other than owners, chatbots, keys, settings, deletions and erasures',
  member: 'reads everything, renames chatbots and changes their settings',
  viewer: 'reads conversations and analytics only',
}

/** The roles someone may give: owners any, admins any but owner, others none. */
export function rolesGrantableBy(role: Role): Role[] {
  if (role === 'owner') return [...ROLES]
  if (role === 'admin') return ROLES.filter((r) => r !== 'owner')
  return []
}

/** Whether someone may change, remove or revoke the invitation of a person with `target`'s role. */
export function mayManage(actor: Role, target: Role): boolean {
  return actor === 'owner' || (actor === 'admin' && target !== 'owner')
}
