/** The dashboard API over real HTTP (fetch), for tests driving service processes. */
import { randomUUID } from 'node:crypto'

export const SESSION_COOKIE = 'cas_session'
export const PASSWORD = 'correct horse battery staple'

export interface HttpAccount {
  /** `cas_session=<value>`, for a `cookie` header. */
  readonly cookie: string
  readonly email: string
  readonly organization: { id: string; name: string }
  readonly user: { id: string; email: string }
  /** Every Set-Cookie header of the sign-up response. */
  readonly setCookie: string[]
}

/** The `name=value` pair of the session cookie in Set-Cookie headers, or null. */
export function sessionCookieOf(setCookie: readonly string[]): string | null {
  for (const header of setCookie) {
    const pair = header.split(';', 1)[0]!
    const eq = pair.indexOf('=')
    if (pair.slice(0, eq).trim() === SESSION_COOKIE && pair.slice(eq + 1) !== '') return pair.trim()
  }
  return null
}

export async function signUpOverHttp(baseUrl: string, organizationName?: string): Promise<HttpAccount> {
  const email = `fault-${randomUUID()}@example.com`
  const res = await fetch(`${baseUrl}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email,
      password: PASSWORD,
      organizationName: organizationName ?? `Org ${randomUUID().slice(0, 8)}`,
    }),
  })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`sign-up answered ${res.status}: ${body}`)
  const setCookie = res.headers.getSetCookie()
  const cookie = sessionCookieOf(setCookie)
  if (!cookie) throw new Error(`sign-up set no ${SESSION_COOKIE} cookie`)
  const parsed = JSON.parse(body) as Pick<HttpAccount, 'organization' | 'user'>
  return { cookie, email, setCookie, organization: parsed.organization, user: parsed.user }
}

export interface HttpChatbot {
  readonly id: string
  readonly apiKey: string
}

export async function createChatbotOverHttp(
  baseUrl: string,
  cookie: string,
  name = 'Fault bot',
): Promise<HttpChatbot> {
  const res = await fetch(`${baseUrl}/api/v1/chatbots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name }),
  })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`creating a chatbot answered ${res.status}: ${body}`)
  const parsed = JSON.parse(body) as { chatbot: { id: string }; apiKey: string }
  return { id: parsed.chatbot.id, apiKey: parsed.apiKey }
}

/** One request with a cookie (and optional JSON body); returns status and parsed body (or text). */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.cookie) headers.cookie = opts.cookie
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  })
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers }
}
