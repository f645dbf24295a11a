import net, { type AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { waitFor } from '../../../test/support/wait.ts'
import { createHttpApp } from './create-app.ts'
import { AppError } from './errors.ts'
import { MAX_BODY_DEPTH } from './json-depth.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()))
})

async function app(opts: Partial<Parameters<typeof createHttpApp>[0]> = {}) {
  const a = await createHttpApp({ logger: false, readiness: [], ...opts })
  a.get('/work', async (request) => ({ ok: true, requestId: request.id }))
  a.get('/fail', async () => {
    throw new AppError('unavailable', 'Try later.')
  })
  apps.push(a)
  return a
}

/** A pino logger whose JSON lines land in `lines`. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

/** Keeps the event loop busy for `ms`, as a request doing heavy synchronous work would. */
function blockEventLoop(ms: number) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    // spin
  }
}

describe('logging of expected 5xx answers', () => {
  it('logs a 503 AppError (retryable, expected) at warn without a stack, and a 500 AppError at error', async () => {
    const { logger, lines } = capturingLogger()
    const a = await app({ logger })
    a.get('/broken', async () => {
      throw new AppError('internal', 'Something of ours failed.')
    })
    expect((await a.inject('/fail')).statusCode).toBe(503)
    expect((await a.inject('/broken')).statusCode).toBe(500)
    const unavailable = lines.find((l) => l.msg === 'request unavailable')
    expect(unavailable).toMatchObject({ level: 40, code: 'unavailable', reason: 'Try later.' })
    expect(JSON.stringify(unavailable)).not.toContain('stack')
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual(['request failed'])
  })
})

describe('request log lines', () => {
  it("name no query value and no end user's id in a path: a search of message text and an erased end user stay out of the log", async () => {
    // Given an app with the erasure route's shape and a list route
    const { logger, lines } = capturingLogger()
    const a = await app({ logger })
    a.delete('/api/v1/chatbots/:id/users/:userId', async () => ({ ok: true }))
    a.get('/api/v1/conversations', async () => ({ ok: true }))

    // When an end user is erased and conversations are searched by text and end user
    await a.inject({ method: 'DELETE', url: '/api/v1/chatbots/bot-7/users/alice%40example.com' })
    await a.inject('/api/v1/conversations?q=my%20card%20number&userId=bob-42&limit=5&flag')

    // Then neither the end users nor the search text is in any line, and the lines still say what was asked
    const text = JSON.stringify(lines)
    for (const secret of ['alice', 'bob-42', 'card', 'number']) expect(text).not.toContain(secret)
    const urls = lines.filter((l) => l.msg === 'incoming request').map((l) => (l.req as { url: string }).url)
    expect(urls).toEqual([
      '/api/v1/chatbots/bot-7/users/…',
      '/api/v1/conversations?q=…&userId=…&limit=…&flag',
    ])
  })
})

describe('API answers', () => {
  it('are not cached nor sniffed, errors included; other paths keep their own headers', async () => {
    // Given an app with an API route and another
    const a = await app()
    a.get('/api/v1/thing', async () => ({ ok: true, secret: 'an end user said this' }))
    a.get('/page', async (_request, reply) => reply.header('cache-control', 'max-age=60').send('page'))

    // When each is read, and an API path that does not exist
    const answers = await Promise.all(
      ['/api/v1/thing', '/api/v1/nothing', '/page'].map((url) => a.inject(url)),
    )

    // Then the API's answers say no-store and nosniff; the other page is left as it was
    for (const res of answers.slice(0, 2)) {
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
    }
    expect(answers[1]!.statusCode).toBe(404)
    expect(answers[2]!.headers['cache-control']).toBe('max-age=60')
  })
})

