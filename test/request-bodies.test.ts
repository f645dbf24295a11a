/**
 * Request bodies on every route of the all-in-one's API (the gateway's and the query service's, taken
 * from the OpenAPI document so that a new route is covered too): nesting limits, and empty bodies.
 */
import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { BODY_LIMIT } from '@cas/http'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { nestedJson } from './support/deep-json.ts'
import { useSignedInGateway } from './support/gateway.ts'
import { countRows } from './support/journal.ts'

const gateway = useSignedInGateway()

// The documented limits (docs/api.md; the OpenAPI descriptions).
const MAX_BODY_DEPTH = 32
const MAX_SETTINGS_DEPTH = 16

interface Operation {
  readonly method: string
  readonly path: string
  readonly takesBody: boolean
}

async function operations(app: FastifyInstance): Promise<Operation[]> {
  const doc = (await app.inject('/api/v1/openapi.json')).json() as {
    paths: Record<string, Record<string, { requestBody?: unknown }>>
  }
  // API.md's routes. POST /v1/traces answers in OTLP's own contract, not API.md's: errors are
  // google.rpc.Status, and fields OTLP does not define are ignored, as the OTLP specification requires
  // of a receiver (its bad input: services/gateway/src/otlp/otlp.int.test.ts).
  return Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          takesBody: op.requestBody !== undefined,
        })),
    )
}

/** An operation's response for a status in the served OpenAPI document (undefined when it lists none). */
async function documentedResponse(app: FastifyInstance) {
  const doc = (await app.inject('/api/v1/openapi.json')).json() as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
  }
  return (op: Operation, status: string) => doc.paths[op.path]?.[op.method.toLowerCase()]?.responses[status]
}

/** The operation's path with its parameters filled from `ids` (a random UUID for other ids). */
function urlOf(op: Operation, ids: { chatbotId: string }): string {
  return op.path.replace('{id}', ids.chatbotId).replace('{userId}', 'end-user-1')
}

async function send(op: Operation, url: string, payload: string | Buffer, apiKey: string) {
  return gateway.app.inject({
    method: op.method as 'POST',
    url,
    headers: {
      cookie: gateway.cookie,
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
    },
    payload,
  })
}

