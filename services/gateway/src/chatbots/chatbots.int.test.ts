import { createHash, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { captureBody, createChatbot, postCapture } from '../../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { deeplyNestedJson } from '../../../../test/support/deep-json.ts'
import { buildTestGateway } from '../../../../test/support/gateway.ts'
import { countRows, journalEvents } from '../../../../test/support/journal.ts'

let db: TestDatabase
let app: FastifyInstance
let cookie: string
let otherCookie: string

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  cookie = (await signUp(app)).cookie
  otherCookie = (await signUp(app)).cookie
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

const sha256 = (key: string) => createHash('sha256').update(key).digest()

function request(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, as = cookie) {
  return app.inject({
    method,
    url,
    headers: { cookie: as },
    ...(payload ? { payload: payload as object } : {}),
  })
}

describe('POST /api/v1/chatbots', () => {
  it('creates a chatbot, shows the full key once and stores only its hash', async () => {
    const res = await request('POST', '/api/v1/chatbots', { name: '  Support bot  ' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ ok: true, chatbot: { name: 'Support bot', settings: {} } })
    expect(body.apiKey).toMatch(/^svc_live_[0-9a-f]{32}$/)
    expect(body.chatbot.api_key_prefix).toBe(`${body.apiKey.slice(0, 13)}…`)
    expect(body.chatbot.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Object.keys(body.chatbot).sort()).toEqual([
      'api_key_prefix',
      'created_at',
      'id',
      'name',
      'settings',
    ])

    const { rows: keys } = await db.pool.query(
      'SELECT key_hash FROM chatbot_api_keys WHERE chatbot_id = $1',
      [body.chatbot.id],
    )
    expect(keys).toEqual([{ key_hash: sha256(body.apiKey) }])
    const events = await journalEvents(db.pool, 'chatbot', body.chatbot.id)
    expect(events).toMatchObject([
      {
        type: 'chatbot.created',
        payload: { name: 'Support bot', settings: {}, apiKeyPrefix: body.chatbot.api_key_prefix },
      },
    ])
    // The key itself is nowhere in the database.
    const { rows } = await db.pool.query(
      "SELECT 1 FROM event_journal WHERE payload::text LIKE '%' || $1 || '%' UNION ALL SELECT 1 FROM chatbots WHERE settings::text LIKE '%' || $1 || '%'",
      [body.apiKey.slice(9)],
    )
    expect(rows).toEqual([])
  })

  it('keeps the settings given at creation', async () => {
    const settings = {
      customFields: { plan: 'string' },
      analysisEnabled: false,
      topics: { refunds: ['refund', 'money back'] },
      theme: { color: 'teal' },
    }
    const { chatbot } = await createChatbot(app, cookie, { name: 'With settings', settings })
    expect(chatbot.settings).toEqual(settings)
  })

  it.each([
    [{}, '/name'],
    [{ name: '' }, '/name'],
    [{ name: '   ' }, '/name'],
    [{ name: 'x'.repeat(101) }, '/name'],
    [{ name: 42 }, '/name'],
    [{ name: 'ok', settings: [1] }, '/settings'],
    [{ name: 'ok', settings: { customFields: { plan: 'date' } } }, '/settings'],
    [{ name: 'ok', settings: { analysisEnabled: 'yes' } }, '/settings'],
    [{ name: 'ok', settings: { topics: { refunds: 'refund' } } }, '/settings'],
    [{ name: 'ok', apiKey: 'svc_live_00000000000000000000000000000000' }, '/'],
  ])('refuses %j with 400 naming %s, and stores nothing', async (body, path) => {
    const [chatbots, events] = [
      await countRows(db.pool, 'chatbots'),
      await countRows(db.pool, 'event_journal'),
    ]
    const res = await request('POST', '/api/v1/chatbots', body)
    expect(res.statusCode).toBe(400)
    expect(res.json().error.code).toBe('invalid_request')
    expect(
      res
        .json()
        .error.details.map((d: { path: string }) => d.path)
        .join(' '),
    ).toContain(path)
    expect(await countRows(db.pool, 'chatbots')).toBe(chatbots)
    expect(await countRows(db.pool, 'event_journal')).toBe(events)
  })
})

describe('reading chatbots', () => {
  it("lists the organization's chatbots, never another organization's, never a key", async () => {
    const mine = await createChatbot(app, cookie, { name: 'Listed' })
    const theirs = await createChatbot(app, otherCookie, { name: 'Not mine' })
    const res = await request('GET', '/api/v1/chatbots')
    expect(res.statusCode).toBe(200)
    const ids = res.json().map((c: { id: string }) => c.id)
    expect(ids).toContain(mine.chatbot.id)
    expect(ids).not.toContain(theirs.chatbot.id)
    expect(res.body).not.toContain(mine.apiKey)
    expect(res.json().find((c: { id: string }) => c.id === mine.chatbot.id)).toEqual(mine.chatbot)
  })

  it('gets one chatbot in the list item shape', async () => {
    const { chatbot } = await createChatbot(app, cookie)
    const res = await request('GET', `/api/v1/chatbots/${chatbot.id}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(chatbot)
  })

  it('answers 401 without a session on every chatbot route', async () => {
    const { chatbot } = await createChatbot(app, cookie)
    for (const [method, url] of [
      ['GET', '/api/v1/chatbots'],
      ['POST', '/api/v1/chatbots'],
      ['GET', `/api/v1/chatbots/${chatbot.id}`],
      ['PATCH', `/api/v1/chatbots/${chatbot.id}`],
      ['DELETE', `/api/v1/chatbots/${chatbot.id}`],
      ['POST', `/api/v1/chatbots/${chatbot.id}/rotate-key`],
    ] as const) {
      const res = await app.inject({
        method,
        url,
        ...(method === 'PATCH' || method === 'POST' ? { payload: { name: 'x' } } : {}),
      })
      expect(res.statusCode, `${method} ${url}`).toBe(401)
      expect(res.json().error.code).toBe('unauthorized')
    }
    expect((await request('GET', `/api/v1/chatbots/${chatbot.id}`)).json().name).toBe(chatbot.name)
  })

  it("answers 404 for an unknown, malformed or other organization's id on every verb, changing nothing", async () => {
    const theirs = await createChatbot(app, otherCookie, { name: 'Theirs' })
    const events = await countRows(db.pool, 'event_journal')
    for (const id of [randomUUID(), 'not-a-uuid', theirs.chatbot.id]) {
      for (const [method, url, payload] of [
        ['GET', `/api/v1/chatbots/${id}`, undefined],
        ['PATCH', `/api/v1/chatbots/${id}`, { name: 'Hijacked' }],
        ['DELETE', `/api/v1/chatbots/${id}`, undefined],
        ['POST', `/api/v1/chatbots/${id}/rotate-key`, undefined],
      ] as const) {
        const res = await request(method, url, payload)
        expect(res.statusCode, `${method} ${url}`).toBe(404)
        expect(res.json()).toEqual({
          ok: false,
          error: { code: 'not_found', message: 'No chatbot with this id.' },
        })
      }
    }
    expect(await countRows(db.pool, 'event_journal')).toBe(events)
    expect(
      (await request('GET', `/api/v1/chatbots/${theirs.chatbot.id}`, undefined, otherCookie)).json(),
    ).toEqual(theirs.chatbot)
  })
})

describe('PATCH /api/v1/chatbots/:id', () => {
  it('renames, and a read right after sees it', async () => {
    const { chatbot } = await createChatbot(app, cookie)
    const res = await request('PATCH', `/api/v1/chatbots/${chatbot.id}`, { name: 'Renamed' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ ...chatbot, name: 'Renamed' })
    expect((await request('GET', `/api/v1/chatbots/${chatbot.id}`)).json().name).toBe('Renamed')
    expect((await journalEvents(db.pool, 'chatbot', chatbot.id)).map((e) => e.type)).toEqual([
      'chatbot.created',
      'chatbot.renamed',
    ])
  })

  it('merges settings as a JSON Merge Patch: objects merge, null removes, arrays replace', async () => {
    const { chatbot } = await createChatbot(app, cookie, {
      name: 'Patched',
      settings: { onboarded: false, theme: { color: 'teal', font: 'serif' }, tags: ['a', 'b'] },
    })
    const patch = {
      onboarded: true,
      theme: { font: null, size: 12 },
      tags: ['c'],
      customFields: { plan: 'string' },
    }
    const res = await request('PATCH', `/api/v1/chatbots/${chatbot.id}`, { settings: patch })
    const settings = {
      onboarded: true,
      theme: { color: 'teal', size: 12 },
      tags: ['c'],
      customFields: { plan: 'string' },
    }
    expect(res.statusCode).toBe(200)
    expect(res.json().settings).toEqual(settings)
    const events = await journalEvents(db.pool, 'chatbot', chatbot.id)
    expect(events.at(-1)).toMatchObject({ type: 'chatbot.settings-changed', payload: { patch, settings } })
  })

  it('appends nothing for a patch that changes nothing', async () => {
    const { chatbot } = await createChatbot(app, cookie, { name: 'Same', settings: { a: 1 } })
    const res = await request('PATCH', `/api/v1/chatbots/${chatbot.id}`, { name: 'Same', settings: { a: 1 } })
    expect(res.statusCode).toBe(200)
    expect(await journalEvents(db.pool, 'chatbot', chatbot.id)).toHaveLength(1)
  })

  it.each([
    [{ name: '' }],
    [{ name: 'x'.repeat(101) }],
    [{ settings: 'dark' }],
    [{ settings: { customFields: { plan: 'date' } } }],
    [{ settings: { analysisEnabled: 1 } }],
    [{ colour: 'blue' }],
  ])('refuses %j with 400 and changes nothing', async (body) => {
    const { chatbot } = await createChatbot(app, cookie, {
      name: 'Unchanged',
      settings: { customFields: {} },
    })
    const res = await request('PATCH', `/api/v1/chatbots/${chatbot.id}`, body)
    expect(res.statusCode).toBe(400)
    expect(res.json().error.code).toBe('invalid_request')
    expect((await request('GET', `/api/v1/chatbots/${chatbot.id}`)).json()).toEqual(chatbot)
    expect(await journalEvents(db.pool, 'chatbot', chatbot.id)).toHaveLength(1)
  })

  it('applies every one of many concurrent patches (optimistic concurrency, decided again on conflict)', async () => {
    const { chatbot } = await createChatbot(app, cookie, { name: 'Busy' })
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request('PATCH', `/api/v1/chatbots/${chatbot.id}`, { settings: { [`k${i}`]: i } }),
      ),
    )
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(200))
    const settings = (await request('GET', `/api/v1/chatbots/${chatbot.id}`)).json().settings
    expect(settings).toEqual(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i])))
    const events = await journalEvents(db.pool, 'chatbot', chatbot.id)
    expect(events.map((e) => e.stream_version)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1))
  })
})

describe('rotate-key and delete', () => {
  it('rotates: the new key works, the old one is refused at once, and no key is in the event', async () => {
    const { chatbot, apiKey: oldKey } = await createChatbot(app, cookie)
    expect((await postCapture(app, oldKey, captureBody('before'))).statusCode).toBe(200)
    const res = await request('POST', `/api/v1/chatbots/${chatbot.id}/rotate-key`)
    expect(res.statusCode).toBe(200)
    const { apiKey: newKey, chatbot: rotated } = res.json()
    expect(newKey).toMatch(/^svc_live_[0-9a-f]{32}$/)
    expect(newKey).not.toBe(oldKey)
    expect(rotated).toEqual({ ...chatbot, api_key_prefix: `${newKey.slice(0, 13)}…` })
    expect((await postCapture(app, oldKey, captureBody('after'))).statusCode).toBe(401)
    expect((await postCapture(app, newKey, captureBody('after'))).statusCode).toBe(200)
    const events = await journalEvents(db.pool, 'chatbot', chatbot.id)
    expect(events.at(-1)).toEqual(
      expect.objectContaining({
        type: 'chatbot.key-rotated',
        payload: { apiKeyPrefix: rotated.api_key_prefix },
      }),
    )
  })

  it('deletes: gone from reads, its key refused, its capture state removed, the deletion in the journal', async () => {
    const { chatbot, apiKey } = await createChatbot(app, cookie)
    expect((await postCapture(app, apiKey, captureBody('doomed'))).statusCode).toBe(200)
    const res = await request('DELETE', `/api/v1/chatbots/${chatbot.id}`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ ok: true })
    expect((await request('GET', `/api/v1/chatbots/${chatbot.id}`)).statusCode).toBe(404)
    expect((await request('GET', '/api/v1/chatbots')).json().map((c: { id: string }) => c.id)).not.toContain(
      chatbot.id,
    )
    expect((await postCapture(app, apiKey, captureBody('doomed'))).statusCode).toBe(401)
    const { rows } = await db.pool.query('SELECT 1 FROM capture_conversations WHERE chatbot_id = $1', [
      chatbot.id,
    ])
    expect(rows).toEqual([])
    expect((await journalEvents(db.pool, 'chatbot', chatbot.id)).at(-1)?.type).toBe('chatbot.deleted')
    expect((await request('DELETE', `/api/v1/chatbots/${chatbot.id}`)).statusCode).toBe(404)
    expect((await request('POST', `/api/v1/chatbots/${chatbot.id}/rotate-key`)).statusCode).toBe(404)
  })
})

describe('settings with arbitrary input (property)', () => {
  const settingsText = fc.oneof(
    fc.jsonValue().map((value) => JSON.stringify(value)),
    fc.dictionary(fc.string(), fc.jsonValue()).map((value) => JSON.stringify(value)),
    // Issue 16: settings nested 5,000 levels deep answered 500.
    deeplyNestedJson(),
  )

  it('answers create and PATCH with 200 or 400, never 5xx, and a 400 stores nothing', async () => {
    const { chatbot } = await createChatbot(app, cookie)
    await fc.assert(
      fc.asyncProperty(settingsText, async (settings) => {
        const before = await countRows(db.pool, 'event_journal')
        for (const [method, url, payload] of [
          ['POST', '/api/v1/chatbots', `{"name":"arbitrary","settings":${settings}}`],
          ['PATCH', `/api/v1/chatbots/${chatbot.id}`, `{"settings":${settings}}`],
        ] as const) {
          const res = await app.inject({
            method,
            url,
            headers: { cookie, 'content-type': 'application/json' },
            payload,
          })
          expect([200, 400], `${method}: ${res.body.slice(0, 500)}`).toContain(res.statusCode)
          if (res.statusCode === 400) {
            expect(res.json()).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
            expect(await countRows(db.pool, 'event_journal')).toBe(before)
          }
        }
      }),
      { numRuns: 100 },
    )
  })
})
