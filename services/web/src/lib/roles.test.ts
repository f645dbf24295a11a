import { describe, expect, it } from 'vitest'
import type { Member, Role } from '../api/types.ts'
import { mayLeave, mayManage, rolesGrantableBy } from './roles.ts'

const member = (userId: string, role: Role): Member => ({
  userId,
  role,
  email: `${userId}@example.com`,
  name: userId,
  joinedAt: '2026-11-01T00:00:00Z',
})

describe('roles in the dashboard', () => {
  it('offers owners every role, admins all but owner, and others none', () => {
    expect(rolesGrantableBy('owner')).toEqual(['owner', 'admin', 'member', 'viewer'])
    expect(rolesGrantableBy('admin')).toEqual(['admin', 'member', 'viewer'])
    expect(rolesGrantableBy('member')).toEqual([])
    expect(rolesGrantableBy('viewer')).toEqual([])
  })

  it('lets admins act on anyone but owners, and owners on anyone', () => {
    expect(mayManage('owner', 'owner')).toBe(true)
    expect(mayManage('admin', 'owner')).toBe(false)
    expect(mayManage('admin', 'admin')).toBe(true)
    expect(mayManage('member', 'viewer')).toBe(false)
  })

  it('offers Leave to anyone but the last owner', () => {
    // Regression: the last owner was offered Leave, which the server always refuses.
    const team = [member('ann', 'owner'), member('bob', 'admin'), member('cy', 'viewer')]
    expect(mayLeave('owner', 'ann', team)).toBe(false)
    expect(mayLeave('owner', 'ann', [...team, member('dee', 'owner')])).toBe(true)
    expect(mayLeave('admin', 'bob', team)).toBe(true)
    expect(mayLeave('viewer', 'cy', undefined)).toBe(true)
    expect(mayLeave('owner', 'ann', undefined)).toBeUndefined()
  })
})