describe('request ids', () => {
  it('keeps a well-formed X-Request-Id, echoes it, and logs it as requestId', async () => {
    const { logger, lines } = capturingLogger()
    const a = await app({ logger })
    const res = await a.inject({ url: '/work', headers: { 'x-request-id': 'chatbot-7f3a:42' } })
    expect(res.headers['x-request-id']).toBe('chatbot-7f3a:42')
    expect(res.json().requestId).toBe('chatbot-7f3a:42')
    const completed = lines.find((l) => l.msg === 'request completed')
    expect(completed).toMatchObject({ requestId: 'chatbot-7f3a:42' })
  })

  it.each([
    ['too long', 'x'.repeat(129)],
    ['with spaces', 'two words'],
    ['with a newline', 'a\nb'],
    ['with quotes', '"injected"'],
    ['empty', ''],
  ])('replaces an X-Request-Id %s with a fresh UUID', async (_, header) => {
    const a = await app()
    const res = await a.inject({ url: '/work', headers: { 'x-request-id': header } })
    expect(res.headers['x-request-id']).toMatch(UUID)
    expect(res.json().requestId).toBe(res.headers['x-request-id'])
  })

  it('makes one up when none is sent, on error responses too', async () => {
    const a = await app()
    const ok = await a.inject('/work')
    const missing = await a.inject('/nowhere')
    expect(ok.headers['x-request-id']).toMatch(UUID)
    expect(missing.headers['x-request-id']).toMatch(UUID)
    expect(missing.headers['x-request-id']).not.toBe(ok.headers['x-request-id'])
  })
})

describe('GET /metrics', () => {
  it('serves the Prometheus text with request counts and latency by route and status', async () => {
    const a = await app()
    await a.inject('/work')
    await a.inject('/work')
    await a.inject('/fail')
    await a.inject('/nowhere')
    const res = await a.inject('/metrics')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(res.body).toContain(
      'cas_http_request_duration_seconds_count{method="GET",route="/work",status_code="200"} 2',
    )
    expect(res.body).toContain(
      'cas_http_request_duration_seconds_count{method="GET",route="/fail",status_code="503"} 1',
    )
    expect(res.body).toContain(
      'cas_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"} 1',
    )
    expect(res.body).toMatch(/^process_cpu_user_seconds_total \d/m)
  })

  it('is not in the OpenAPI document', async () => {
    const a = await app()
    const doc = (await a.inject('/api/v1/openapi.json')).json()
    expect(Object.keys(doc.paths)).not.toContain('/metrics')
  })
})

describe('503 answers', () => {
  it('carry a Retry-After and the API error body', async () => {
    const a = await app()
    const res = await a.inject('/fail')
    expect(res.statusCode).toBe(503)
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
    expect(res.json()).toEqual({ ok: false, error: { code: 'unavailable', message: 'Try later.' } })
  })
})

describe('closing', () => {
  it('refuses new connections, finishes the requests in flight, and does not wait for idle keep-alive clients', async () => {
    const a = await createHttpApp({ logger: false, readiness: [] })
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => {
      started = resolve
    })
    a.get('/slow', async () => {
      started()
      await gate
      return { ok: true }
    })
    await a.listen({ port: 0, host: '127.0.0.1' })
    const { port } = a.server.address() as AddressInfo

    // A client that would keep its connection open after the answer (HTTP/1.1 keep-alive).
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString()
    })
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n')
    await inFlight

    const closed = a.close()
    await expect(fetch(`http://127.0.0.1:${port}/slow`)).rejects.toThrow()
    open()
    await closed
    await ended
    expect(received).toMatch(/^HTTP\/1\.1 200 /)
    expect(received).toMatch(/\r\nconnection: close\r\n/i)
    expect(received).toContain('{"ok":true}')
  })
})

describe('load shedding on event-loop delay', () => {
  it('answers 503 + Retry-After while the event loop is delayed, keeps health and metrics up, then recovers', async () => {
    const a = await app({
      loadShedding: { maxEventLoopDelayMs: 50, maxPoolWaiting: 0, pools: [], sampleIntervalMs: 200 },
    })
    await a.ready()
    expect((await a.inject('/work')).statusCode).toBe(200)
    // The delay monitor's first tick only starts its clock, so a block before it goes unseen: block
    // until one is seen rather than waiting a while for that tick.
    const [shed, health, metrics] = await waitFor(
      async () => {
        blockEventLoop(1_500)
        // The overdue sample runs before this timer and sees the block: requests are shed until the
        // next, calm, sample.
        await new Promise((r) => setTimeout(r, 0))
        const answers = await Promise.all([a.inject('/work'), a.inject('/healthz'), a.inject('/metrics')])
        return answers[0].statusCode === 503 && answers
      },
      { what: 'a request shed while the event loop is delayed' },
    )
    expect(shed.statusCode).toBe(503)
    expect(Number(shed.headers['retry-after'])).toBeGreaterThan(0)
    expect(shed.json()).toMatchObject({ ok: false, error: { code: 'unavailable' } })
    expect(health.statusCode).toBe(200)
    expect(metrics.statusCode).toBe(200)

    await expect
      .poll(async () => (await a.inject('/work')).statusCode, { timeout: 10_000, interval: 20 })
      .toBe(200)
    const text = (await a.inject('/metrics')).body
    expect(text).toMatch(/^cas_http_unavailable_responses_total\{reason="event_loop_delay"\} [1-9]/m)
  })

  it('does not count the work of starting up as load', async () => {
    const a = await app({
      loadShedding: { maxEventLoopDelayMs: 50, maxPoolWaiting: 0, pools: [], sampleIntervalMs: 200 },
    })
    // Starting up: some asynchronous set-up (the gateway reads its session secret), then heavy work.
    // Bounded on purpose (a negative check): long enough for a monitor started at creation to start its
    // clock (10 ms ticks) and see the block below, so sampling before ready would fail the test.
    await new Promise((r) => setTimeout(r, 50))
    blockEventLoop(1_500)
    await a.ready()
    // Where a sample taken now would see the block (as in the test above), none does: sampling starts
    // once the app is ready.
    await new Promise((r) => setTimeout(r, 0))
    expect((await a.inject('/work')).statusCode).toBe(200)
  })
})

