import { describe, expect, it } from 'vitest'
import { homeFor, isPublic, matchRoute, paths, requiredPermission, safeNext } from './routes.ts'

describe('matchRoute', () => {
  it('names each page and its id', () => {
    expect(matchRoute('/')).toEqual({ name: 'home' })
    expect(matchRoute('/login')).toEqual({ name: 'signIn' })
    expect(matchRoute('/chatbots/')).toEqual({ name: 'chatbots' })
    expect(matchRoute('/chatbots/abc-1')).toEqual({ name: 'chatbot', id: 'abc-1' })
    expect(matchRoute('/conversations/a%20b')).toEqual({ name: 'conversation', id: 'a b' })
    expect(matchRoute('/analytics')).toEqual({ name: 'analytics' })
    expect(matchRoute('/members')).toEqual({ name: 'members' })
    expect(matchRoute('/audit')).toEqual({ name: 'audit' })
    expect(matchRoute('/join')).toEqual({ name: 'join' })
    expect(matchRoute('/topics')).toEqual({ name: 'topics' })
  })

  it('sends anything else, including malformed escapes, to not found', () => {
    expect(matchRoute('/chatbots/a/b')).toEqual({ name: 'notFound' })
    expect(matchRoute('/chatbots/%E0%A4%A')).toEqual({ name: 'notFound' })
    expect(matchRoute('/settings')).toEqual({ name: 'notFound' })
  })

  it('lets only the sign-in pages be seen signed out', () => {
    expect(isPublic(matchRoute('/login'))).toBe(true)
    expect(isPublic(matchRoute('/signup'))).toBe(true)
    expect(isPublic(matchRoute('/chatbots'))).toBe(false)
    expect(isPublic(matchRoute('/nope'))).toBe(false)
  })
})

describe('pages by role', () => {
  const viewer = ['conversations:read', 'analytics:read', 'organization:leave'] as const
  const member = [...viewer, 'chatbots:read', 'chatbots:edit', 'members:read'] as const

  it('names the permission each page needs', () => {
    expect(requiredPermission(matchRoute('/chatbots/x'))).toBe('chatbots:read')
    expect(requiredPermission(matchRoute('/conversations'))).toBe('conversations:read')
    expect(requiredPermission(matchRoute('/audit'))).toBe('audit:read')
    expect(requiredPermission(matchRoute('/members'))).toBeUndefined()
  })

  it('sends a viewer home to the conversations, everyone else to the chatbots', () => {
    expect(homeFor(viewer)).toBe('/conversations')
    expect(homeFor(member)).toBe('/chatbots')
  })
})

describe('after signing in', () => {
  it('returns to the page asked for, within this site only', () => {
    expect(safeNext(`?next=${encodeURIComponent('/conversations?q=refund')}`)).toBe('/conversations?q=refund')
    for (const evil of [
      '//evil.example',
      'https://evil.example',
      '/\\evil.example',
      'javascript:alert(1)',
      '',
    ]) {
      expect(safeNext(`?next=${encodeURIComponent(evil)}`), evil).toBe('/')
    }
    expect(safeNext('')).toBe('/')
  })

  it('carries the page asked for through the sign-in link', () => {
    expect(paths.signIn('/analytics?range=7')).toBe('/login?next=%2Fanalytics%3Frange%3D7')
    expect(paths.signIn('/')).toBe('/login')
  })
})
