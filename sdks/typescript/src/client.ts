import { registerForExit, unregisterForExit } from './exit.js'
import { eitherSignal, gzip, randomId, retryAfterMs, sleep, timeoutSignal, unrefTimer } from './runtime.js'
import {
  CaptureError,
  type CaptureErrorKind,
  type CaptureInput,
  type CaptureRequestBody,
  type CaptureRequestMessage,
  type CaptureResponseBody,
  type CaptureStats,
  type CaptureWarning,
  type CaptureWarningKind,
  type ErrorResponseBody,
} from './types.js'

export interface ConversationAnalyticsOptions {
  /** The chatbot's API key (`svc_live_…`). A secret: send from your backend, not from a web page. */
  apiKey: string
  /** Where the service answers, e.g. `https://analytics.example.com` (the SDK adds `/api/v1/capture`). */
  baseUrl: string
  /** Send once this many messages are queued. Default 20. */
  flushAt?: number
  /** Send what is queued at most this many milliseconds after it was queued. Default 5,000. */
  flushInterval?: number
  /** The most messages in one request (the service takes 1 to 100). Default 100. */
  maxBatchSize?: number
  /** The most bytes of JSON in one request, before gzip (the service takes 4 MiB). Default 1 MiB. */
  maxBatchBytes?: number
  /** The most messages held (queued or being sent); beyond it new ones are dropped and counted. Default 10,000. */
  maxQueueSize?: number
  /** Attempts after the first, for a 429, a 5xx, a 408, a network error or a timeout. Default 10. */
  maxRetries?: number
  /** The first retry's delay in milliseconds, doubled for each retry, with jitter. Default 500. */
  retryDelay?: number
  /** The longest delay between retries that the SDK chooses (Retry-After is honoured whatever it is, up to an hour). Default 30,000. */
  maxRetryDelay?: number
  /** Milliseconds before one request is abandoned (and retried). Default 10,000. */
  timeout?: number
  /** Gzip request bodies of 1 KiB and more where the runtime has CompressionStream. Default true. */
  gzip?: boolean
  /** Node.js: send what is queued on `beforeExit`, SIGTERM and SIGINT. Default true. */
  flushOnExit?: boolean
  /** Milliseconds a flush on SIGTERM or SIGINT may take before the process goes on to exit. Default 10,000. */
  shutdownTimeout?: number
  /** The fetch to use (a proxy's, a test's). Default globalThis.fetch. */
  fetch?: typeof fetch
  /**
   * Called for messages that will not be delivered (see CaptureError's `kind`). Default: console.error,
   * once per kind.
   */
  onError?: (error: CaptureError) => void
  /**
   * Called for each warning of the service (something taken differently from how it was sent, such as
   * a custom field outside the chatbot's schema). Default: console.warn, once per kind.
   */
  onWarning?: (warning: CaptureWarning) => void
}

type Context = Pick<CaptureRequestBody, 'user' | 'organization' | 'session' | 'custom'>
const CONTEXT_FIELDS = ['user', 'organization', 'session', 'custom'] as const

interface Queued {
  readonly conversationId: string
  readonly messages: CaptureRequestMessage[]
  readonly context: Context
  readonly bytes: number
}

const CAPTURE_PATH = '/api/v1/capture'
const GZIP_FROM_BYTES = 1024
const ROLES = new Set<string>(['user', 'assistant', 'system', 'tool'])
const encoder = new TextEncoder()

/**
 * Sends conversations to the service's capture API in the background: `capture()` queues messages and
 * returns at once; they go in batches (by count and by time), gzip-compressed, retried with exponential
 * backoff and jitter on 429 (after its Retry-After), 5xx and network errors. Message ids are fixed when
 * queued, so a retried request never stores a message twice.
 */
export class ConversationAnalytics {
  readonly #apiKey: string
  readonly #url: string
  readonly #options: Required<
    Omit<ConversationAnalyticsOptions, 'apiKey' | 'baseUrl' | 'fetch' | 'onError' | 'onWarning'>
  >
  readonly #fetch: typeof fetch
  readonly #onError: (error: CaptureError) => void
  readonly #onWarning: (warning: CaptureWarning) => void
  readonly #queue: Queued[] = []
  /** Messages queued or in the request being sent. */
  #held = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  #pumping: Promise<void> | undefined
  #closed = false
  /** Aborts sleeps and requests when shutdown() or the flush at exit runs out of time. */
  #abort = new AbortController()
  /** Why what is left is being given up (said in the `shutdown` errors). */
  #givingUp = ''
  #stats = { delivered: 0, stored: 0, dropped: 0, failed: 0, retries: 0, rateLimited: 0, requests: 0 }

