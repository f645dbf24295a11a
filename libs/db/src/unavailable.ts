/**
 * Errors that mean "the database cannot be reached right now" rather than "this request is wrong": the
 * server is down, restarting or refusing connections, the connection broke, or no pooled connection
 * came free in time. Callers answer them with 503 and a Retry-After, and simply try again later.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
])

// SQLSTATE: 08xxx connection exception; 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now;
// 53300 too_many_connections.
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

// node-postgres reports these as plain Errors without a code.
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
]

export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown }
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATES.has(code) || code.startsWith('08')))
      return true
    if (typeof message === 'string' && PG_MESSAGES.some((m) => message.includes(m))) return true
    // AggregateError (a refused dual-stack connect) and wrapped causes.
    const inner = (e as { errors?: unknown[] }).errors
    if (Array.isArray(inner) && inner.some(isDatabaseUnavailable)) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}
