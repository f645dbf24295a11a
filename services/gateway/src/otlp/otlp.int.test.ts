/**
 * Issue 33: POST /v1/traces as OTLP/HTTP says, driven with hand-made requests (the official exporters'
 * tests are test/otel-*.test.ts): OTLP/JSON with structured attribute values, protobuf, gzip, partial
 * success, the answers' encodings, and bad input refused with a google.rpc.Status, storing nothing.
 */
import { gzipSync } from 'node:zlib'
import protobuf from 'protobufjs'
import { describe, expect, it } from 'vitest'
import { captureBody, createChatbot } from '../../../../test/support/chatbots.ts'
import { buildTestGateway, useSignedInGateway } from '../../../../test/support/gateway.ts'
import { countRows, journalEvents } from '../../../../test/support/journal.ts'
import { decodeResponse, decodeStatus } from './codec.ts'
import { OTLP_DESCRIPTOR } from './descriptor.ts'

const gateway = useSignedInGateway()

const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR as unknown as protobuf.INamespace)
const RequestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest')

const NANOS = 1_000_000n
const nanos = (ms: number) => String(BigInt(ms) * NANOS)
const T0 = Date.now() - 10 * 60_000

type Value = Record<string, unknown>
const str = (stringValue: string): Value => ({ stringValue })
const kv = (values: Record<string, Value>): Value => ({
  kvlistValue: { values: Object.entries(values).map(([key, value]) => ({ key, value })) },
})
const arr = (...values: Value[]): Value => ({ arrayValue: { values } })

/** An OTLP/JSON span. */
function span(opts: {
  traceId?: string
  spanId?: string
  name?: string
  startMs: number
  attributes: Record<string, Value>
  events?: { name: string; timeMs: number; attributes: Record<string, Value> }[]
}) {
  return {
    traceId: opts.traceId ?? '5b8efff798038103d269b633813fc60c',
    spanId: opts.spanId ?? 'eee19b7ec3c1b174',
    name: opts.name ?? 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: nanos(opts.startMs),
    endTimeUnixNano: nanos(opts.startMs + 1_000),
    attributes: Object.entries(opts.attributes).map(([key, value]) => ({ key, value })),
    events: (opts.events ?? []).map((e) => ({
      name: e.name,
      timeUnixNano: nanos(e.timeMs),
      attributes: Object.entries(e.attributes).map(([key, value]) => ({ key, value })),
    })),
  }
}

const request = (...spans: unknown[]) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: str('support-bot') }] },
      scopeSpans: [{ scope: { name: 'test' }, spans }],
    },
  ],
})

async function newKey(): Promise<{ apiKey: string; chatbotId: string }> {
  const { apiKey, chatbot } = await createChatbot(gateway.app, gateway.cookie, { name: 'OTel' })
  return { apiKey, chatbotId: chatbot.id }
}

function post(
  body: string | Buffer | object,
  apiKey: string | undefined,
  headers: Record<string, string> = {},
) {
  return gateway.app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers: {
      'content-type': 'application/json',
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...headers,
    },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  })
}

/**
 * A conversation as its events tell it (this file runs no projector): its end user, and its messages in
 * the order the read model shows them (sentAt, then arrival).
 */
async function conversation(chatbotId: string, externalId: string) {
  const { rows } = await gateway.db.pool.query<{ id: string }>(
    'SELECT id FROM capture_conversations WHERE chatbot_id = $1 AND external_id = $2',
    [chatbotId, externalId],
  )
  if (!rows[0]) return undefined
  const events = await journalEvents(gateway.db.pool, 'conversation', rows[0].id)
  const started = events.find((e) => e.type === 'conversation.started')
  const messages = events
    .filter((e) => e.type === 'conversation.messages-captured')
    .flatMap((e) => e.payload.messages as unknown as { role: string; content: string; sentAt: string }[])
  return {
    user: started?.payload.user as Record<string, unknown>,
    messages: messages
      .map((m, n) => ({ ...m, n }))
      .sort((a, b) => a.sentAt.localeCompare(b.sentAt) || a.n - b.n),
  }
}

const turns = (c: { messages: { role: string; content: string }[] } | undefined) =>
  c?.messages.map((m) => `${m.role}: ${m.content}`)

