/**
 * Inputs Schemathesis found answered with a 5xx or out of line with the OpenAPI document (the fault
 * suite's test/faults/api-fuzz.fault.test.ts), each pinned here: a clear 4xx that stores nothing, or the
 * right answer.
 */
import { describe, expect, it } from 'vitest'
import { captureBody, createChatbot, postCapture } from './support/chatbots.ts'
import { useSignedInGateway } from './support/gateway.ts'
import { countRows } from './support/journal.ts'
import { projectAll } from './support/projector.ts'

const gateway = useSignedInGateway()

const get = (url: string) => gateway.app.inject({ method: 'GET', url, headers: { cookie: gateway.cookie } })

describe('the OpenAPI document', () => {
  it('defines every schema it references', async () => {
    const doc = (await gateway.app.inject('/api/v1/openapi.json')).json()
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
      (m) => m[1],
    )
    expect(refs.length).toBeGreaterThan(0)
    for (const name of new Set(refs)) expect(doc.components.schemas, name).toHaveProperty(name!)
  })
})

describe('request errors of the HTTP layer', () => {
  it('answers 400, not 500, to a body-carrying method without Content-Type', async () => {
    for (const url of ['/api/v1/chatbots/0', '/healthz', '/no/such/route']) {
      const res = await gateway.app.inject({
        method: 'QUERY' as 'GET',
        url,
        headers: { cookie: gateway.cookie },
      })
      expect(res.statusCode, url).toBe(400)
      expect(res.json()).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    }
  })

  it('refuses U+0000 in a body, a query string or a path with 400, storing nothing', async () => {
    const { apiKey, chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const before = await countRows(gateway.db.pool, 'event_journal')
    const inContent = await postCapture(gateway.app, apiKey, {
      conversationId: 'nul',
      messages: [{ id: '1', role: 'user', content: 'a\u0000b' }],
    })
    expect(inContent.statusCode).toBe(400)
    expect(inContent.json().error.details).toEqual([
      { path: '/messages/0/content', message: 'contains U+0000', in: 'body' },
    ])
    const inKey = await postCapture(gateway.app, apiKey, {
      conversationId: 'nul',
      messages: [{ id: '1', role: 'user', content: 'ok' }],
      user: { 'x\u0000y': 'z' },
    })
    expect(inKey.statusCode).toBe(400)
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
    expect((await get('/api/v1/conversations?userId=%00')).statusCode).toBe(400)
    // Regression (trial3): a query value whose escapes are not UTF-8 was taken (200, matching nothing)
    const notUtf8 = await get('/api/v1/conversations?userId=%ED%A0%80')
    expect(notUtf8.statusCode).toBe(400)
    expect(notUtf8.json().error).toMatchObject({
      code: 'invalid_request',
      details: [{ path: '/userId', message: 'not valid UTF-8 once percent-decoded', in: 'querystring' }],
    })
    const inPath = await gateway.app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${chatbot.id}/users/a%00b`,
      headers: { cookie: gateway.cookie },
    })
    expect(inPath.statusCode).toBe(400)
  })

  it('routes a 256-character end-user id (the documented maximum) instead of answering 414', async () => {
    const { chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const erase = (userId: string) =>
      gateway.app.inject({
        method: 'DELETE',
        url: `/api/v1/chatbots/${chatbot.id}/users/${encodeURIComponent(userId)}`,
        headers: { cookie: gateway.cookie },
      })
    expect((await erase('é'.repeat(256))).statusCode).toBe(200)
    expect((await erase('u'.repeat(257))).statusCode).toBe(400)
  })
})

describe('timestamps Postgres cannot take', () => {
  it('refuses a sentAt outside the years 0001 to 9999 (in UTC) with 400, storing nothing', async () => {
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const before = await countRows(gateway.db.pool, 'event_journal')
    for (const sentAt of ['0000-01-01T00:00:00Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:00:00-05:00']) {
      const bad = await postCapture(gateway.app, apiKey, {
        conversationId: 'far',
        messages: [{ id: '1', role: 'user', content: 'hi', sentAt }],
      })
      expect(bad.statusCode, sentAt).toBe(400)
      expect(bad.json().error.details[0].path).toBe('/messages/0/sentAt')
    }
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
    const edge = await postCapture(gateway.app, apiKey, {
      conversationId: 'edge',
      messages: [{ id: '1', role: 'user', content: 'hi', sentAt: '0001-01-01T00:00:00Z' }],
    })
    expect(edge.statusCode).toBe(200)
  })

  it('names only the missing zone for a sentAt that is no date-time, not also a range it never reached', async () => {
    // "yesterday" drew two details, the second saying it must lie between the years 0001 and 9999.
    const { apiKey } = await createChatbot(gateway.app, gateway.cookie)
    const before = await countRows(gateway.db.pool, 'event_journal')
    for (const sentAt of ['yesterday', '2026-11-28 10:00']) {
      const bad = await postCapture(gateway.app, apiKey, {
        conversationId: 'when',
        messages: [{ id: '1', role: 'user', content: 'hi', sentAt }],
      })
      expect(bad.statusCode, sentAt).toBe(400)
      expect(bad.json().error.details, sentAt).toEqual([
        {
          path: '/messages/0/sentAt',
          message: 'must be an ISO 8601 date-time with a zone, Z or +hh:mm (e.g. 2026-11-28T10:00:00Z)',
        },
      ])
    }
    expect((await get('/api/v1/conversations?from=yesterday')).json().error.details).toHaveLength(1)
    expect(await countRows(gateway.db.pool, 'event_journal')).toBe(before)
  })

  it('compares conversation filters as instants, whatever zone offset they were written with', async () => {
    expect((await get('/api/v1/conversations?from=1775-12-30T07%3A09%3A03.0%2B16%3A58')).statusCode).toBe(200)
    expect((await get('/api/v1/conversations?to=2026-11-20T10%3A00%3A00-23%3A59')).statusCode).toBe(200)
    expect((await get('/api/v1/conversations?from=0000-01-01T00%3A00%3A00Z')).statusCode).toBe(400)
  })
})

describe('reads of what was deleted', () => {
  it("answers 404 at once for a conversation of a deleted chatbot (not 503 'still being processed')", async () => {
    const { apiKey, chatbot } = await createChatbot(gateway.app, gateway.cookie)
    const conversationId = (await postCapture(gateway.app, apiKey, captureBody('doomed', 2))).json()
      .conversationId
    await projectAll(gateway.db.pool)
    expect((await get(`/api/v1/conversations/${conversationId}`)).statusCode).toBe(200)
    const deleted = await gateway.app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${chatbot.id}`,
      headers: { cookie: gateway.cookie },
    })
    expect(deleted.statusCode).toBe(200)
    // Before and after the projector has applied the deletion.
    expect((await get(`/api/v1/conversations/${conversationId}`)).statusCode).toBe(404)
    await projectAll(gateway.db.pool)
    expect((await get(`/api/v1/conversations/${conversationId}`)).statusCode).toBe(404)
  })
})

describe('sign-up', () => {
  it('refuses an email whose part before @ is longer than 64 characters', async () => {
    const res = await gateway.app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: {
        email: `${'a'.repeat(65)}@example.com`,
        password: 'correct horse battery staple',
        organizationName: 'X',
      },
    })
    expect(res.statusCode).toBe(400)
  })
})
