import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type FakeChatServer, startFakeChatServer } from '../../test/fake-chat-server.ts'
import { AnalyzerError, type MessageToAnalyze } from '../analyzer.ts'
import { createLlmAnalyzer, LLM_ANSWER_JSON_SCHEMA, type LlmAnalyzerOptions } from './llm.ts'

const API_KEY = 'sk-test-secret-key-123'

let server: FakeChatServer
let sleeps: number[]
let logs: { msg: string; fields?: Record<string, unknown> }[]

beforeEach(async () => {
  server = await startFakeChatServer()
  sleeps = []
  logs = []
})

afterEach(async () => {
  vi.unstubAllGlobals()
  await server.close()
})

function analyzer(overrides: Partial<LlmAnalyzerOptions> = {}) {
  return createLlmAnalyzer({
    baseUrl: server.baseUrl,
    apiKey: API_KEY,
    model: 'fake-model-1',
    timeoutMs: 5_000,
    maxRetries: 3,
    log: (msg, fields) => logs.push(fields ? { msg, fields } : { msg }),
    sleep: async (ms) => {
      sleeps.push(ms)
    },
    random: () => 0.5,
    ...overrides,
  })
}

function messages(n: number, content = (i: number) => `message ${i}`): MessageToAnalyze[] {
  return Array.from({ length: n }, (_, i) => ({ id: `m-${i}`, role: 'user' as const, content: content(i) }))
}

async function failure(promise: Promise<unknown>): Promise<AnalyzerError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(AnalyzerError)
  return err as AnalyzerError
}