describe('nesting', () => {
  it('Regression (issue 16): PATCH settings nested 5,000 objects deep answered 500; it is a 400 naming the path', async () => {
    const { chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const before = await countRows(gateway.db.pool, 'event_journal')
    const res = await gateway.app.inject({
      method: 'PATCH',
      url: `/api/v1/chatbots/${chatbot.id}`,
      headers: { cookie: gateway.cookie, 'content-type': 'application/json' },
      payload: `{"settings":${nestedJson(5_000)}}`,
    })
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json().error).toMatchObject({
      code: 'invalid_request',
      details: [{ path: `/settings${'/a'.repeat(MAX_BODY_DEPTH - 1)}`, in: 'body' }],
    })
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })

  it(`answers every route that takes JSON 400, naming the path, for a body deeper than ${MAX_BODY_DEPTH} levels`, async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const withBody = (await operations(gateway.app)).filter((op) => op.takesBody)
    expect(withBody.map((op) => `${op.method} ${op.path}`)).toEqual(
      expect.arrayContaining([
        'POST /api/v1/capture',
        'POST /api/v1/chatbots',
        'PATCH /api/v1/chatbots/{id}',
      ]),
    )
    const before = await countRows(gateway.db.pool, 'event_journal')
    for (const op of withBody) {
      for (const depth of [MAX_BODY_DEPTH + 1, 5_000, 100_000]) {
        const res = await send(op, urlOf(op, { chatbotId: chatbot.id }), nestedJson(depth, 'x'), apiKey)
        expect(res.statusCode, `${op.method} ${op.path} at ${depth}: ${res.body}`).toBe(400)
        expect(res.json().error.details).toEqual([
          {
            path: `/x${'/x'.repeat(MAX_BODY_DEPTH - 1)}`,
            message: `nested deeper than ${MAX_BODY_DEPTH} levels`,
            in: 'body',
          },
        ])
      }
    }
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })

  it(`keeps settings within ${MAX_SETTINGS_DEPTH} levels, on create and on PATCH, naming the path beyond`, async () => {
    const deepest = nestedJson(MAX_SETTINGS_DEPTH)
    const created = await createChatbot(gateway.app, gateway.cookie, {
      name: 'deep',
      settings: JSON.parse(deepest),
    })
    expect(JSON.stringify(created.chatbot.settings)).toBe(deepest)
    const tooDeep = nestedJson(MAX_SETTINGS_DEPTH + 1)
    const beyond = `/settings${'/a'.repeat(MAX_SETTINGS_DEPTH)}`
    const create = await gateway.app.inject({
      method: 'POST',
      url: '/api/v1/chatbots',
      headers: { cookie: gateway.cookie, 'content-type': 'application/json' },
      payload: `{"name":"deeper","settings":${tooDeep}}`,
    })
    expect(create.statusCode).toBe(400)
    expect(create.json().error.details).toEqual([
      { path: beyond, message: `settings nest at most ${MAX_SETTINGS_DEPTH} levels of objects and arrays` },
    ])
    const patch = await gateway.app.inject({
      method: 'PATCH',
      url: `/api/v1/chatbots/${created.chatbot.id}`,
      headers: { cookie: gateway.cookie, 'content-type': 'application/json' },
      payload: `{"settings":${tooDeep}}`,
    })
    expect(patch.statusCode).toBe(400)
    expect(patch.json().error.details).toEqual(create.json().error.details)
  })

  it("keeps the capture's metadata objects flat, naming the nested value", async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    for (const field of ['user', 'organization', 'session', 'custom', 'metadata']) {
      const res = await postCapture(
        gateway.app,
        apiKey,
        `{"conversationId":"c","messages":[{"id":"1","role":"user","content":"hi"}],"${field}":{"k":${nestedJson(3)}}}`,
        { 'content-type': 'application/json' },
      )
      expect(res.statusCode, field).toBe(400)
      expect(res.json().error.details).toContainEqual({
        path: `/${field}/k`,
        message: 'must be a string, number or boolean (this object is flat: no nested objects or arrays)',
      })
    }
  })
})

describe('text that cannot be stored', () => {
  it('Regression (issue 30): answers every route that takes JSON 400, naming the string, for a lone surrogate or bytes that are not UTF-8', async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const withBody = (await operations(gateway.app)).filter((op) => op.takesBody)
    const before = await countRows(gateway.db.pool, 'event_journal')
    const bodies = [
      // Chatbot names and settings (keys and values), and whatever else a route takes.
      ['{"name":"bot \\ud83d","settings":{}}', '/name', 'contains a lone UTF-16 surrogate'],
      [
        '{"name":"bot","settings":{"topics":{"\\udfff":["x"]}}}',
        '/settings/topics/\udfff',
        'contains a lone',
      ],
      ['{"x":[{"y":"ok \\ud83d\\ude00 \\ude00"}]}', '/x/0/y', 'contains a lone'],
    ] as const
    for (const op of withBody) {
      const url = urlOf(op, { chatbotId: chatbot.id })
      for (const [payload, path, message] of bodies) {
        const res = await send(op, url, payload, apiKey)
        expect(res.statusCode, `${op.method} ${op.path} ${payload}: ${res.body}`).toBe(400)
        expect(res.json().error.details).toEqual([
          { path, message: expect.stringContaining(message), in: 'body' },
        ])
      }
      const latin1 = Buffer.from('{"name":"Café"}', 'latin1')
      const res = await send(op, url, latin1, apiKey)
      expect(res.statusCode, `${op.method} ${op.path}: ${res.body}`).toBe(400)
      expect(res.json().error.details).toEqual([
        { path: '/name', message: 'not valid UTF-8 (byte 12)', in: 'body' },
      ])
    }
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
    const after = (
      await gateway.app.inject({ url: `/api/v1/chatbots/${chatbot.id}`, headers: { cookie: gateway.cookie } })
    ).json()
    expect(after).toMatchObject({ name: chatbot.name, settings: chatbot.settings })
  })
})

