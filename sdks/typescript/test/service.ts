import { randomUUID } from 'node:crypto'
import { waitFor } from '../../../test/support/wait.ts'

/** A signed-up account on a running service (over HTTP, as a developer would) and one chatbot of it. */
export interface Account {
  readonly baseUrl: string
  readonly cookie: string
  readonly chatbotId: string
  readonly apiKey: string
}

export async function signUpWithChatbot(
  baseUrl: string,
  settings: Record<string, unknown> = {},
): Promise<Account> {
  const signup = await fetch(`${baseUrl}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `sdk-${randomUUID()}@example.com`,
      password: 'a long passphrase for the sdk tests',
      organizationName: 'SDK tests',
    }),
  })
  if (!signup.ok) throw new Error(`sign-up answered ${signup.status}: ${await signup.text()}`)
  const cookie = signup.headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .join('; ')
  const created = await fetch(`${baseUrl}/api/v1/chatbots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'SDK bot', settings }),
  })
  if (!created.ok) throw new Error(`creating a chatbot answered ${created.status}: ${await created.text()}`)
  const body = (await created.json()) as { chatbot: { id: string }; apiKey: string }
  return { baseUrl, cookie, chatbotId: body.chatbot.id, apiKey: body.apiKey }
}

export interface StoredMessage {
  id: string
  role: string
  content: string
  sentAt: string
}

/** The messages the service holds for one of the account's conversations (by the caller's id), or []. */
export async function storedMessages(account: Account, conversationId: string): Promise<StoredMessage[]> {
  const { baseUrl, cookie, chatbotId } = account
  const list = await fetch(`${baseUrl}/api/v1/conversations?chatbotId=${chatbotId}&limit=100`, {
    headers: { cookie },
  })
  if (!list.ok) throw new Error(`listing conversations answered ${list.status}: ${await list.text()}`)
  const { conversations } = (await list.json()) as { conversations: { id: string; conversationId: string }[] }
  const found = conversations.find((c) => c.conversationId === conversationId)
  if (!found) return []
  const one = await fetch(`${baseUrl}/api/v1/conversations/${found.id}`, { headers: { cookie } })
  if (!one.ok) throw new Error(`reading a conversation answered ${one.status}: ${await one.text()}`)
  return ((await one.json()) as { conversation: { messages: StoredMessage[] } }).conversation.messages
}

/**
 * The conversation's messages once it holds at least `count` (the read side catches up with capture
 * asynchronously); more than `count` comes back as it is, for the test to see.
 */
export async function waitForMessages(
  account: Account,
  conversationId: string,
  count: number,
): Promise<StoredMessage[]> {
  return waitFor(
    async () => {
      const messages = await storedMessages(account, conversationId)
      return messages.length >= count ? messages : undefined
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `${count} messages in conversation ${conversationId}` },
  )
}

/** A fetch that records what it sent and what came back, calling `onRequest` as each request leaves. */
export function recordingFetch(onRequest?: (index: number) => void) {
  const requests: {
    encoding: string | null
    bytes: number
    status?: number
    retryAfter?: string | null
    error?: string
  }[] = []
  const recorded: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers)
    const entry: (typeof requests)[number] = {
      encoding: headers.get('content-encoding'),
      bytes: init?.body instanceof Uint8Array ? init.body.byteLength : 0,
    }
    requests.push(entry)
    const sent = fetch(input, init)
    onRequest?.(requests.length)
    try {
      const res = await sent
      entry.status = res.status
      entry.retryAfter = res.headers.get('retry-after')
      return res
    } catch (error) {
      entry.error = String(error)
      throw error
    }
  }
  return { fetch: recorded, requests }
}