describe('POST /v1/traces, OTLP/JSON', () => {
  it('stores structured gen_ai.input/output.messages, each message once when later spans repeat the history', async () => {
    const { apiKey, chatbotId } = await newKey()
    const user1 = kv({
      role: str('user'),
      parts: arr(kv({ type: str('text'), content: str('Where is my parcel?') })),
    })
    const first = span({
      startMs: T0,
      spanId: '0000000000000001',
      attributes: {
        'gen_ai.operation.name': str('chat'),
        'gen_ai.conversation.id': str('order-1234'),
        'user.id': str('end-user-7'),
        'gen_ai.system_instructions': arr(kv({ type: str('text'), content: str('You are a courier bot.') })),
        'gen_ai.input.messages': arr(user1),
        'gen_ai.output.messages': arr(
          kv({
            role: str('assistant'),
            parts: arr(
              kv({ type: str('text'), content: str('Let me look.') }),
              kv({
                type: str('tool_call'),
                id: str('c1'),
                name: str('track'),
                arguments: kv({ id: str('P1') }),
              }),
            ),
            finish_reason: str('tool_call'),
          }),
        ),
      },
    })
    const res = await post(request(first), apiKey)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.json()).toEqual({})

    // The second turn repeats the first (as JSON strings this time), adds the tool's answer and a reply.
    const history = [
      { role: 'user', parts: [{ type: 'text', content: 'Where is my parcel?' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Let me look.' },
          { type: 'tool_call', id: 'c1', name: 'track', arguments: { id: 'P1' } },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'in Lyon' }] },
    ]
    const second = span({
      startMs: T0 + 5_000,
      spanId: '0000000000000002',
      attributes: {
        'gen_ai.conversation.id': str('order-1234'),
        'gen_ai.system_instructions': str(
          JSON.stringify([{ type: 'text', content: 'You are a courier bot.' }]),
        ),
        'gen_ai.input.messages': str(JSON.stringify(history)),
        'gen_ai.output.messages': str(
          JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'It is in Lyon.' }] }]),
        ),
      },
    })
    const again = await post(request(second), apiKey)
    expect(again.statusCode, again.body).toBe(200)
    // Sent twice (an exporter retrying): nothing more.
    const before = await countRows(gateway.db.pool, 'event_journal')
    expect((await post(request(second), apiKey)).statusCode).toBe(200)
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)

    const stored = await conversation(chatbotId, 'order-1234')
    expect(stored?.user).toEqual({ id: 'end-user-7' })
    expect(turns(stored)).toEqual([
      'system: You are a courier bot.',
      'user: Where is my parcel?',
      'assistant: Let me look.',
      'tool: track({"id":"P1"})',
      'tool: in Lyon',
      'assistant: It is in Lyon.',
    ])
  })

  it('reads gen_ai.prompt.N / gen_ai.completion.N and the gen_ai.*.message / gen_ai.choice events; the trace is the conversation', async () => {
    const { apiKey, chatbotId } = await newKey()
    const traceId = 'abcdefabcdefabcdefabcdefabcdef01'
    const legacy = span({
      traceId,
      spanId: '00000000000000a1',
      startMs: T0,
      attributes: {
        'gen_ai.system': str('openai'),
        'gen_ai.prompt.0.role': str('system'),
        'gen_ai.prompt.0.content': str('Be brief.'),
        'gen_ai.prompt.1.role': str('user'),
        'gen_ai.prompt.1.content': str('Hi there'),
        'gen_ai.completion.0.role': str('assistant'),
        'gen_ai.completion.0.content': str('Hello!'),
      },
    })
    const events = span({
      traceId,
      spanId: '00000000000000a2',
      startMs: T0 + 3_000,
      attributes: { 'gen_ai.system': str('openai') },
      events: [
        { name: 'gen_ai.system.message', timeMs: T0 + 3_000, attributes: { content: str('Be brief.') } },
        { name: 'gen_ai.user.message', timeMs: T0 + 3_000, attributes: { content: str('Hi there') } },
        { name: 'gen_ai.assistant.message', timeMs: T0 + 3_000, attributes: { content: str('Hello!') } },
        { name: 'gen_ai.user.message', timeMs: T0 + 3_000, attributes: { content: str('Bye') } },
        {
          name: 'gen_ai.choice',
          timeMs: T0 + 4_000,
          attributes: {
            index: { intValue: '0' },
            finish_reason: str('stop'),
            message: kv({ role: str('assistant'), content: str('Goodbye!') }),
          },
        },
      ],
    })
    const noise = span({
      traceId,
      spanId: '00000000000000a3',
      name: 'GET /health',
      startMs: T0,
      attributes: { 'http.request.method': str('GET') },
    })
    const res = await post(request(noise, events, legacy), apiKey)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({})
    expect(turns(await conversation(chatbotId, traceId))).toEqual([
      'system: Be brief.',
      'user: Hi there',
      'assistant: Hello!',
      'user: Bye',
      'assistant: Goodbye!',
    ])
  })

  it('rejects a span it cannot store, alone, in partialSuccess; warns of spans without content', async () => {
    const { apiKey, chatbotId } = await newKey()
    const ok = span({
      spanId: '00000000000000b1',
      startMs: T0,
      attributes: {
        'gen_ai.conversation.id': str('partial'),
        'gen_ai.input.messages': str(JSON.stringify([{ role: 'user', content: 'Is this stored?' }])),
      },
    })
    const tooLong = span({
      spanId: '00000000000000b2',
      startMs: T0,
      attributes: {
        'gen_ai.conversation.id': str('partial'),
        'gen_ai.input.messages': str(JSON.stringify([{ role: 'user', content: 'x'.repeat(40_000) }])),
      },
    })
    const nul = span({
      spanId: '00000000000000b3',
      startMs: T0,
      attributes: { 'gen_ai.conversation.id': str('bad\u0000id'), 'gen_ai.prompt.0.content': str('hi') },
    })
    const empty = span({
      spanId: '00000000000000b4',
      startMs: T0,
      attributes: { 'gen_ai.request.model': str('gpt-4o') },
    })
    const res = await post(request(ok, tooLong, nul, empty), apiKey)
    expect(res.statusCode, res.body).toBe(200)
    const { partialSuccess } = res.json()
    expect(partialSuccess.rejectedSpans).toBe('2')
    expect(partialSuccess.errorMessage).toContain(
      'span 00000000000000b2: a user message is longer than 32,768',
    )
    expect(partialSuccess.errorMessage).toContain('span 00000000000000b3: the conversation id holds U+0000')
    expect(partialSuccess.errorMessage).toContain('1 GenAI span(s) carried no message content')
    expect(turns(await conversation(chatbotId, 'partial'))).toEqual(['user: Is this stored?'])
  })
})

