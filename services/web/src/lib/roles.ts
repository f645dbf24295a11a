import type { Member, Role } from '../api/types.ts'

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer']

/** What each role may do, in a sentence (docs/api.md's permission matrix). */
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

/**
 * Whether the person may leave: not an owner no other owner would outlast (the server refuses the last
 * owner). Undefined while an owner's fellow owners are not known yet.
 */
export function mayLeave(
  role: Role,
  userId: string,
  members: readonly Member[] | undefined,
): boolean | undefined {
  if (role !== 'owner') return true
  if (!members) return undefined
  return members.some((m) => m.role === 'owner' && m.userId !== userId)
}
