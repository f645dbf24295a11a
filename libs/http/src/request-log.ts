import type { FastifyRequest } from 'fastify'
import { queryPairs } from './query-encoding.ts'

/** Path parameters that name a person: an end user's id as captured (erasure), a member's. */
const PERSONAL_PARAMS = new Set(['userId'])
const HIDDEN = '…'

/**
 * The `req` of the "incoming request" log line: Fastify's own fields, but a URL without personal data.
 * Query strings carry what the dashboard searches and filters by (`q`, a search of message text;
 * `userId`, an end user's id), and the erasure route names the end user it erases in its path, which
 * the log would otherwise keep after the erasure: so every query value is left out (the names stay),
 * and so is each personal path parameter of the matched route.
 */
export function loggedRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: loggedUrl(request),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

function loggedUrl(request: FastifyRequest): string {
  const raw = request.url
  const mark = raw.indexOf('?')
  const path = mark === -1 ? raw : raw.slice(0, mark)
  const query = mark === -1 ? '' : raw.slice(mark + 1)
  return `${loggedPath(request, path)}${query ? `?${queryNames(query)}` : ''}`
}

function loggedPath(request: FastifyRequest, path: string): string {
  const route = request.routeOptions?.url
  const params = request.params as Record<string, unknown> | undefined
  if (!route || !params || !Object.keys(params).some((name) => PERSONAL_PARAMS.has(name))) return path
  return route.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    PERSONAL_PARAMS.has(name) ? HIDDEN : encodeURIComponent(String(params[name] ?? '')),
  )
}

function queryNames(query: string): string {
  return queryPairs(query)
    .map(({ name, value }) => (value === undefined ? name : `${name}=${HIDDEN}`))
    .join('&')
}
