/**
 * Capture load over real HTTP against a service process (for the shutdown and fault tests): clients
 * that each send captures of new messages, one at a time, until stopped, recording what every request
 * got. Every request has a bounded client timeout: a request that outlives it is a hang, and fails.
 */

export interface CaptureOutcome {
  /** The message ids the request carried (all new). */
  readonly ids: readonly string[]
  readonly status: number
  readonly retryAfter: string | null
  readonly body: unknown
  /** When the request was sent, and answered (ms since the epoch). */
  readonly sentAt: number
  readonly answeredAt: number
}

export interface NetworkFailure {
  readonly ids: readonly string[]
  readonly error: string
  readonly sentAt: number
}

/** POSTs JSON with a client timeout; the answer's status, headers and parsed body. */
export async function postJson(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 15_000,
) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: kept as text, for the assertion message
  }
  return { status: res.status, headers: res.headers, body: parsed as Record<string, unknown> }
}

/** Waits until the service at `base` answers GET /healthz (it is up and listening). */
export async function waitUntilListening(base: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })
      if (res.ok) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${base} did not answer /healthz within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Signs up through the API and creates a chatbot; returns its id and API key. */
export async function signUpWithChatbot(base: string): Promise<{ chatbotId: string; apiKey: string }> {
  const signup = await postJson(base, '/api/v1/auth/signup', {
    email: `ops-${Date.now()}@example.com`,
    password: 'a long passphrase',
    organizationName: 'Ops',
  })
  if (signup.status !== 200)
    throw new Error(`sign-up answered ${signup.status}: ${JSON.stringify(signup.body)}`)
  const cookie = signup.headers.get('set-cookie')!.split(';')[0]!
  const created = await postJson(base, '/api/v1/chatbots', { name: 'Load' }, { cookie })
  if (created.status !== 200) throw new Error(`create answered ${created.status}`)
  return { chatbotId: (created.body.chatbot as { id: string }).id, apiKey: created.body.apiKey as string }
}

export class CaptureLoad {
  readonly outcomes: CaptureOutcome[] = []
  readonly failures: NetworkFailure[] = []
  /** Requests that outlived the client timeout. */
  readonly hangs: string[][] = []
  private stopped = false
  private readonly running: Promise<void>

  /**
   * Starts `clients` clients. A client stops at its first network failure when `stopOnNetworkError`
   * (the service went away for good), or keeps going otherwise.
   */
  constructor(
    private readonly opts: {
      readonly base: string
      readonly apiKey: string
      readonly clients: number
      readonly timeoutMs?: number
      readonly stopOnNetworkError?: boolean
      /** A short pause after a 503, as a client honouring Retry-After in spirit would (default 20 ms). */
      readonly backoffMs?: number
    },
  ) {
    this.running = Promise.all(Array.from({ length: opts.clients }, (_, c) => this.client(c))).then(() => {})
  }

  acknowledged(): string[] {
    return this.outcomes.filter((o) => o.status === 200).flatMap((o) => o.ids)
  }

  count(status: number): number {
    return this.outcomes.filter((o) => o.status === status).length
  }

  /** Stops sending and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.running
  }

  private async client(c: number): Promise<void> {
    for (let i = 0; !this.stopped; i++) {
      const ids = [`c${c}-m${i}-a`, `c${c}-m${i}-b`]
      const sentAt = Date.now()
      try {
        const res = await postJson(
          this.opts.base,
          '/api/v1/capture',
          {
            conversationId: `conv-${c}-${i % 7}`,
            messages: ids.map((id) => ({ id, role: 'user', content: `hello ${id}` })),
          },
          { authorization: `Bearer ${this.opts.apiKey}` },
          this.opts.timeoutMs ?? 15_000,
        )
        this.outcomes.push({
          ids,
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          body: res.body,
          sentAt,
          answeredAt: Date.now(),
        })
        if (res.status === 503) await new Promise((r) => setTimeout(r, this.opts.backoffMs ?? 20))
      } catch (err) {
        if ((err as Error).name === 'TimeoutError') {
          this.hangs.push(ids)
          continue
        }
        this.failures.push({ ids, error: (err as Error).message, sentAt })
        if (this.opts.stopOnNetworkError) return
        await new Promise((r) => setTimeout(r, 50))
      }
    }
  }
}
