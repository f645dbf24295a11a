/** An error answer of the API (API.md: `{ok: false, error: {code, message, details?}}`), or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly { path: string; message: string }[] = [],
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** Called on any 401 outside the sign-in calls: the session has expired or was signed out elsewhere. */
let onUnauthorized: () => void = () => {}

export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler
}

/**
 * Called on a 403 `forbidden`: the person's role or membership may have changed since the page was
 * drawn (the server applies it at once), so the app reads the account again and redraws for it.
 */
let onForbidden: () => void = () => {}

export function setForbiddenHandler(handler: () => void): void {
  onForbidden = handler
}

type Query = Record<string, string | number | undefined>

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(key, String(value))
  }
  const qs = params.toString()
  return qs ? `${path}?${qs}` : path
}

/**
 * One call to the API on this origin, with the session cookie. Mutations send JSON (the browser adds
 * Origin, which the server's CSRF check compares with its own). Error bodies become ApiErrors.
 */
export async function request<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  opts: {
    body?: unknown
    query?: Query
    signal?: AbortSignal
    quietUnauthorized?: boolean
  } = {},
): Promise<T> {
  let response: Response
  try {
    response = await fetch(withQuery(path, opts.query), {
      method,
      credentials: 'same-origin',
      headers: opts.body === undefined ? { accept: 'application/json' } : jsonHeaders,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
    })
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err
    throw new ApiError(0, 'network', 'Could not reach the server. Check your connection and try again.')
  }
  const body: unknown = await response.json().catch(() => undefined)
  if (response.ok) return body as T
  const error = errorOf(body)
  if (response.status === 401 && !opts.quietUnauthorized) onUnauthorized()
  if (response.status === 403 && error?.code === 'forbidden') onForbidden()
  throw new ApiError(
    response.status,
    error?.code ?? 'unknown',
    error?.message ?? `The server answered ${response.status}.`,
    error?.details ?? [],
  )
}

const jsonHeaders = { accept: 'application/json', 'content-type': 'application/json' }

interface ErrorShape {
  code: string
  message: string
  details?: { path: string; message: string }[]
}

function errorOf(body: unknown): ErrorShape | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined
  const error = (body as { error: unknown }).error
  if (typeof error !== 'object' || error === null) return undefined
  const { code, message } = error as Record<string, unknown>
  if (typeof code !== 'string' || typeof message !== 'string') return undefined
  return error as ErrorShape
}

/** A sentence for people: the server's message, plus the fields it named. */
export function describeError(err: unknown): string {
  if (!(err instanceof ApiError)) return 'Something went wrong. Please try again.'
  if (err.details.length === 0) return err.message
  const fields = err.details.map((d) => `${d.path.replace(/^\//, '') || 'request'}: ${d.message}`)
  return `${err.message} ${fields.join('; ')}`
}