describe('LLM analyzer', () => {
  it('analyzes more than a batch in several calls, in input order, with auth, model and a json_schema', async () => {
    const input = messages(45, (i) =>
      i % 3 === 0 ? `great stuff ${i}` : i % 3 === 1 ? `bad thing ${i}` : `meh ${i}`,
    )
    const results = await analyzer({ batchSize: 20 }).analyzeMessages(input, {})

    expect(server.requests).toHaveLength(3)
    expect(server.requests.map((r) => r.input.length).sort((a, b) => a - b)).toEqual([5, 20, 20])
    expect(results.map((r) => r.messageId)).toEqual(input.map((m) => m.id))
    expect(results[0]!.sentiment).toEqual({ score: 0.8, label: 'positive' })
    expect(results[1]!.sentiment).toEqual({ score: -0.7, label: 'negative' })
    expect(results[2]!.sentiment).toEqual({ score: 0, label: 'neutral' })
    for (const request of server.requests) {
      expect(request.path).toBe('/v1/chat/completions')
      expect(request.authorization).toBe(`Bearer ${API_KEY}`)
      expect(request.model).toBe('fake-model-1')
      expect(request.responseFormat).toEqual({
        type: 'json_schema',
        json_schema: { name: expect.any(String), strict: true, schema: LLM_ANSWER_JSON_SCHEMA },
      })
      expect(request.chatMessages[0]!.role).toBe('system')
    }
    expect(LLM_ANSWER_JSON_SCHEMA).toMatchObject({
      type: 'object',
      required: ['results'],
      additionalProperties: false,
    })
    expect(sleeps).toEqual([])
  })

  it('names itself after the model and versions prompt, schema and model', () => {
    const a = analyzer().info
    expect(a.name).toBe('llm:fake-model-1')
    expect(a.version).toMatch(/^v1-[0-9a-f]{8}$/)
    expect(analyzer().info.version).toBe(a.version)
    expect(analyzer({ model: 'fake-model-2' }).info.version).not.toBe(a.version)
    expect(analyzer({ temperature: 0 }).info.version).not.toBe(a.version)
  })

  it('normalizes scores, labels and topics, and applies the context topics', async () => {
    const input: MessageToAnalyze[] = [
      { id: 'a', role: 'user', content: 'score=1.7 #Billing #billing  # #Refunds' },
      { id: 'b', role: 'user', content: 'score=-3 my INVOICE is wrong #a #b #c #d #e #f' },
      { id: 'c', role: 'user', content: 'score=0.03 invoices are not invoice-like' },
    ]
    server.defaultBehaviour = {
      transform: (results) => ({
        results: results.map((r) => ({
          ...r,
          // A label contradicting the score, odd casing and spacing, a duplicate, an over-long topic.
          sentiment: { ...r.sentiment, label: 'negative' },
          topics: [...r.topics.map((t) => `  ${t.toUpperCase()}   Topic `), 'x'.repeat(65)],
        })),
      }),
    }
    const results = await analyzer().analyzeMessages(input, {
      topics: { Payments: ['invoice', 'credit card'] },
    })

    // Detected locally as the other analyzers do (language.ts); what it names these texts is not this test's.
    const anyLanguage = expect.stringMatching(/^[a-z]{2,3}$/)
    expect(results).toEqual([
      {
        messageId: 'a',
        sentiment: { score: 1, label: 'positive' },
        topics: ['billing topic', 'refunds topic'],
        language: anyLanguage,
      },
      {
        messageId: 'b',
        sentiment: { score: -1, label: 'negative' },
        topics: ['payments', 'a topic', 'b topic', 'c topic', 'd topic'],
        language: anyLanguage,
      },
      {
        messageId: 'c',
        sentiment: { score: 0.03, label: 'neutral' },
        // 'invoices' is not the whole word 'invoice'; 'invoice-like' is (a hyphen is not a word character).
        topics: ['payments'],
        language: anyLanguage,
      },
    ])
    const system = server.requests[0]!.chatMessages[0]!.content
    expect(system).toContain('- payments: invoice, credit card')
  })

  it('returns [] for no messages without a call, and rejects duplicate ids without a call', async () => {
    expect(await analyzer().analyzeMessages([], {})).toEqual([])
    const err = await failure(
      analyzer().analyzeMessages(
        [
          { id: 'x', role: 'user', content: 'a' },
          { id: 'x', role: 'user', content: 'b' },
        ],
        {},
      ),
    )
    expect(err).toMatchObject({ code: 'invalid_input', retryable: false })
    expect(server.requests).toHaveLength(0)
  })

  it('retries a 429 after its Retry-After', async () => {
    server.script({ status: 429, retryAfter: '2' })
    const results = await analyzer().analyzeMessages(messages(3), {})
    expect(results).toHaveLength(3)
    expect(server.requests).toHaveLength(2)
    expect(sleeps).toEqual([2000])
    expect(logs.some((l) => l.msg.includes('retrying') && l.fields?.code === 'rate_limited')).toBe(true)
  })

  it('backs off exponentially when there is no Retry-After', async () => {
    server.script({ status: 429 }, { status: 502 }, { status: 503 })
    await analyzer().analyzeMessages(messages(1), {})
    // random() = 0.5: three quarters of 500, 1000, 2000 ms.
    expect(sleeps).toEqual([375, 750, 1500])
  })

  it('gives up on persistent 500s after maxRetries + 1 attempts with a retryable error', async () => {
    server.defaultBehaviour = { status: 500 }
    const err = await failure(analyzer({ maxRetries: 2 }).analyzeMessages(messages(2), {}))
    expect(err).toMatchObject({ code: 'provider_error', retryable: true })
    expect(server.requests).toHaveLength(3)
    expect(sleeps).toHaveLength(2)
  })

  it('fails at once, not retryable, on a 401, without leaking the API key', async () => {
    server.script({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error' } },
    })
    const err = await failure(analyzer().analyzeMessages(messages(2), {}))
    expect(err).toMatchObject({ code: 'provider_error', retryable: false })
    expect(err.message).toContain('401')
    expect(err.message).not.toContain(API_KEY)
    expect(JSON.stringify(logs)).not.toContain(API_KEY)
    expect(server.requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('fails at once with invalid_input on a 400', async () => {
    server.script({ status: 400 })
    const err = await failure(analyzer().analyzeMessages(messages(2), {}))
    expect(err).toMatchObject({ code: 'invalid_input', retryable: false })
    expect(server.requests).toHaveLength(1)
  })

  it('retries malformed answers until a good one', async () => {
    server.script('malformed-json', 'schema-mismatch', 'wrong-ids')
    const results = await analyzer().analyzeMessages(messages(4), {})
    expect(results.map((r) => r.messageId)).toEqual(['m-0', 'm-1', 'm-2', 'm-3'])
    expect(server.requests).toHaveLength(4)
    expect(logs.filter((l) => l.fields?.code === 'malformed_response')).toHaveLength(3)
  })

  it('treats missing results, empty content and cut-off answers as malformed', async () => {
    server.script('missing-result', { content: null }, { content: '{"results": [', finishReason: 'length' })
    await analyzer().analyzeMessages(messages(2), {})
    expect(server.requests).toHaveLength(4)
    expect(logs.filter((l) => l.fields?.code === 'malformed_response')).toHaveLength(3)
  })

  it('accepts results in another order and JSON in a Markdown fence', async () => {
    server.script({
      content: `\`\`\`json\n${JSON.stringify({
        results: [
          { messageId: 'm-1', sentiment: { score: -0.5, label: 'negative' }, topics: [] },
          { messageId: 'm-0', sentiment: { score: 0.5, label: 'positive' }, topics: ['x'] },
        ],
      })}\n\`\`\``,
    })
    const results = await analyzer().analyzeMessages(messages(2), {})
    expect(results.map((r) => [r.messageId, r.sentiment.score])).toEqual([
      ['m-0', 0.5],
      ['m-1', -0.5],
    ])
    expect(server.requests).toHaveLength(1)
  })

  it('gives up on always-malformed answers with malformed_response', async () => {
    server.defaultBehaviour = 'malformed-json'
    const err = await failure(analyzer({ maxRetries: 1 }).analyzeMessages(messages(2), {}))
    expect(err).toMatchObject({ code: 'malformed_response', retryable: true })
    expect(server.requests).toHaveLength(2)
  })

  it('times out a slow call and retries it', async () => {
    server.script('hold')
    const results = await analyzer({ timeoutMs: 500 }).analyzeMessages(messages(2), {})
    expect(results).toHaveLength(2)
    expect(server.requests).toHaveLength(2)
    await server.waitUntil(() => server.requests[0]!.abandoned)
    expect(logs.some((l) => l.fields?.code === 'timeout')).toBe(true)
  })

  it('gives up on persistent timeouts with a retryable timeout error', async () => {
    server.defaultBehaviour = 'hold'
    const err = await failure(analyzer({ timeoutMs: 50, maxRetries: 1 }).analyzeMessages(messages(1), {}))
    expect(err).toMatchObject({ code: 'timeout', retryable: true })
    expect(server.requests).toHaveLength(2)
  })

  it('never has more calls in flight than the concurrency cap, across analyzeMessages calls', async () => {
    // Count the fetches the client starts too: a missing cap would start them all at once, before the server
    // has seen any, so the server's count alone could miss it when requests trickle in.
    let started = 0
    const realFetch = globalThis.fetch
    vi.stubGlobal('fetch', (...args: Parameters<typeof fetch>) => {
      started++
      return realFetch(...args)
    })
    server.defaultBehaviour = 'hold'
    const llm = analyzer({ concurrency: 2, batchSize: 3 })
    vi.unstubAllGlobals()
    // 8 + 4 chunks from two concurrent batches share the cap.
    const first = llm.analyzeMessages(messages(24), {})
    const second = llm.analyzeMessages(
      messages(12).map((m) => ({ ...m, id: `n-${m.id}` })),
      {},
    )
    const total = 12
    for (let released = 0; released < total; released++) {
      await server.waitUntil(() => server.held.length >= Math.min(2, total - released))
      expect(started).toBeLessThanOrEqual(released + 2)
      expect(server.inFlight).toBeLessThanOrEqual(2)
      server.releaseOldest()
    }
    const [a, b] = await Promise.all([first, second])
    expect(a.map((r) => r.messageId)).toEqual(messages(24).map((m) => m.id))
    expect(b.map((r) => r.messageId)).toEqual(messages(12).map((m) => `n-${m.id}`))
    expect(started).toBe(12)
    expect(server.requests).toHaveLength(12)
    expect(server.maxInFlight).toBe(2)
  })

  it('stops an in-flight call when the caller aborts', async () => {
    server.defaultBehaviour = 'hold'
    const controller = new AbortController()
    const pending = analyzer().analyzeMessages(messages(2), {}, controller.signal)
    await server.waitUntil(() => server.held.length === 1)
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    await server.waitUntil(() => server.requests[0]!.abandoned)
    expect(server.requests).toHaveLength(1)
  })

  it('stops a backoff and queued calls when the caller aborts, with the caller reason', async () => {
    server.defaultBehaviour = { status: 500 }
    let sleepCalls = 0
    let sleeping!: () => void
    const asleep = new Promise<void>((resolve) => {
      sleeping = resolve
    })
    const controller = new AbortController()
    const llm = analyzer({
      concurrency: 1,
      batchSize: 1,
      // Backs off forever: only the abort can end it.
      sleep: () => {
        sleepCalls++
        sleeping()
        return new Promise(() => {})
      },
    })
    const pending = llm.analyzeMessages(messages(3), {}, controller.signal)
    await asleep
    const reason = new Error('shutting down')
    controller.abort(reason)
    await expect(pending).rejects.toBe(reason)
    // No permit is left taken: a new batch on the same analyzer goes through (concurrency 1).
    server.defaultBehaviour = 'ok'
    const after = await llm.analyzeMessages([{ id: 'z', role: 'user', content: 'hello' }], {})
    expect(after.map((r) => r.messageId)).toEqual(['z'])
    // The third chunk was still queued for the permit: it never went out, and nothing backed off again.
    expect(server.requests.some((r) => r.input[0]?.id === 'm-2')).toBe(false)
    expect(sleepCalls).toBe(1)
  })

  it('makes no call when the signal is already aborted', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(analyzer().analyzeMessages(messages(2), {}, controller.signal)).rejects.toMatchObject({
      name: 'AbortError',
    })
    expect(server.requests).toHaveLength(0)
  })

  it('cancels the other chunks when one fails for good', async () => {
    server.defaultBehaviour = 'hold'
    // No timeout in sight: only the cancellation can end the held call.
    const llm = analyzer({ batchSize: 1, concurrency: 2, timeoutMs: 600_000 })
    const pending = llm.analyzeMessages(messages(2), {})
    await server.waitUntil(() => server.held.length === 2)
    server.releaseWhere((r) => r.input[0]?.id === 'm-1', { status: 401 })
    const err = await failure(pending)
    expect(err).toMatchObject({ code: 'provider_error', retryable: false })
    await server.waitUntil(() => server.requests.some((r) => r.input[0]?.id === 'm-0' && r.abandoned))
    expect(server.requests).toHaveLength(2)
  })
})
