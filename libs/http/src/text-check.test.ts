import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createHttpApp } from './create-app.ts'
import { firstInvalidUtf8Offset } from './utf8.ts'

let app: FastifyInstance
beforeAll(async () => {
  app = await createHttpApp({ logger: false, readiness: [] })
  const r = app.withTypeProvider<ZodTypeProvider>()
  r.post('/echo', { schema: { body: z.object({ value: z.json() }) } }, async (request) => ({
    ok: true,
    body: request.body,
  }))
  r.get('/items/:name', async (request) => ({ ok: true, params: request.params, query: request.query }))
  await app.ready()
})
afterAll(() => app.close())

const postJson = (payload: string | Buffer) =>
  app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload })

const SURROGATE_DETAIL = 'contains a lone UTF-16 surrogate (U+D800 to U+DFFF not in a pair)'

describe('lone UTF-16 surrogates', () => {
  it('Regression (issue 30): an escaped lone surrogate in a JSON string was taken; it is a 400 naming where', async () => {
    for (const [json, path] of [
      ['{"value":"\\ud800 hello"}', '/value'],
      ['{"value":"hello \\udfff"}', '/value'],
      ['{"value":"\\udc00\\ud800"}', '/value'],
      ['{"value":["ok","😀","cut \\ud83d"]}', '/value/2'],
      ['{"value":{"a/b":{"\\ud800key":1}}}', '/value/a~1b/\ud800key'],
    ]) {
      const res = await postJson(json!)
      expect(res.statusCode, json).toBe(400)
      expect(res.json().error).toEqual({
        code: 'invalid_request',
        message:
          'Text must be well-formed Unicode: a UTF-16 surrogate (\\ud800 to \\udfff) must be half of a pair.',
        details: [{ path, message: SURROGATE_DETAIL, in: 'body' }],
      })
    }
  })

  it('takes surrogate pairs, escaped or not, and gives them back as they came', async () => {
    const res = await postJson('{"value":["\\ud83d\\ude00","😀","𝄞 \\uD834\\uDD1E"]}')
    expect(res.statusCode).toBe(200)
    expect(res.json().body.value).toEqual(['😀', '😀', '𝄞 𝄞'])
  })

  it('names the first string in document order', async () => {
    const res = await postJson('{"value":{"a":"\\ud800","\\ud800b":1,"c":"\\u0000"}}')
    expect(res.json().error.details).toEqual([{ path: '/value/a', message: SURROGATE_DETAIL, in: 'body' }])
    const nul = await postJson('{"value":{"a":"\\u0000","b":"\\ud800"}}')
    expect(nul.json().error.details).toEqual([{ path: '/value/a', message: 'contains U+0000', in: 'body' }])
  })

  it('Regression (trial3): a query value not UTF-8 once decoded was taken as its escapes; like a path, it is a 400', async () => {
    // A query string whose escapes decode to UTF-8 is read as ever, an emoji and a space written + too
    const good = await app.inject('/items/x?q=caf%C3%A9+au+lait&r=%F0%9F%98%80')
    expect(good.json()).toEqual({ ok: true, params: { name: 'x' }, query: { q: 'café au lait', r: '😀' } })
    // An encoded surrogate, a byte no UTF-8 starts with, a sequence cut short, a % starting no escape:
    // each a 400 naming the parameter (the query parser had taken them as their escapes, as text)
    for (const [query, path] of [
      ['r=%F0%9F%98%80&q=%ED%A0%80', '/q'],
      ['q=%FF', '/q'],
      ['q=%E2%82', '/q'],
      ['q=50%', '/q'],
      ['a%2Fb=%zz', '/a~1b'],
      ['%FF=1', '/'],
    ]) {
      const res = await app.inject(`/items/x?${query}`)
      expect(res.statusCode, query).toBe(400)
      expect(res.json(), query).toEqual({
        ok: false,
        error: {
          code: 'invalid_request',
          message:
            'The query string is not valid: percent-encoded bytes must be UTF-8, and % must start an escape.',
          details: [{ path, message: 'not valid UTF-8 once percent-decoded', in: 'querystring' }],
        },
      })
    }
    // The router refuses such a path: in the API's error body.
    const path = await app.inject('/items/%ED%A0%80')
    expect(path.statusCode).toBe(400)
    expect(path.json()).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: 'The request path is not valid: percent-encoded bytes must be UTF-8.',
        details: [{ path: '/', message: 'not valid UTF-8 once percent-decoded', in: 'params' }],
      },
    })
    expect(path.headers['x-request-id']).toBeDefined()
  })
})

describe('bodies that are not UTF-8', () => {
  const utf8 = (text: string) => Buffer.from(text, 'utf8')
  /** `{"value":"a<bytes>b"}` */
  const withBytes = (...bytes: number[]) =>
    Buffer.concat([utf8('{"value":{"x":"a'), Buffer.from(bytes), utf8('b"}}')])

  it('Regression (issue 30): bytes that are not UTF-8 were decoded as U+FFFD in silence; they are a 400 naming the string', async () => {
    for (const bytes of [
      [0xff],
      [0x80],
      [0xc0, 0xaf], // overlong '/'
      [0xed, 0xa0, 0x80], // a surrogate, CESU-8
      [0xe2, 0x82], // truncated '€'
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
      [0xe9], // Latin-1 'é'
    ]) {
      const res = await postJson(withBytes(...bytes))
      expect(res.statusCode, bytes.join(' ')).toBe(400)
      expect(res.json().error).toEqual({
        code: 'invalid_request',
        message: 'The request body must be UTF-8 (RFC 8259): byte 16 does not start a valid UTF-8 sequence.',
        details: [{ path: '/value/x', message: 'not valid UTF-8 (byte 16)', in: 'body' }],
      })
    }
  })

  it('names the key, or the whole body when the bad byte is outside any string', async () => {
    const inKey = Buffer.concat([utf8('{"value":{"k'), Buffer.from([0xff]), utf8('":1}}')])
    expect((await postJson(inKey)).json().error.details[0].path).toBe('/value/k\udc80')
    const outside = Buffer.concat([utf8('{"value":1'), Buffer.from([0xff]), utf8('}')])
    expect((await postJson(outside)).json().error.details[0].path).toBe('/')
  })

  it('names the right string when another holds a pair whose second half is the stand-in U+DC80', async () => {
    // Found by test/unicode-capture.test.ts: 𝒀 (U+1D480) is \ud835\udc80 in UTF-16.
    const body = Buffer.concat([utf8('{"value":{"a":"𝒀","b":"x'), Buffer.from([0xff]), utf8('"}}')])
    expect((await postJson(body)).json().error.details[0].path).toBe('/value/b')
  })

  it('takes UTF-8 with a byte order mark', async () => {
    const res = await postJson(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"value":"é"}')]))
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().body.value).toBe('é')
  })

  it('finds the first invalid byte exactly where a strict decoder fails', () => {
    const strict = new TextDecoder('utf-8', { fatal: true })
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        const offset = firstInvalidUtf8Offset(bytes)
        const valid = (b: Uint8Array) => {
          try {
            strict.decode(b)
            return true
          } catch {
            return false
          }
        }
        if (offset === -1) return valid(bytes)
        // Everything before it decodes; a sequence starting at it never does, however it continues.
        return valid(bytes.subarray(0, offset)) && !valid(bytes.subarray(0, offset + 4).slice())
      }),
      { numRuns: 2_000 },
    )
  })
})
