import { describe, expect, it } from 'vitest'
import { mayManage, rolesGrantableBy } from './roles.ts'

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
})