describe('request bodies', () => {
  /** JSON text of `depth` objects nested under "a" (as text: JSON.stringify of the value would overflow). */
  const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{"a":1}${'}'.repeat(depth - 1)}`

  async function bodyApp() {
    const a = await app()
    const r = a.withTypeProvider<ZodTypeProvider>()
    r.post('/echo', { schema: { body: z.object({ value: z.json() }) } }, async (request) => ({
      ok: true,
      body: request.body,
    }))
    r.post('/no-body', async () => ({ ok: true }))
    r.delete('/no-body', async () => ({ ok: true }))
    return a
  }
  const post = (a: FastifyInstance, url: string, payload: string, type = 'application/json') =>
    a.inject({ method: 'POST', url, headers: { 'content-type': type }, payload })

  it('refuses a compressed body where the route does not decompress with 415 saying so, not "not valid JSON"', async () => {
    // Given a route that takes a JSON body and decompresses nothing
    const a = await bodyApp()
    const json = JSON.stringify({ value: 'hello' })
    const send = (headers: Record<string, string>, payload: string | Buffer) =>
      a.inject({
        method: 'POST',
        url: '/echo',
        headers: { 'content-type': 'application/json', ...headers },
        payload,
      })

    // When it is sent gzip-compressed, then uncompressed, then as identity
    const gzipped = await send({ 'content-encoding': 'gzip' }, gzipSync(json))
    const plain = await send({}, json)
    const identity = await send({ 'content-encoding': 'identity' }, json)

    // Then the compressed one is 415 naming the encoding, and the others go through
    expect(gzipped.statusCode).toBe(415)
    expect(gzipped.json()).toEqual({
      ok: false,
      error: {
        code: 'unsupported_media_type',
        message: 'Content-Encoding gzip is not taken by this route: send the body uncompressed.',
      },
    })
    expect(plain.statusCode).toBe(200)
    expect(identity.statusCode).toBe(200)
  })

  it('Regression (issue 16): a body nested 5,000 levels deep answered 500; it is a 400 naming the path', async () => {
    const a = await bodyApp()
    const res = await post(a, '/echo', `{"value":${nested(5_000)}}`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: `The request body nests deeper than ${MAX_BODY_DEPTH} levels of objects and arrays.`,
        details: [
          {
            path: `/value${'/a'.repeat(MAX_BODY_DEPTH - 1)}`,
            message: `nested deeper than ${MAX_BODY_DEPTH} levels`,
            in: 'body',
          },
        ],
      },
    })
  })

  it(`takes bodies ${MAX_BODY_DEPTH} levels deep, arrays counting as levels too`, async () => {
    const a = await bodyApp()
    expect((await post(a, '/echo', `{"value":${nested(MAX_BODY_DEPTH - 1)}}`)).statusCode).toBe(200)
    const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
    expect((await post(a, '/echo', `{"value":${arrays(MAX_BODY_DEPTH - 1)}}`)).statusCode).toBe(200)
    const tooDeep = await post(a, '/echo', `{"value":${arrays(MAX_BODY_DEPTH)}}`)
    expect(tooDeep.statusCode).toBe(400)
    expect(tooDeep.json().error.details[0].path).toBe(`/value${'/0'.repeat(MAX_BODY_DEPTH - 1)}`)
  })

  it('Regression (issue 16): an empty body sent as application/json was "not valid JSON"; body-less routes take it, whatever its type', async () => {
    const a = await bodyApp()
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'x-custom/any',
    ]) {
      for (const method of ['POST', 'DELETE'] as const) {
        const res = await a.inject({
          method,
          url: '/no-body',
          headers: { 'content-type': type },
          payload: '',
        })
        expect(res.statusCode, `${method} ${type}: ${res.body}`).toBe(200)
      }
    }
  })

  it('says that a missing body is missing, and refuses bodies that are not JSON with 415', async () => {
    const a = await bodyApp()
    for (const headers of [{ 'content-type': 'application/json' }, {}]) {
      const res = await a.inject({ method: 'POST', url: '/echo', headers, payload: '' })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toEqual({
        code: 'invalid_request',
        message:
          'The request body is missing: this endpoint takes a JSON body (Content-Type: application/json).',
        details: [{ path: '/', message: 'required', in: 'body' }],
      })
    }
    const notJson = await post(a, '/echo', 'not json')
    expect(notJson.json().error).toEqual({
      code: 'invalid_request',
      message: 'The request body is not valid JSON.',
    })
    expect((await post(a, '/echo', 'null')).json().error.message).toBe('The request body is invalid.')
    for (const url of ['/echo', '/no-body']) {
      const text = await post(a, url, '{"value":1}', 'text/plain')
      expect(text.statusCode).toBe(415)
      expect(text.json().error.code).toBe('unsupported_media_type')
    }
    expect((await post(a, '/nowhere', 'text', 'text/plain')).statusCode).toBe(404)
  })
})

describe('a body answered before it was read', () => {
  /** An app with a 1 KiB body limit (4 KiB of unread body read after an answer), listening. */
  async function listening(opts: Partial<Parameters<typeof createHttpApp>[0]> = {}) {
    const a = await app({ bodyLimit: 1024, ...opts })
    a.post('/echo', async (request) => ({ ok: true, body: request.body }))
    await a.listen({ port: 0, host: '127.0.0.1' })
    return (a.server.address() as AddressInfo).port
  }

  /** A raw connection: what it received, and whether the server closed it. */
  function connect(port: number) {
    const socket = net.connect(port, '127.0.0.1')
    const state = { received: '', closed: false, socket }
    socket.on('data', (chunk) => {
      state.received += chunk.toString('latin1')
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      state.closed = true
    })
    return state
  }
  const statusLines = (received: string) => received.match(/HTTP\/1\.1 \d{3}/g) ?? []

  it('reads the rest of a body answered 413 (on an unknown path too) and answers the next requests on the connection', async () => {
    const port = await listening()
    const connection = connect(port)
    const big = JSON.stringify({ value: 'x'.repeat(3000) })
    connection.socket.write(
      `POST /nowhere HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${big.length}\r\n\r\n${big}` +
        `POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${big.length}\r\n\r\n${big}` +
        'GET /work HTTP/1.1\r\nhost: x\r\n\r\n',
    )
    await waitFor(() => connection.received.includes('"requestId"'), { what: 'the third answer' })
    expect(statusLines(connection.received)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 413', 'HTTP/1.1 200'])
    expect(connection.closed).toBe(false)
    connection.socket.destroy()
  })

  it('closes the connection when the rest of the body does not come within the drain time', async () => {
    const port = await listening({ unreadBodyDrainMs: 200 })
    const connection = connect(port)
    // 2 KiB declared (within the 4 KiB read after an answer), 1.5 KiB sent, then nothing.
    connection.socket.write(
      `POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2048\r\n\r\n${'x'.repeat(1536)}`,
    )
    await waitFor(() => connection.closed, { what: 'the server to close the connection' })
    expect(statusLines(connection.received)).toEqual(['HTTP/1.1 413'])
    expect(connection.received).not.toMatch(/connection: close/i)
  })

  it('keeps the connection open while the rest of the body may still come (the default drain time)', async () => {
    const port = await listening()
    const connection = connect(port)
    connection.socket.write(
      `POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2048\r\n\r\n${'x'.repeat(1536)}`,
    )
    await waitFor(() => statusLines(connection.received).length === 1, { what: 'the 413' })
    connection.socket.write(`${'x'.repeat(512)}GET /work HTTP/1.1\r\nhost: x\r\n\r\n`)
    await waitFor(() => connection.received.includes('"requestId"'), { what: 'the next answer' })
    expect(statusLines(connection.received)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200'])
    expect(connection.closed).toBe(false)
    connection.socket.destroy()
  })
})
