/**
 * A scriptable fake of an OpenAI-compatible chat-completions endpoint for tests: node:http on 127.0.0.1,
 * `POST /v1/chat/completions`, OpenAI's response shape. Use `${server.baseUrl}` (which ends in `/v1`) as
 * the client's base URL.
 *
 * Each request takes the next behaviour of the script (`server.script(...)`), or `server.defaultBehaviour`
 * when the script is empty. The `ok` answer is computed from the request: the last user message is expected
 * to be the LLM analyzer's JSON `{"messages": [{"id", "role", "content"}]}`, and each message gets
 * - score: the number after `score=` in the content if any, else 0.8 with good/great/love/thanks, -0.7 with
 *   bad/awful/hate/broken, else 0; label from the score;
 * - topics: the content's hashtags, as written (`#Billing` → `Billing`), to exercise normalization.
 *
 * The server records every request (headers, parsed body, whether the client went away before the answer)
 * and counts requests in flight (received, not yet answered or abandoned), with the maximum seen.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeResult {
  messageId: string
  sentiment: { score: number; label: string }
  topics: string[]
}

export interface InputMessage {
  readonly id: string
  readonly role: string
  readonly content: string
}

export type Behaviour =
  /** 200 with the answer computed from the request. */
  | 'ok'
  /** Answer nothing until released (`releaseHeld`/`releaseOldest`, then `ok`) or the client goes away. */
  | 'hold'
  /** 200 whose content is not JSON. */
  | 'malformed-json'
  /** 200 whose content is JSON of another shape. */
  | 'schema-mismatch'
  /** 200 with the right shape but ids that are not the request's. */
  | 'wrong-ids'
  /** 200 with one result missing. */
  | 'missing-result'
  /** An error status (with an OpenAI-style error body unless given) and optional Retry-After. */
  | { readonly status: number; readonly retryAfter?: string; readonly body?: unknown }
  /** 200 with exactly this message content (null allowed) and finish_reason. */
  | { readonly content: string | null; readonly finishReason?: string }
  /** 200 with the computed results passed through a function. */
  | { readonly transform: (results: FakeResult[], request: RecordedRequest) => unknown }
  /** Decides per request (e.g. from its messages). */
  | ((request: RecordedRequest) => Behaviour)

export interface RecordedRequest {
  readonly index: number
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage['headers']
  readonly authorization: string | undefined
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: Record<string, unknown> | undefined
  readonly model: unknown
  readonly responseFormat: unknown
  readonly chatMessages: { role: string; content: string }[]
  /** The analyzer's messages, parsed from the last user message ([] when it is not the analyzer's JSON). */
  readonly input: InputMessage[]
  /** Set when the client went away before an answer was sent (abort, timeout). */
  abandoned: boolean
}

interface Held {
  readonly request: RecordedRequest
  readonly res: ServerResponse
}

export interface FakeChatServer {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string
  readonly requests: readonly RecordedRequest[]
  /** Requests received and not yet answered or abandoned. */
  readonly inFlight: number
  readonly maxInFlight: number
  /** Requests currently held (behaviour `hold`), oldest first. */
  readonly held: readonly RecordedRequest[]
  defaultBehaviour: Behaviour
  /** Appends behaviours for the next requests, in arrival order. */
  script(...behaviours: Behaviour[]): void
  /** Answers the oldest held request with `ok` (or the given behaviour); false when none is held. */
  releaseOldest(behaviour?: Behaviour): boolean
  /** Answers every held request with `ok` (or the given behaviour). */
  releaseHeld(behaviour?: Behaviour): void
  /** Answers the held requests that match with `ok` (or the given behaviour); returns how many. */
  releaseWhere(predicate: (request: RecordedRequest) => boolean, behaviour?: Behaviour): number
  /** Resolves once `predicate` holds; it is checked now and on every change of the server's state. */
  waitUntil(predicate: () => boolean): Promise<void>
  /** Fails held requests, drops connections and stops listening. */
  close(): Promise<void>
}

