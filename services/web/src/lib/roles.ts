import { keepsAnOwner, mayManage, ROLES, rolesGrantableBy } from '@cas/auth/permissions'
import type { Member, Role } from '../api/types.ts'

// The owner rules are libs/auth's (the organization's decider enforces them): the dashboard offers only
// what they allow.
export { mayManage, ROLES, rolesGrantableBy }

/** What each role may do, in a sentence (docs/api.md's permission matrix). */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  owner: 'everything, including members, roles and deleting the organization',
  admin: 'members other than owners, chatbots, keys, settings, deletions and erasures',
  member: 'reads everything, renames chatbots and changes their settings',
  viewer: 'reads conversations and analytics only',
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
  return keepsAnOwner(role, members.filter((m) => m.role === 'owner' && m.userId !== userId).length)
}
