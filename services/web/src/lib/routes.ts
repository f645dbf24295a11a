import type { Permission } from '../api/types.ts'

/** The dashboard's pages and their paths. Pure, so the matching is unit-tested without a browser. */
export type Route =
  | { readonly name: 'signIn' }
  | { readonly name: 'signUp' }
  | { readonly name: 'home' }
  | { readonly name: 'chatbots' }
  | { readonly name: 'chatbot'; readonly id: string }
  | { readonly name: 'conversations' }
  | { readonly name: 'conversation'; readonly id: string }
  | { readonly name: 'topics' }
  | { readonly name: 'analytics' }
  | { readonly name: 'members' }
  | { readonly name: 'audit' }
  /** Accepting an invitation: the link's token is in the fragment (#…), which no server ever sees. */
  | { readonly name: 'join' }
  | { readonly name: 'notFound' }

/** The range an analytics report was counted over, as the API gives it (ISO instants, `to` exclusive). */
export interface ReportRange {
  readonly from: string
  readonly to: string
}

const STATIC: Record<string, Route> = {
  '/': { name: 'home' },
  '/login': { name: 'signIn' },
  '/signup': { name: 'signUp' },
  '/chatbots': { name: 'chatbots' },
  '/conversations': { name: 'conversations' },
  '/topics': { name: 'topics' },
  '/analytics': { name: 'analytics' },
  '/members': { name: 'members' },
  '/audit': { name: 'audit' },
  '/join': { name: 'join' },
}

export function matchRoute(pathname: string): Route {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname
  const fixed = STATIC[path]
  if (fixed) return fixed
  const detail = /^\/(chatbots|conversations)\/([^/]+)$/.exec(path)
  if (detail) {
    let id: string
    try {
      id = decodeURIComponent(detail[2]!)
    } catch {
      return { name: 'notFound' }
    }
    return detail[1] === 'chatbots' ? { name: 'chatbot', id } : { name: 'conversation', id }
  }
  return { name: 'notFound' }
}

/** Pages anyone may see; every other page needs a session. */
export function isPublic(route: Route): boolean {
  return route.name === 'signIn' || route.name === 'signUp'
}

export const paths = {
  signIn: (next?: string) => (next && next !== '/' ? `/login?next=${encodeURIComponent(next)}` : '/login'),
  signUp: () => '/signup',
  chatbots: () => '/chatbots',
  chatbot: (id: string) => `/chatbots/${encodeURIComponent(id)}`,
  conversations: (query?: URLSearchParams) => {
    const qs = query?.toString()
    return qs ? `/conversations?${qs}` : '/conversations'
  },
  conversation: (id: string) => `/conversations/${encodeURIComponent(id)}`,
  topics: (query?: URLSearchParams) => {
    const qs = query?.toString()
    return qs ? `/topics?${qs}` : '/topics'
  },
  analytics: () => '/analytics',
  members: () => '/members',
  audit: () => '/audit',
  home: () => '/',
  /**
   * The conversation list filtered as given (empty values left out), over `range` when given: the exact
   * range a report's figures were counted over, so that the list holds the conversations they counted.
   */
  filteredConversations: (filters: Record<string, string | undefined>, range?: ReportRange): string => {
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(filters)) if (v) search.set(k, v)
    if (range) {
      search.set('since', range.from)
      search.set('until', range.to)
    }
    return paths.conversations(search)
  },
  /** The conversation list filtered by a topic (its id, or `other`), of one chatbot when given. */
  topicConversations: (topic: string, chatbotId?: string, range?: ReportRange): string =>
    paths.filteredConversations({ chatbotId, topic }, range),
  /** The conversation list filtered by a theme (its id), of its chatbot. */
  themeConversations: (theme: string, chatbotId: string, range?: ReportRange): string =>
    paths.filteredConversations({ chatbotId, theme }, range),
}

/**
 * The permission a page needs (libs/auth permissions.ts, mirrored in the account's `permissions`); the
 * server checks every request again. Pages without one are for every member.
 */
export function requiredPermission(route: Route): Permission | undefined {
  switch (route.name) {
    case 'chatbots':
    case 'chatbot':
      return 'chatbots:read'
    case 'conversations':
    case 'conversation':
      return 'conversations:read'
    case 'analytics':
      return 'analytics:read'
    case 'audit':
      return 'audit:read'
    default:
      return undefined
  }
}

/** Where a member lands: the chatbots, or the conversations for a role that may not see chatbots. */
export function homeFor(permissions: readonly Permission[]): string {
  return permissions.includes('chatbots:read') ? paths.chatbots() : paths.conversations()
}

/**
 * Where to go after signing in: the `next` parameter when it is a path on this site, else home (which
 * sends each role to its first page). Anything that could leave the site (`//evil`, `https://…`,
 * `/\evil`) is ignored.
 */
export function safeNext(search: string): string {
  const next = new URLSearchParams(search).get('next')
  if (!next?.startsWith('/') || next.startsWith('//') || next.includes('\\')) return paths.home()
  return next
}