export async function startFakeChatServer(): Promise<FakeChatServer> {
  const requests: RecordedRequest[] = []
  const queue: Behaviour[] = []
  const held: Held[] = []
  const watchers = new Set<() => void>()
  let inFlight = 0
  let maxInFlight = 0
  let closed = false

  const changed = () => {
    for (const watcher of [...watchers]) watcher()
  }

  // Called when the answer is written (before the client can see it) or when the client goes away.
  const finishers = new WeakMap<ServerResponse, () => void>()
  const server: Server = createServer((req, res) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    let done = false
    const finish = () => {
      if (done) return
      done = true
      inFlight--
      changed()
    }
    finishers.set(res, finish)
    res.on('close', finish)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = record(req, Buffer.concat(chunks).toString('utf8'))
      res.on('close', () => {
        if (!res.writableEnded) {
          request.abandoned = true
          const index = held.findIndex((h) => h.res === res)
          if (index >= 0) held.splice(index, 1)
          changed()
        }
      })
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } })
        return
      }
      const behaviour = queue.shift() ?? api.defaultBehaviour
      respond(request, res, behaviour)
      changed()
    })
  })

  function record(req: IncomingMessage, raw: string): RecordedRequest {
    let body: Record<string, unknown> | undefined
    try {
      const parsed: unknown = JSON.parse(raw)
      if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>
    } catch {
      body = undefined
    }
    const chatMessages = Array.isArray(body?.messages)
      ? (body.messages as { role: string; content: string }[])
      : []
    const lastUser = [...chatMessages].reverse().find((m) => m.role === 'user')
    let input: InputMessage[] = []
    try {
      const parsed = JSON.parse(lastUser?.content ?? '') as { messages?: InputMessage[] }
      if (Array.isArray(parsed.messages)) input = parsed.messages
    } catch {
      input = []
    }
    const request: RecordedRequest = {
      index: requests.length,
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      authorization: req.headers.authorization,
      body,
      model: body?.model,
      responseFormat: body?.response_format,
      chatMessages,
      input,
      abandoned: false,
    }
    requests.push(request)
    return request
  }

  function respond(request: RecordedRequest, res: ServerResponse, behaviour: Behaviour): void {
    if (typeof behaviour === 'function') {
      respond(request, res, behaviour(request))
      return
    }
    if (behaviour === 'hold') {
      held.push({ request, res })
      return
    }
    if (typeof behaviour === 'object' && 'status' in behaviour) {
      const headers: Record<string, string> = behaviour.retryAfter
        ? { 'retry-after': behaviour.retryAfter }
        : {}
      const body = behaviour.body ?? {
        error: { message: `fake error ${behaviour.status}`, type: 'server_error', param: null, code: null },
      }
      sendJson(res, behaviour.status, body, headers)
      return
    }
    const results = computeResults(request.input)
    let content: string | null
    let finishReason = 'stop'
    if (typeof behaviour === 'object' && 'content' in behaviour) {
      content = behaviour.content
      finishReason = behaviour.finishReason ?? 'stop'
    } else if (typeof behaviour === 'object') {
      content = JSON.stringify(behaviour.transform(results, request))
    } else if (behaviour === 'malformed-json') {
      content = '{"results": [ this is not json'
    } else if (behaviour === 'schema-mismatch') {
      content = JSON.stringify({ analyses: results.map((r) => ({ id: r.messageId, mood: 'happy' })) })
    } else if (behaviour === 'wrong-ids') {
      content = JSON.stringify({ results: results.map((r, i) => ({ ...r, messageId: `wrong-${i}` })) })
    } else if (behaviour === 'missing-result') {
      content = JSON.stringify({ results: results.slice(1) })
    } else {
      content = JSON.stringify({ results })
    }
    sendJson(res, 200, completion(request, content, finishReason))
  }

  function release(entry: Held | undefined, behaviour: Behaviour): boolean {
    if (!entry) return false
    respond(entry.request, entry.res, behaviour)
    changed()
    return true
  }

  function sendJson(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    if (res.writableEnded || res.destroyed) return
    finishers.get(res)?.()
    const text = JSON.stringify(body)
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    })
    res.end(text)
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  const api: FakeChatServer = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get inFlight() {
      return inFlight
    },
    get maxInFlight() {
      return maxInFlight
    },
    get held() {
      return held.map((h) => h.request)
    },
    defaultBehaviour: 'ok',
    script(...behaviours) {
      queue.push(...behaviours)
    },
    releaseOldest(behaviour = 'ok') {
      return release(held.shift(), behaviour)
    },
    releaseHeld(behaviour = 'ok') {
      for (const entry of held.splice(0)) release(entry, behaviour)
    },
    releaseWhere(predicate, behaviour = 'ok') {
      const matching = held.filter((h) => predicate(h.request))
      for (const entry of matching) {
        held.splice(held.indexOf(entry), 1)
        release(entry, behaviour)
      }
      return matching.length
    },
    waitUntil(predicate) {
      if (predicate()) return Promise.resolve()
      return new Promise((resolve) => {
        const watcher = () => {
          if (!predicate()) return
          watchers.delete(watcher)
          resolve()
        }
        watchers.add(watcher)
      })
    },
    async close() {
      if (closed) return
      closed = true
      for (const entry of held.splice(0)) {
        sendJson(entry.res, 503, { error: { message: 'fake server closing', type: 'server_error' } })
      }
      const closing = once(server, 'close')
      server.close()
      server.closeAllConnections()
      await closing
    },
  }
  return api
}

export function computeResults(input: readonly InputMessage[]): FakeResult[] {
  return input.map((m) => {
    const explicit = /score=(-?\d+(?:\.\d+)?)/.exec(m.content)
    const score = explicit
      ? Number(explicit[1])
      : /\b(good|great|love|thanks)\b/i.test(m.content)
        ? 0.8
        : /\b(bad|awful|hate|broken)\b/i.test(m.content)
          ? -0.7
          : 0
    const label = score >= 0.05 ? 'positive' : score <= -0.05 ? 'negative' : 'neutral'
    const topics = [...m.content.matchAll(/#([\p{L}\p{N}_-]+)/gu)].map((match) => match[1]!)
    return { messageId: m.id, sentiment: { score, label }, topics }
  })
}

function completion(request: RecordedRequest, content: string | null, finishReason: string) {
  return {
    id: `chatcmpl-fake-${request.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof request.model === 'string' ? request.model : 'fake',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  }
}