  constructor(options: ConversationAnalyticsOptions) {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey === '')
      throw new TypeError('ConversationAnalytics: apiKey is required')
    if (typeof options.baseUrl !== 'string' || options.baseUrl === '')
      throw new TypeError('ConversationAnalytics: baseUrl is required (e.g. https://analytics.example.com)')
    this.#apiKey = options.apiKey
    this.#url = new URL(
      CAPTURE_PATH,
      options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`,
    ).href
    this.#options = {
      flushAt: positive(options.flushAt, 20),
      flushInterval: positive(options.flushInterval, 5_000),
      maxBatchSize: Math.min(positive(options.maxBatchSize, 100), 100),
      maxBatchBytes: positive(options.maxBatchBytes, 1_048_576),
      maxQueueSize: positive(options.maxQueueSize, 10_000),
      maxRetries: nonNegative(options.maxRetries, 10),
      retryDelay: positive(options.retryDelay, 500),
      maxRetryDelay: positive(options.maxRetryDelay, 30_000),
      timeout: positive(options.timeout, 10_000),
      gzip: options.gzip ?? true,
      flushOnExit: options.flushOnExit ?? true,
      shutdownTimeout: nonNegative(options.shutdownTimeout, 10_000),
    }
    const fetchImpl = options.fetch ?? globalThis.fetch
    if (typeof fetchImpl !== 'function')
      throw new TypeError('ConversationAnalytics: no fetch in this runtime')
    this.#fetch = fetchImpl.bind(globalThis)
    this.#onError =
      options.onError ??
      oncePerKind((error) =>
        console.error(
          `[conversation-analytics] ${error.message} (later ${error.kind} errors are not printed; see onError)`,
        ),
      )
    this.#onWarning =
      options.onWarning ??
      oncePerKind((warning) =>
        console.warn(
          `[conversation-analytics] warning for conversation ${warning.conversationId}: ${warning.message} (later ${warning.kind} warnings are not printed; see onWarning)`,
        ),
      )
    if (this.#options.flushOnExit) registerForExit(this)
  }

  /**
   * Queues the messages of one conversation; returns at once, true when they were queued. False when
   * they were dropped: the queue was full, the input invalid, or the client shut down (each reported to
   * onError). Messages without an id get one now, and without `sentAt` the current time.
   */
  capture(input: CaptureInput): boolean {
    const conversationId = input?.conversationId
    const count = Array.isArray(input?.messages) ? input.messages.length : 0
    if (this.#closed) {
      this.#report('shutdown', 'capture() after shutdown(): the messages were dropped', count, {
        conversationId,
      })
      return false
    }
    const invalid = invalidInput(input)
    if (invalid) {
      this.#report('invalid', `capture(): ${invalid}; nothing was queued`, count, { conversationId })
      return false
    }
    if (this.#held + count > this.#options.maxQueueSize) {
      this.#stats.dropped += count
      this.#report(
        'queue_full',
        `the queue holds ${this.#held} messages (maxQueueSize ${this.#options.maxQueueSize}): ${count} dropped, ${this.#stats.dropped} so far`,
        count,
        { conversationId },
      )
      return false
    }
    const now = new Date().toISOString()
    const messages: CaptureRequestMessage[] = input.messages.map((m) => ({
      id: m.id ?? randomId(),
      role: m.role,
      content: m.content,
      sentAt: m.sentAt === undefined ? now : m.sentAt instanceof Date ? m.sentAt.toISOString() : m.sentAt,
    }))
    const context: Context = {}
    for (const field of CONTEXT_FIELDS) if (input[field] !== undefined) context[field] = input[field] as never
    const { maxBatchSize } = this.#options
    for (let i = 0; i < messages.length; i += maxBatchSize) {
      const part = messages.slice(i, i + maxBatchSize)
      this.#queue.push({
        conversationId: input.conversationId,
        messages: part,
        context,
        bytes: jsonBytes({ conversationId: input.conversationId, messages: part, ...context }),
      })
    }
    this.#held += count
    if (this.#queuedCount() >= this.#options.flushAt) this.#startPump()
    else this.#scheduleTimer()
    return true
  }

  /** Sends everything queued now (and whatever is queued meanwhile); resolves when the queue is empty. */
  async flush(): Promise<void> {
    while (this.#queue.length > 0 || this.#pumping) await this.#startPump()
  }

  /**
   * Flushes, waiting at most `timeoutMs` (default: the shutdownTimeout option), then stops: what is
   * still queued is given up (onError, `shutdown`), later captures are dropped, and the exit hooks are
   * removed. Resolves with the final counts.
   */
  async shutdown(timeoutMs = this.#options.shutdownTimeout): Promise<CaptureStats> {
    this.#closed = true
    this.#clearTimer()
    unregisterForExit(this)
    let timer: ReturnType<typeof setTimeout> | undefined
    const flushed = this.flush().then(() => true)
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    const done = await Promise.race([flushed, timedOut])
    clearTimeout(timer)
    if (!done) await this.#giveUp('shutdown() ran out of time', flushed)
    return this.stats()
  }

  /** Counts since the client was made. */
  stats(): CaptureStats {
    return { queued: this.#held, ...this.#stats }
  }

  /**
   * @internal For the exit hooks: a flush, for at most shutdownTimeout; then what is left is given up
   * (reported as `shutdown`), so that retries against a service that is down do not keep the process
   * alive. The client goes on taking captures, should the program go on.
   */
  async flushOnExit(): Promise<void> {
    if (this.#held === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const flushed = this.flush().then(() => true)
    const done = await Promise.race([
      flushed,
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.#options.shutdownTimeout)
      }),
    ])
    clearTimeout(timer)
    if (!done) await this.#giveUp('the flush at exit ran out of time (shutdownTimeout)', flushed)
  }

  /** Aborts the sleeps and requests of `flushing`, which reports what it gives up; then a new start. */
  async #giveUp(reason: string, flushing: Promise<unknown>): Promise<void> {
    this.#givingUp = reason
    this.#abort.abort()
    await flushing
    this.#abort = new AbortController()
  }

  #queuedCount(): number {
    let n = 0
    for (const item of this.#queue) n += item.messages.length
    return n
  }

  #scheduleTimer(): void {
    if (this.#timer !== undefined || this.#pumping) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.#startPump()
    }, this.#options.flushInterval)
    // The interval alone does not keep a process alive: the exit hooks flush what it was waiting for.
    unrefTimer(this.#timer)
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #startPump(): Promise<void> {
    this.#clearTimer()
    this.#pumping ??= this.#pump().finally(() => {
      this.#pumping = undefined
      if (this.#queue.length > 0 && !this.#closed) this.#scheduleTimer()
    })
    return this.#pumping
  }

  async #pump(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#takeBatch()
      try {
        await this.#send(batch)
      } finally {
        this.#held -= batch.messages.length
      }
    }
  }

  /**
   * The first queued capture, with the later ones of the same conversation that fit and carry the same
   * user, organization, session and custom fields (or none), in order: the first that does not ends it,
   * so that a conversation's fields change in the order they were captured.
   */
  #takeBatch(): Queued {
    const first = this.#queue.shift()!
    const messages = [...first.messages]
    let bytes = first.bytes
    const context: Context = { ...first.context }
    for (let i = 0; i < this.#queue.length; ) {
      const next = this.#queue[i]!
      if (next.conversationId !== first.conversationId) {
        i++
        continue
      }
      const fits =
        messages.length + next.messages.length <= this.#options.maxBatchSize &&
        bytes + next.bytes <= this.#options.maxBatchBytes &&
        CONTEXT_FIELDS.every(
          (field) =>
            next.context[field] === undefined ||
            context[field] === undefined ||
            sameJson(next.context[field], context[field]),
        )
      if (!fits) break
      messages.push(...next.messages)
      bytes += next.bytes
      for (const field of CONTEXT_FIELDS)
        if (next.context[field] !== undefined) context[field] = next.context[field] as never
      this.#queue.splice(i, 1)
    }
    return { conversationId: first.conversationId, messages, context, bytes }
  }

  /** One batch, with its retries; reports what is not delivered. */
  async #send(batch: Queued): Promise<void> {
    const { conversationId, messages } = batch
    const json = encoder.encode(JSON.stringify({ conversationId, messages, ...batch.context }))
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      'content-type': 'application/json',
    }
    let body: Uint8Array<ArrayBuffer> = json
    if (this.#options.gzip && json.byteLength >= GZIP_FROM_BYTES) {
      const compressed = await gzip(json)
      if (compressed) {
        body = compressed
        headers['content-encoding'] = 'gzip'
      }
    }
    const count = messages.length
    for (let attempt = 0; ; attempt++) {
      if (this.#abort.signal.aborted) {
        this.#stats.failed += count
        this.#report('shutdown', `${this.#givingUp}: ${count} messages were not sent`, count, {
          conversationId,
        })
        return
      }
      let status: number | undefined
      let cause: unknown
      let wait: number | undefined
      try {
        const res = await this.#fetch(this.#url, {
          method: 'POST',
          headers,
          body,
          signal: eitherSignal(this.#abort.signal, timeoutSignal(this.#options.timeout)),
        })
        status = res.status
        if (res.ok) {
          const answer = (await res.json()) as CaptureResponseBody
          this.#stats.requests++
          this.#stats.delivered += count
          this.#stats.stored += answer.messagesStored
          for (const message of answer.warnings ?? [])
            this.#warn({ kind: warningKind(message), message, conversationId })
          return
        }
        if (status === 429) {
          this.#stats.rateLimited++
          wait = retryAfterMs(res.headers.get('retry-after'))
        }
        if (status !== 408 && status !== 429 && status < 500) {
          const answer = (await res.json().catch(() => undefined)) as ErrorResponseBody | undefined
          this.#stats.failed += count
          this.#report(
            'rejected',
            `the service refused ${count} messages of conversation ${conversationId} with ${status}: ${refusal(answer) ?? res.statusText}`,
            count,
            { conversationId, status, response: answer },
          )
          return
        }
        await res.body?.cancel().catch(() => {})
      } catch (error) {
        cause = error
      }
      if (attempt >= this.#options.maxRetries) {
        this.#stats.failed += count
        const why = status === undefined ? `${String(cause)}` : `status ${status}`
        this.#report(
          'retries_exhausted',
          `${count} messages of conversation ${conversationId} were not delivered after ${attempt + 1} attempts (last: ${why})`,
          count,
          { conversationId, status, cause },
        )
        return
      }
      this.#stats.retries++
      await sleep(wait ?? this.#backoff(attempt), this.#abort.signal)
    }
  }

  /** Exponential backoff with jitter: between half and all of retryDelay·2^attempt, at most maxRetryDelay. */
  #backoff(attempt: number): number {
    const ceiling = Math.min(this.#options.maxRetryDelay, this.#options.retryDelay * 2 ** attempt)
    return ceiling / 2 + Math.random() * (ceiling / 2)
  }

  #report(
    kind: CaptureErrorKind,
    message: string,
    count: number,
    details: ConstructorParameters<typeof CaptureError>[3],
  ): void {
    try {
      this.#onError(new CaptureError(kind, message, count, details))
    } catch {
      // A callback that throws must not stop the queue.
    }
  }

  #warn(warning: CaptureWarning): void {
    try {
      this.#onWarning(warning)
    } catch {
      // As above.
    }
  }
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback
}

