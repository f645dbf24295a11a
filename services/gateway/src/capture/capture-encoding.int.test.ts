/**
 * Issue 30: capture bodies as SDKs send them: gzip-compressed (Content-Encoding), and text that is not
 * well-formed (lone UTF-16 surrogates, bytes that are not UTF-8), which must be refused before anything
 * is stored: stored, it stopped every consumer.
 */
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { captureBody, postCapture } from '../../../../test/support/chatbots.ts'
import { useCapturingGateway } from '../../../../test/support/gateway.ts'
import { countRows, journalEvents } from '../../../../test/support/journal.ts'

const capturing = useCapturingGateway()

const stored = () =>
  Promise.all(['event_journal', 'capture_conversations'].map((t) => countRows(capturing.db.pool, t)))

const send = (payload: Buffer | string, headers: Record<string, string> = {}, key = capturing.apiKey) =>
  postCapture(capturing.app, key, payload, { 'content-type': 'application/json', ...headers })

const MiB = 1024 * 1024

describe('Content-Encoding', () => {
  it('Regression (issue 30): a gzip body was read as JSON and refused; it is decompressed and stored', async () => {
    const body = captureBody('gzipped', 3)
    for (const encoding of ['gzip', 'x-gzip', 'GZIP']) {
      const res = await send(gzipSync(JSON.stringify({ ...body, conversationId: encoding })), {
        'content-encoding': encoding,
      })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toMatchObject({ messagesStored: 3, warnings: [] })
      const [, captured] = await journalEvents(capturing.db.pool, 'conversation', res.json().conversationId)
      expect(captured?.payload.messages).toEqual(body.messages)
    }
    const identity = await send(JSON.stringify(captureBody('identity', 1)), {
      'content-encoding': 'identity',
    })
    expect(identity.statusCode).toBe(200)
  })

  it('answers 415 naming the encodings it takes for any other, and 401 before that without a key', async () => {
    const before = await stored()
    for (const encoding of ['br', 'deflate', 'zstd', 'gzip, gzip']) {
      const res = await send(JSON.stringify(captureBody('other', 1)), { 'content-encoding': encoding })
      expect(res.statusCode, encoding).toBe(415)
      expect(res.json().error).toEqual({
        code: 'unsupported_media_type',
        message: `Content-Encoding ${encoding} is not supported: send the body uncompressed or with Content-Encoding: gzip.`,
      })
    }
    const noKey = await send('{}', { 'content-encoding': 'br' }, `svc_live_${'0'.repeat(32)}`)
    expect(noKey.statusCode).toBe(401)
    expect(await stored()).toEqual(before)
  })

  it('answers 400 for a body that is not gzip, or is cut short', async () => {
    const whole = gzipSync(JSON.stringify(captureBody('cut', 1)))
    for (const payload of [Buffer.from('{"not":"gzip"}'), whole.subarray(0, whole.length - 12)]) {
      const res = await send(payload, { 'content-encoding': 'gzip' })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toEqual({
        code: 'invalid_request',
        message: 'The request body is not valid gzip (Content-Encoding: gzip).',
      })
    }
  })

  it('holds the 4 MiB limit on the decompressed body: a zip bomb is 413 and stores nothing', async () => {
    const before = await stored()
    // 16 MiB of spaces after the JSON compress to about 16 KiB.
    const bomb = gzipSync(
      Buffer.concat([Buffer.from(JSON.stringify(captureBody('bomb', 1))), Buffer.alloc(16 * MiB, ' ')]),
    )
    expect(bomb.length).toBeLessThan(MiB)
    const res = await send(bomb, { 'content-encoding': 'gzip' })
    expect(res.statusCode).toBe(413)
    expect(res.json().error.code).toBe('payload_too_large')
    // Just under the limit once decompressed: taken.
    const padded = JSON.stringify({ ...captureBody('padded', 1), padding: 'p'.repeat(4 * MiB - 500) })
    expect(Buffer.byteLength(padded)).toBeLessThan(4 * MiB)
    expect((await send(gzipSync(padded), { 'content-encoding': 'gzip' })).json()).toMatchObject({
      messagesStored: 1,
      warnings: ['field padding is not a capture field and was ignored'],
    })
    const [events, conversations] = before
    expect(await stored()).toEqual([events! + 2, conversations! + 1])
  })

  it('holds the limit on the compressed body too: empty gzip members that inflate to nothing are 413', async () => {
    const empty = gzipSync(Buffer.alloc(0))
    const members = Buffer.concat([
      gzipSync(JSON.stringify(captureBody('members', 1))),
      ...Array.from({ length: Math.ceil((4 * MiB) / empty.length) + 1 }, () => empty),
    ])
    const res = await send(members, { 'content-encoding': 'gzip' })
    expect(res.statusCode).toBe(413)
  })
})

describe('text that is not well-formed', () => {
  it('Regression (issue 30): an escaped lone surrogate in content was stored and stopped every consumer; it is a 400 naming it', async () => {
    const before = await stored()
    const json = `{"conversationId":"x","messages":[{"id":"m1","role":"user","content":"\\ud800 hello","sentAt":"2026-11-28T10:00:00Z"}]}`
    for (const [payload, headers] of [
      [json, {}],
      [gzipSync(json), { 'content-encoding': 'gzip' }],
    ] as const) {
      const res = await send(payload, headers)
      expect(res.statusCode).toBe(400)
      expect(res.json().error.details).toEqual([
        {
          path: '/messages/0/content',
          message: 'contains a lone UTF-16 surrogate (U+D800 to U+DFFF not in a pair)',
          in: 'body',
        },
      ])
    }
    expect(await stored()).toEqual(before)
  })

  it('refuses a body that is not UTF-8, compressed or not, naming the field', async () => {
    const before = await stored()
    const latin1 = Buffer.from(JSON.stringify(captureBody('latin1', 1, { user: { name: 'José' } })), 'latin1')
    for (const [payload, headers] of [
      [latin1, {}],
      [gzipSync(latin1), { 'content-encoding': 'gzip' }],
    ] as const) {
      const res = await send(payload, headers)
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/^The request body must be UTF-8/),
        details: [{ path: '/user/name', in: 'body' }],
      })
    }
    expect(await stored()).toEqual(before)
  })
})