describe('media types', () => {
  it('every route that takes a body documents 415 and answers it, changing nothing, to a body that is not JSON or is compressed where the route does not decompress', async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const documented = await documentedResponse(gateway.app)
    const withBody = (await operations(gateway.app)).filter((op) => op.takesBody)
    expect(withBody.length).toBeGreaterThan(10)
    const before = await countRows(gateway.db.pool, 'event_journal')
    for (const op of withBody) {
      const what = `${op.method} ${op.path}`
      expect(documented(op, '415'), what).toEqual({
        $ref: '#/components/responses/UnsupportedMediaType',
      })
      const url = urlOf(op, { chatbotId: chatbot.id })
      const headers = { cookie: gateway.cookie, authorization: `Bearer ${apiKey}` }
      const text = await gateway.app.inject({
        method: op.method as 'POST',
        url,
        headers: { ...headers, 'content-type': 'text/plain' },
        payload: 'hello',
      })
      // Capture decompresses gzip, so it is sent an encoding no route takes.
      const encoded = await gateway.app.inject({
        method: op.method as 'POST',
        url,
        headers: { ...headers, 'content-type': 'application/json', 'content-encoding': 'br' },
        payload: Buffer.from([0x0b, 0x01, 0x80, 0x7b, 0x7d, 0x03]),
      })
      for (const res of [text, encoded]) {
        expect(res.statusCode, `${what}: ${res.body}`).toBe(415)
        expect(res.json(), what).toMatchObject({ ok: false, error: { code: 'unsupported_media_type' } })
      }
    }
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })
})

