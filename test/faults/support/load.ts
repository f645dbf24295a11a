/**
 * Capture load over real HTTP, recording exactly what the API acknowledged: the fault tests compare the
 * read models with it once everything has caught up.
 */

export interface CaptureLoadOptions {
  /** The gateway's base URL (or a function, when it may move). */
  readonly url: string
  readonly apiKey: string
  readonly conversations: number
  /** Captures per conversation, sent one after the other (capture k+1 only once k was answered). */
  readonly capturesPerConversation: number
  readonly messagesPerCapture: number
  /** Concurrent senders; each owns conversations/concurrency of the conversations. */
  readonly concurrency: number
  /** Pause after each capture per sender, to spread the load over the faults a test injects (ms). */
  readonly pauseMs?: number
  /** A prefix making this load's conversation ids unique (default: a random one). */
  readonly label?: string
}

export interface CaptureLoad {
  /** Settles once every capture was sent and answered (or stop() was called). */
  readonly done: Promise<void>
  /** Requests answered, by status (0: no answer: a network error or timeout). */
  readonly statuses: Map<number, number>
  /** Up to 20 descriptions of requests that did not answer 200. */
  readonly failures: string[]
  /** Messages acknowledged so far (by 200 responses). */
  acknowledgedCount(): number
  /** External conversation id → the message ids a 200 acknowledged, in the order sent. */
  readonly acknowledged: Map<string, string[]>
  /** External conversation id → the last `user.plan` acknowledged (each capture changes it). */
  readonly lastPlan: Map<string, string>
  /** Total messages the load sends when it runs to the end. */
  readonly plannedMessages: number
  /** Resolves once at least `n` messages have been acknowledged. */
  reached(n: number, timeoutMs?: number): Promise<void>
  /** Stops after the captures in flight. */
  stop(): Promise<void>
}

const SENT_AT_BASE = Date.parse('2026-11-20T08:00:00.000Z')

/**
 * Starts sending: each conversation receives `capturesPerConversation` captures of `messagesPerCapture`
 * new messages (ids unique per conversation), sentAt spread over several hours, and a `user.plan` that
 * changes with every capture (so later captures also append metadata-updated events).
 */
export function startCaptureLoad(opts: CaptureLoadOptions): CaptureLoad {
  const label = opts.label ?? `c${Math.random().toString(36).slice(2, 8)}`
  const statuses = new Map<number, number>()
  const failures: string[] = []
  const acknowledged = new Map<string, string[]>()
  const lastPlan = new Map<string, string>()
  let ackCount = 0
  let stopping = false
  const waiters: { n: number; resolve: () => void }[] = []

  const record = (status: number, what: string) => {
    statuses.set(status, (statuses.get(status) ?? 0) + 1)
    if (status !== 200 && failures.length < 20) failures.push(what)
  }

  const send = async (conversation: number, capture: number) => {
    const conversationId = `${label}-${conversation}`
    const ids = Array.from({ length: opts.messagesPerCapture }, (_, j) => `m-${capture}-${j}`)
    const plan = `step-${capture}`
    const body = {
      conversationId,
      user: { id: `user-${conversation % 50}`, plan },
      messages: ids.map((id, j) => ({
        id,
        role: j % 2 ? 'assistant' : 'user',
        content: `${j % 2 ? 'answer' : 'question'} ${capture}.${j} about billing`,
        sentAt: new Date(
          SENT_AT_BASE + (capture * opts.messagesPerCapture + j) * 60_000 + conversation * 1_000,
        ).toISOString(),
      })),
    }
    let status = 0
    let text = ''
    try {
      const res = await fetch(`${opts.url}/api/v1/capture`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.apiKey}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      })
      status = res.status
      text = await res.text()
    } catch (err) {
      text = (err as Error).message
    }
    record(status, `${conversationId}#${capture}: ${status} ${text.slice(0, 300)}`)
    if (status !== 200) return
    const stored = (JSON.parse(text) as { messagesStored: number }).messagesStored
    if (stored !== ids.length) {
      failures.push(`${conversationId}#${capture}: stored ${stored} of ${ids.length} new messages`)
    }
    const list = acknowledged.get(conversationId) ?? []
    acknowledged.set(conversationId, list)
    list.push(...ids)
    lastPlan.set(conversationId, plan)
    ackCount += ids.length
    for (const w of waiters.splice(0)) {
      if (ackCount >= w.n) w.resolve()
      else waiters.push(w)
    }
  }

  const sender = async (index: number) => {
    const mine = Array.from({ length: opts.conversations }, (_, c) => c).filter(
      (c) => c % opts.concurrency === index,
    )
    for (let capture = 0; capture < opts.capturesPerConversation; capture++) {
      for (const conversation of mine) {
        if (stopping) return
        await send(conversation, capture)
        if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs))
      }
    }
  }

  const done = Promise.all(Array.from({ length: opts.concurrency }, (_, i) => sender(i))).then(() => {})

  return {
    done,
    statuses,
    failures,
    acknowledged,
    lastPlan,
    plannedMessages: opts.conversations * opts.capturesPerConversation * opts.messagesPerCapture,
    acknowledgedCount: () => ackCount,
    reached(n, timeoutMs = 120_000) {
      if (ackCount >= n) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the load acknowledged only ${ackCount} of ${n} messages in time`)),
          timeoutMs,
        )
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer)
            resolve()
          },
        })
      })
    },
    async stop() {
      stopping = true
      await done
    },
  }
}