function nonNegative(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback
}

function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).byteLength
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** What the service would refuse for certain, before it is queued with other captures. */
function invalidInput(input: CaptureInput): string | undefined {
  if (typeof input !== 'object' || input === null) return 'the input must be an object'
  const { conversationId, messages } = input
  if (typeof conversationId !== 'string' || conversationId.length < 1 || conversationId.length > 256)
    return 'conversationId must be a string of 1 to 256 characters'
  if (!Array.isArray(messages) || messages.length === 0) return 'messages must be a non-empty array'
  for (const [i, m] of messages.entries()) {
    if (typeof m !== 'object' || m === null) return `messages[${i}] must be an object`
    if (m.id !== undefined && (typeof m.id !== 'string' || m.id.length < 1 || m.id.length > 256))
      return `messages[${i}].id must be a string of 1 to 256 characters`
    if (!ROLES.has(m.role)) return `messages[${i}].role must be one of user, assistant, system, tool`
    if (typeof m.content !== 'string') return `messages[${i}].content must be a string`
    if (m.sentAt instanceof Date && Number.isNaN(m.sentAt.getTime()))
      return `messages[${i}].sentAt is an invalid Date`
  }
  return undefined
}

/** The kind of one of the service's warning sentences (README, "What capture takes"). */
export function warningKind(message: string): CaptureWarningKind {
  if (message.startsWith('custom field ')) return 'custom_field'
  if (/^field .* is not a capture field/.test(message)) return 'unknown_field'
  if (/^message id .* is repeated/.test(message)) return 'repeated_message_id'
  if (/\b(userId|metadata)\b/.test(message)) return 'deprecated_field'
  if (/\bsentAt\b/.test(message)) return 'sent_at_in_future'
  return 'other'
}

/** A default handler that prints the first of each kind only. */
function oncePerKind<T extends { kind: string }>(print: (item: T) => void): (item: T) => void {
  const seen = new Set<string>()
  return (item) => {
    if (seen.has(item.kind)) return
    seen.add(item.kind)
    print(item)
  }
}

/** The most invalid fields a refusal's message names (the error's `response` has them all). */
const FIELDS_NAMED = 3

/**
 * What the service said, with the fields it named ("The request body is invalid. /messages/0/sentAt:
 * must be an ISO 8601 date-time with a zone…"): the default onError prints only the message, and a 400's
 * message alone does not say which field to fix.
 */
function refusal(answer: ErrorResponseBody | undefined): string | undefined {
  const error = answer?.error
  if (error?.message === undefined) return undefined
  const details = Array.isArray(error.details) ? error.details : []
  const named = details.slice(0, FIELDS_NAMED).map((d) => `${d.path || 'the body'}: ${d.message}`)
  if (details.length > FIELDS_NAMED) named.push(`and ${details.length - FIELDS_NAMED} more`)
  return named.length === 0 ? error.message : `${error.message} ${named.join('; ')}`
}
