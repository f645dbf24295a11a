import { AppError } from '@cas/http'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'

const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
/** Capture is called by chatbot back ends with an API key, not by browsers carrying our cookie. */
const EXEMPT_ROUTES = new Set(['/api/v1/capture'])

/**
 * Cross-site request forgery defence for the cookie-authenticated API: a browser always sends `Origin`
 * on a cross-origin POST/PUT/PATCH/DELETE, so a mutating request whose Origin is neither our own nor a
 * configured one is refused before any session is read. Requests without Origin come from non-browser
 * clients, which hold no victim's cookie, and pass, unless they carry a browser's signs of another site
 * (`Sec-Fetch-Site: cross-site`, a foreign Referer). SameSite=Lax is the second line of defence.
 */
export function originCheck(allowedOrigins: readonly string[]): onRequestHookHandler {
  const allowed = new Set(allowedOrigins.map((o) => normalizeOrigin(o)).filter((o) => o !== null))
  return async (request) => {
    if (!MUTATING_METHODS.has(request.method)) return
    const origin = request.headers.origin
    // The matched route pattern, not the raw URL, so an encoded or oddly spelled path can't dodge the check.
    const route = request.routeOptions.url ?? request.url.split('?', 1)[0] ?? ''
    if (!route.startsWith('/api/v1/') || EXEMPT_ROUTES.has(route)) return
    if (origin === undefined) {
      // Without Origin, a request that says it comes from another site (Fetch metadata) or from a page
      // of another origin (Referer) is refused all the same: defence in depth, should a browser or a
      // proxy leave Origin out. Non-browser clients send neither and pass.
      if (request.headers['sec-fetch-site'] === 'cross-site') refuse()
      const referer = request.headers.referer
      if (referer === undefined) return
      const from = normalizeOrigin(referer)
      if (from === null || from === ownOrigin(request) || allowed.has(from)) return
      refuse()
    }
    const normalized = normalizeOrigin(origin)
    if (normalized !== null && (normalized === ownOrigin(request) || allowed.has(normalized))) return
    refuse()
  }
}

function refuse(): never {
  throw new AppError('forbidden', 'Cross-origin requests from this origin are not allowed.')
}

/** The origin the client addressed: scheme as Fastify sees it (X-Forwarded-Proto when trusted) and Host. */
function ownOrigin(request: FastifyRequest): string | null {
  return normalizeOrigin(`${request.protocol}://${request.host}`)
}

/** scheme://host[:port] with default ports dropped and the host lowercased; null for `null` and garbage. */
function normalizeOrigin(value: string): string | null {
  try {
    const origin = new URL(value).origin
    return origin === 'null' ? null : origin
  } catch {
    return null
  }
}