describe('Content-Encoding without a body', () => {
  it('Regression (review3 item 4): a GET or DELETE with Content-Encoding and no body (no Content-Length, no Transfer-Encoding) was 415; nothing is there to decode, so it is answered', async () => {
    const { chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const bodyless = (method: 'GET' | 'DELETE', url: string) =>
      gateway.app.inject({
        method,
        url,
        headers: { cookie: gateway.cookie, 'content-encoding': 'gzip' },
      })
    const read = await bodyless('GET', `/api/v1/chatbots/${chatbot.id}`)
    expect(read.statusCode, read.body).toBe(200)
    expect(read.json().id).toBe(chatbot.id)
    const deleted = await bodyless('DELETE', `/api/v1/chatbots/${chatbot.id}`)
    expect(deleted.statusCode, deleted.body).toBe(200)
    expect(deleted.json()).toEqual({ ok: true })
    // A body with the encoding is still refused on a route that does not decompress.
    const encoded = await gateway.app.inject({
      method: 'PATCH',
      url: `/api/v1/chatbots/${chatbot.id}`,
      headers: { cookie: gateway.cookie, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync('{"name":"x"}'),
    })
    expect(encoded.statusCode, encoded.body).toBe(415)
  })
})

describe('Content-Encoding on an empty chunked body', () => {
  it('Regression (mend4 left it): a chunked request whose body is empty (Transfer-Encoding: chunked, the zero-length last chunk at once) with Content-Encoding was 415 where Content-Length: 0 was not; empty content is none, so it is answered as body-less', async () => {
    const { chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const chunked = (method: 'GET' | 'DELETE' | 'PATCH', url: string, body: Buffer[]) =>
      gateway.app.inject({
        method,
        url,
        headers: {
          cookie: gateway.cookie,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'transfer-encoding': 'chunked',
        },
        payload: Readable.from(body),
      })
    const read = await chunked('GET', `/api/v1/chatbots/${chatbot.id}`, [])
    expect(read.statusCode, read.body).toBe(200)
    expect(read.json().id).toBe(chatbot.id)
    // A route that takes a body says it is missing, as it does to Content-Length: 0.
    const patched = await chunked('PATCH', `/api/v1/chatbots/${chatbot.id}`, [])
    expect(patched.statusCode, patched.body).toBe(400)
    expect(patched.json()).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    // A chunked body with the encoding is still refused, and changes nothing.
    const encoded = await chunked('PATCH', `/api/v1/chatbots/${chatbot.id}`, [gzipSync('{"name":"renamed"}')])
    expect(encoded.statusCode, encoded.body).toBe(415)
    expect(encoded.json()).toMatchObject({ ok: false, error: { code: 'unsupported_media_type' } })
    const after = await gateway.app.inject({
      method: 'GET',
      url: `/api/v1/chatbots/${chatbot.id}`,
      headers: { cookie: gateway.cookie },
    })
    expect(after.json().name).toBe(chatbot.name)
    const deleted = await chunked('DELETE', `/api/v1/chatbots/${chatbot.id}`, [])
    expect(deleted.statusCode, deleted.body).toBe(200)
    expect(deleted.json()).toEqual({ ok: true })
  })
})

describe('body size', () => {
  it('Regression: every route that takes a body answered 413 past the 4 MiB limit, but only capture and OTLP documented it; each now documents and answers it, changing nothing', async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const documented = await documentedResponse(gateway.app)
    const withBody = (await operations(gateway.app)).filter((op) => op.takesBody)
    expect(withBody.length).toBeGreaterThan(10)
    // Valid JSON, one byte over the limit.
    const filler = 'x'.repeat(BODY_LIMIT - '{"name":""}'.length + 1)
    const payload = `{"name":"${filler}"}`
    const before = await countRows(gateway.db.pool, 'event_journal')
    for (const op of withBody) {
      const what = `${op.method} ${op.path}`
      expect(documented(op, '413'), what).toEqual({
        $ref: '#/components/responses/PayloadTooLarge',
      })
      const res = await send(op, urlOf(op, { chatbotId: chatbot.id }), payload, apiKey)
      expect(res.statusCode, `${what}: ${res.body.slice(0, 200)}`).toBe(413)
      expect(res.json(), what).toMatchObject({ ok: false, error: { code: 'payload_too_large' } })
    }
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })
})

describe('empty bodies', () => {
  it('Regression (issue 16): rotate-key and DELETE with Content-Type: application/json and no body were "not valid JSON"', async () => {
    const { chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const empty = (method: 'POST' | 'DELETE', url: string) =>
      gateway.app.inject({
        method,
        url,
        headers: { cookie: gateway.cookie, 'content-type': 'application/json' },
        payload: '',
      })
    const rotated = await empty('POST', `/api/v1/chatbots/${chatbot.id}/rotate-key`)
    expect(rotated.statusCode, rotated.body).toBe(200)
    expect(rotated.json().apiKey).toMatch(/^svc_live_/)
    const deleted = await empty('DELETE', `/api/v1/chatbots/${chatbot.id}`)
    expect(deleted.statusCode, deleted.body).toBe(200)
    expect(deleted.json()).toEqual({ ok: true })
  })

  it('every route that takes no body accepts an empty one as JSON, and every one that takes one says it is missing', async () => {
    const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const ops = await operations(gateway.app)
    // The refused ones first; then those that change what the others use: the key, the chatbot, the session.
    // Last, in this order: what changes what the others use (the key, the chatbot, the session).
    const last = [
      'rotate-key',
      'DELETE /api/v1/chatbots/{id}',
      'POST /api/v1/organization/leave',
      'DELETE /api/v1/organization',
      'POST /api/v1/auth/logout',
    ]
    const order = (op: Operation) =>
      op.takesBody ? -2 : last.findIndex((end) => `${op.method} ${op.path}`.endsWith(end))
    for (const op of ops.sort((a, b) => order(a) - order(b))) {
      const res = await send(op, urlOf(op, { chatbotId: chatbot.id }), '', apiKey)
      const what = `${op.method} ${op.path}: ${res.body}`
      if (op.takesBody) {
        expect(res.statusCode, what).toBe(400)
        expect(res.json().error.message, what).toMatch(/^The request body is missing/)
      } else {
        // The empty body is accepted: whatever the route answers then (a 404 for an id this test made
        // up, a 409 for the last owner leaving), it is not about the body.
        expect([400, 413, 415], what).not.toContain(res.statusCode)
      }
    }
  })
})