describe('POST /v1/traces, odd but valid input: stored, never a 500', () => {
  it('takes a time past the year 9999, deeply nested tool arguments and a __proto__ attribute', async () => {
    const { apiKey, chatbotId } = await newKey()
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
    const odd = {
      ...span({
        startMs: T0,
        attributes: {
          'gen_ai.conversation.id': str('odd'),
          'gen_ai.prompt.0.role': str('user'),
          'gen_ai.prompt.0.content': str('Still here?'),
          'gen_ai.prompt.0.__proto__': str('x'),
          'gen_ai.completion.0.role': str('assistant'),
          'gen_ai.completion.0.tool_calls.0.name': str('deep'),
          'gen_ai.completion.0.tool_calls.0.arguments': str(deep),
        },
      }),
      endTimeUnixNano: '99999999999999999999',
    }
    const res = await post(request(odd), apiKey)
    expect(res.statusCode, res.body).toBe(200)
    const stored = await conversation(chatbotId, 'odd')
    expect(stored?.messages.map((m) => m.role)).toEqual(['user', 'tool'])
    expect(stored?.messages[0]?.content).toBe('Still here?')
  })
})

describe('POST /v1/traces, protobuf', () => {
  it('takes a gzip protobuf request and answers in protobuf', async () => {
    const { apiKey, chatbotId } = await newKey()
    const json = request(
      span({
        startMs: T0,
        attributes: {
          'session.id': str('proto-session'),
          'enduser.id': str('u-proto'),
          'gen_ai.input.messages': str(JSON.stringify([{ role: 'user', content: 'Protobuf hello' }])),
        },
      }),
      span({
        spanId: '00000000000000c2',
        startMs: T0,
        attributes: {
          'gen_ai.conversation.id': str('proto-rejected'),
          'gen_ai.input.messages': str(JSON.stringify([{ role: 'user', content: 'y'.repeat(33_000) }])),
        },
      }),
    )
    // OTLP/JSON's hex ids are protobuf bytes.
    const withBytes = JSON.parse(JSON.stringify(json), (key, value) =>
      key === 'traceId' || key === 'spanId' ? Buffer.from(value, 'hex') : value,
    )
    const bytes = RequestType.encode(RequestType.fromObject(withBytes)).finish()
    const res = await post(gzipSync(bytes), apiKey, {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['content-type']).toBe('application/x-protobuf')
    const answer = decodeResponse(res.rawPayload)
    expect(answer.partialSuccess?.rejectedSpans).toBe('1')
    const stored = await conversation(chatbotId, 'proto-session')
    expect(stored?.user).toEqual({ id: 'u-proto' })
    expect(turns(stored)).toEqual(['user: Protobuf hello'])
  })
})

describe('POST /v1/traces, bad input: a google.rpc.Status, nothing stored', () => {
  it('answers garbage protobuf, bad gzip, bad JSON, a wrong key and other media types', async () => {
    const { apiKey } = await newKey()
    const before = await countRows(gateway.db.pool, 'event_journal')

    const garbage = await post(Buffer.from('this is not protobuf'), apiKey, {
      'content-type': 'application/x-protobuf',
    })
    expect(garbage.statusCode).toBe(400)
    expect(garbage.headers['content-type']).toBe('application/x-protobuf')
    expect(decodeStatus(garbage.rawPayload)).toMatchObject({
      code: 3,
      message: expect.stringContaining('not a protobuf ExportTraceServiceRequest'),
    })

    const badGzip = await post(Buffer.from('not gzip at all'), apiKey, {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    })
    expect(badGzip.statusCode).toBe(400)
    expect(decodeStatus(badGzip.rawPayload).message).toContain('not valid gzip')

    const badJson = await post('{"resourceSpans": [', apiKey)
    expect(badJson.statusCode).toBe(400)
    expect(badJson.json()).toEqual({ code: 3, message: 'The request body is not valid JSON.' })

    const wrongShape = await post(
      { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'xyz' }] }] }] },
      apiKey,
    )
    expect(wrongShape.statusCode).toBe(400)
    expect(wrongShape.json().message).toContain('traceId must be hex-encoded bytes')

    const wrongKey = await post(request(), 'svc_live_0000000000000000000000000000000000000000')
    expect(wrongKey.statusCode).toBe(401)
    expect(wrongKey.json()).toMatchObject({ code: 16 })
    const noKey = await post(Buffer.from([]), undefined, { 'content-type': 'application/x-protobuf' })
    expect(noKey.statusCode).toBe(401)
    expect(decodeStatus(noKey.rawPayload)).toMatchObject({ code: 16 })

    const text = await post('hello', apiKey, { 'content-type': 'text/plain' })
    expect(text.statusCode).toBe(415)
    expect(decodeStatus(text.rawPayload)).toMatchObject({ code: 3 })
    const brotli = await post(request(), apiKey, { 'content-encoding': 'br' })
    expect(brotli.statusCode).toBe(415)
    expect(brotli.json().message).toContain('Content-Encoding br is not supported')

    const empty = await post(Buffer.from([]), apiKey)
    expect(empty.statusCode).toBe(400)
    expect(empty.json().message).toContain('missing')

    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })

  it('takes an empty export (no spans) and spans that are not GenAI, storing nothing', async () => {
    const { apiKey } = await newKey()
    const before = await countRows(gateway.db.pool, 'event_journal')
    expect((await post({}, apiKey)).json()).toEqual({})
    // One ResourceSpans, empty (field 1, length 0).
    const none = await post(Buffer.from([0x0a, 0x00]), apiKey, { 'content-type': 'application/x-protobuf' })
    expect(none.statusCode).toBe(200)
    expect(none.rawPayload.length).toBe(0)
    const http = span({ startMs: T0, name: 'GET /', attributes: { 'http.route': str('/') } })
    const res = await post(request(http), apiKey)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({})
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })
})

