import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import net, { type AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { BODY_LIMIT } from '@cas/http'
import { beforeAll, describe, expect, it } from 'vitest'
import { captureBody } from '../../../../test/support/chatbots.ts'
import { useCapturingGateway } from '../../../../test/support/gateway.ts'
import { captureWrites } from '../../../../test/support/journal.ts'
import { waitFor } from '../../../../test/support/wait.ts'

// Regression (trial7): a capture body over 4 MiB sent by Node's fetch failed about one time in four with
// EPIPE or ECONNRESET instead of the 413: the service answered and closed while the client was still
// sending, and the unread bytes made the kernel reset the connection.

const capturing = useCapturingGateway()
let port: number

beforeAll(async () => {
  await capturing.app.listen({ host: '127.0.0.1', port: 0 })
  port = (capturing.app.server.address() as AddressInfo).port
})

const storedState = () => captureWrites(capturing.db.pool)

/**
 * Node's fetch, in a process of its own as a client would be (in this process the race does not show):
 * `count` oversize captures one after another, the body a string (Content-Length) or a stream (chunked).
 * Each result is the status and body, or the code of the error fetch threw.
 */
const FETCH_CLIENT = `
const [url, authorization, count, framing] = process.argv.slice(1)
const json = JSON.stringify({
  conversationId: 'oversize',
  messages: [{ id: 'a', role: 'user', content: 'x'.repeat(${BODY_LIMIT + 300_000}) }],
})
const bytes = new TextEncoder().encode(json)
const chunked = () => new ReadableStream({
  start(controller) {
    for (let at = 0; at < bytes.length; at += 65536) controller.enqueue(bytes.subarray(at, at + 65536))
    controller.close()
  },
})
const results = []
for (let i = 0; i < Number(count); i++) {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      ...(framing === 'chunked' ? { body: chunked(), duplex: 'half' } : { body: json }),
    })
    results.push({ status: res.status, body: await res.text() })
  } catch (error) {
    results.push({ error: error.cause?.code ?? error.message })
  }
}
console.log(JSON.stringify(results))
`

async function fetchOversize(count: number, framing: 'declared' | 'chunked', authorization?: string) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      FETCH_CLIENT,
      `http://127.0.0.1:${port}/api/v1/capture`,
      authorization ?? '',
      String(count),
      framing,
    ],
    { maxBuffer: 1024 * 1024 },
  )
  return JSON.parse(stdout) as { status?: number; body?: string; error?: string }[]
}

/** An API.md error body with this code, and nothing else (no stack, no SQL). */
function expectErrorBody(body: string | undefined, code: string) {
  const parsed = JSON.parse(body ?? '')
  expect(parsed).toEqual({ ok: false, error: { code, message: expect.any(String) } })
}

/**
 * Writes `requests` on one connection, as they are, and reads until `until` holds for what came back or
 * the server closes. Resolves with what was received and whether the server closed the connection.
 */
function rawExchange(requests: Buffer[], until: (received: string) => boolean) {
  return new Promise<{ received: string; closed: boolean }>((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    const done = (closed: boolean) => {
      socket.destroy()
      resolve({ received, closed })
    }
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      if (until(received)) done(false)
    })
    socket.on('error', () => done(true))
    socket.on('end', () => done(true))
    for (const request of requests) socket.write(request)
  })
}

const oversizeJson = () =>
  Buffer.from(JSON.stringify({ ...captureBody('oversize-raw', 1), padding: 'x'.repeat(BODY_LIMIT) }))
/** Over the limit compressed too (random text does not compress), refused while its bytes still come. */
const oversizeGzip = () =>
  gzipSync(
    JSON.stringify({
      ...captureBody('oversize-gzip', 1),
      padding: randomBytes(BODY_LIMIT).toString('base64'),
    }),
  )

function captureRequest(body: Buffer, framing: 'declared' | 'chunked' | 'gzip'): Buffer {
  const head = [
    'POST /api/v1/capture HTTP/1.1',
    'host: localhost',
    `authorization: Bearer ${capturing.apiKey}`,
    'content-type: application/json',
    ...(framing === 'gzip' ? ['content-encoding: gzip'] : []),
    framing === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${body.length}`,
  ].join('\r\n')
  if (framing !== 'chunked') return Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body])
  const chunks: Buffer[] = [Buffer.from(`${head}\r\n\r\n`)]
  for (let at = 0; at < body.length; at += 65_536) {
    const chunk = body.subarray(at, at + 65_536)
    chunks.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(chunks)
}

const healthCheck = Buffer.from('GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n')
const statusLines = (received: string) => received.match(/HTTP\/1\.1 \d{3}/g) ?? []

describe('a capture body over the 4 MiB limit', () => {
  it('is answered 413 to every one of 20 posts by Node fetch with a declared length, and 5 chunked; nothing stored', async () => {
    const before = await storedState()
    const declared = await fetchOversize(20, 'declared', `Bearer ${capturing.apiKey}`)
    const chunked = await fetchOversize(5, 'chunked', `Bearer ${capturing.apiKey}`)
    for (const result of [...declared, ...chunked]) {
      expect(result.error, 'fetch threw instead of answering').toBeUndefined()
      expect(result.status).toBe(413)
      expectErrorBody(result.body, 'payload_too_large')
    }
    expect(declared).toHaveLength(20)
    expect(chunked).toHaveLength(5)
    expect(await storedState()).toEqual(before)
  }, 120_000)

  it('without a valid key is answered 401 first (API.md: the key before the body), to every post', async () => {
    const before = await storedState()
    const results = await fetchOversize(10, 'declared')
    for (const result of results) {
      expect(result.error, 'fetch threw instead of answering').toBeUndefined()
      expect(result.status).toBe(401)
      expectErrorBody(result.body, 'unauthorized')
    }
    expect(results).toHaveLength(10)
    expect(await storedState()).toEqual(before)
  }, 60_000)

  it.each(['declared', 'chunked', 'gzip'] as const)(
    'sent in full (%s), leaves the connection usable: the next request on it is answered',
    async (framing) => {
      const before = await storedState()
      const body = framing === 'gzip' ? oversizeGzip() : oversizeJson()
      expect(body.length).toBeGreaterThan(BODY_LIMIT)
      const { received, closed } = await rawExchange(
        [captureRequest(body, framing), healthCheck],
        (text) => statusLines(text).length === 2 && text.endsWith('}'),
      )
      expect(closed).toBe(false)
      expect(statusLines(received)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200'])
      expect(received).not.toMatch(/connection: close/i)
      expect(await storedState()).toEqual(before)
    },
    60_000,
  )

  it('declared longer than 4 times the limit is answered 413 and the connection closed, without reading it', async () => {
    const head = Buffer.from(
      [
        'POST /api/v1/capture HTTP/1.1',
        'host: localhost',
        `authorization: Bearer ${capturing.apiKey}`,
        'content-type: application/json',
        `content-length: ${4 * BODY_LIMIT + 1}`,
        '',
        '',
      ].join('\r\n'),
    )
    const { received, closed } = await rawExchange([head], () => false)
    expect(closed).toBe(true)
    expect(statusLines(received)).toEqual(['HTTP/1.1 413'])
    expect(received).toMatch(/connection: close/i)
  })

  it('chunked past 4 times the limit has its connection closed', async () => {
    const socket = net.connect(port, '127.0.0.1')
    let closed = false
    socket.on('error', () => {})
    socket.on('close', () => {
      closed = true
    })
    socket.resume()
    const head = [
      'POST /api/v1/capture HTTP/1.1',
      'host: localhost',
      `authorization: Bearer ${capturing.apiKey}`,
      'content-type: application/json',
      'transfer-encoding: chunked',
    ].join('\r\n')
    socket.write(`${head}\r\n\r\n`)
    const chunk = Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(0x100000, 'x'), Buffer.from('\r\n')])
    // Up to 16 times the limit (well past what the server reads and the sockets buffer), sent as the
    // socket takes it, unless the server closes first.
    let sent = 0
    while (!closed && sent < 16 * BODY_LIMIT) {
      if (!socket.write(chunk))
        await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve))
      sent += 0x100000
    }
    await waitFor(() => closed, { what: 'the server to close the connection' })
    expect(sent).toBeLessThan(16 * BODY_LIMIT)
    expect(sent).toBeGreaterThan(4 * BODY_LIMIT)
  }, 60_000)
})