describe('POST /v1/traces, rate limit', () => {
  it('shares capture budget per key: past it, 429 with Retry-After and a google.rpc.Status', async () => {
    const limited = await buildTestGateway(gateway.db, { CAPTURE_RATE_LIMIT_PER_MINUTE: '3' })
    try {
      const { apiKey } = await createChatbot(limited.app, gateway.cookie, { name: 'Limited' })
      const send = (path: string, payload: object) =>
        limited.app.inject({
          method: 'POST',
          url: path,
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        })
      const statuses = [
        (await send('/api/v1/capture', captureBody('rl-capture'))).statusCode,
        (await send('/v1/traces', request())).statusCode,
        (await send('/v1/traces', request())).statusCode,
      ]
      expect(statuses).toEqual([200, 200, 200])
      const over = await send('/v1/traces', request())
      expect(over.statusCode).toBe(429)
      expect(over.json()).toEqual({ code: 8, message: expect.stringContaining('Too many requests') })
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    } finally {
      await limited.app.close()
    }
  })
})

describe('the OpenAPI document', () => {
  it('describes POST /v1/traces, its two encodings and every answer', async () => {
    const doc = (await gateway.app.inject('/api/v1/openapi.json')).json()
    const route = doc.paths['/v1/traces'].post
    expect(route.summary).toBe('Ingest OpenTelemetry GenAI traces (OTLP/HTTP)')
    expect(route.description).toContain('gen_ai.input.messages')
    expect(Object.keys(route.requestBody.content).sort()).toEqual([
      'application/json',
      'application/x-protobuf',
    ])
    expect(Object.keys(route.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '413',
      '415',
      '429',
      '500',
      '503',
    ])
    for (const response of Object.values(route.responses) as { description: string }[]) {
      expect(response.description.length).toBeGreaterThan(20)
    }
  })
})
