import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { captureBody, createChatbot, postCapture } from '../../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { buildTestGateway } from '../../../../test/support/gateway.ts'
import { countRows, journalEvents } from '../../../../test/support/journal.ts'

const NOW = new Date('2026-11-21T12:00:00.000Z')

let db: TestDatabase
let app: FastifyInstance
let cookie: string
let apiKey: string
let chatbotId: string

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  cookie = (await signUp(app)).cookie
  const created = await createChatbot(app, cookie, {
    name: 'Capture bot',
    settings: { customFields: { plan: 'string', seats: 'number', vip: 'boolean' } },
  })
  apiKey = created.apiKey
  chatbotId = created.chatbot.id
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

let n = 0
const conversation = () => `conversation-${++n}`

describe('POST /api/v1/capture', () => {
  it('creates the conversation, stores the messages and commits the events of EVENTS.md', async () => {
    const body = captureBody(conversation(), 2, {
      user: { id: 'u-1', plan: 'pro', seats: 3 },
      session: { device: 'ios' },
    })
    const res = await postCapture(app, apiKey, body)
    expect(res.statusCode).toBe(200)
    const result = res.json()
    expect(result).toEqual({
      ok: true,
      conversationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      messagesStored: 2,
      analysisQueued: true,
      warnings: [],
    })
    const events = await journalEvents(db.pool, 'conversation', result.conversationId)
    expect(events.map((e) => [e.type, e.stream_version])).toEqual([
      ['conversation.started', 1],
      ['conversation.messages-captured', 2],
    ])
    expect(events[0]?.chatbot_id).toBe(chatbotId)
    expect(events[0]?.payload).toEqual({
      conversationId: body.conversationId,
      user: { id: 'u-1', plan: 'pro', seats: 3 },
      organization: {},
      session: { device: 'ios' },
      custom: {},
    })
    expect(events[1]?.payload).toEqual({
      messages: body.messages,
      receivedAt: NOW.toISOString(),
      analysisRequested: true,
    })
    // Stored (and so published) as v2, the personal fields sealed with the chatbot's data key.
    expect(events.map((e) => e.version)).toEqual([2, 2])
    expect(events[0]?.stored_payload).toEqual({ sealed: expect.objectContaining({ alg: 'A256GCM' }) })
    expect(events[1]?.stored_payload).toEqual({
      receivedAt: NOW.toISOString(),
      analysisRequested: true,
      sealed: expect.objectContaining({ alg: 'A256GCM' }),
    })
    const stored = JSON.stringify(events.map((e) => e.stored_payload))
    for (const m of body.messages) expect(stored).not.toContain(m.content)
    expect(stored).not.toContain(body.conversationId)
    const { rows } = await db.pool.query(
      'SELECT message_id FROM capture_message_ids WHERE conversation_id = $1',
      [result.conversationId],
    )
    expect(rows.map((r) => r.message_id).sort()).toEqual(['m-1', 'm-2'])
  })

  it('keeps one internal id per (chatbot, conversationId) and appends new messages only', async () => {
    const id = conversation()
    const first = (await postCapture(app, apiKey, captureBody(id, ['a', 'b']))).json()
    const again = (await postCapture(app, apiKey, captureBody(id, ['b', 'c', 'd']))).json()
    expect(again.conversationId).toBe(first.conversationId)
    expect(again.messagesStored).toBe(2)
    const captured = (await journalEvents(db.pool, 'conversation', first.conversationId)).filter(
      (e) => e.type === 'conversation.messages-captured',
    )
    expect(captured.map((e) => e.payload.messages?.map((m) => m.id))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ])

    const other = await createChatbot(app, cookie, { name: 'Other bot' })
    const elsewhere = (await postCapture(app, other.apiKey, captureBody(id, ['a']))).json()
    expect(elsewhere.conversationId).not.toBe(first.conversationId)
    expect(elsewhere.messagesStored).toBe(1)
  })

  it('stores a re-sent batch once: nothing counted, nothing queued, nothing committed', async () => {
    const body = captureBody(conversation(), 3)
    const first = (await postCapture(app, apiKey, body)).json()
    const events = await countRows(db.pool, 'event_journal')
    const res = await postCapture(app, apiKey, body)
    expect(res.json()).toEqual({ ...first, messagesStored: 0, analysisQueued: false })
    expect(await countRows(db.pool, 'event_journal')).toBe(events)
  })

  it('stores a message id repeated within one batch once, keeping the first', async () => {
    const body = captureBody(conversation(), ['x', 'y', 'x'])
    body.messages[2] = { ...body.messages[2]!, content: 'a different text' }
    const result = (await postCapture(app, apiKey, body)).json()
    expect(result.messagesStored).toBe(2)
    expect(result.warnings).toEqual([
      'message id x is repeated with a different message; the first was stored',
    ])
    const [, captured] = await journalEvents(db.pool, 'conversation', result.conversationId)
    expect(captured?.payload.messages).toEqual(body.messages.slice(0, 2))
  })

  it('replaces the metadata fields a later capture carries, with an event only when something changed', async () => {
    const id = conversation()
    const first = await postCapture(
      app,
      apiKey,
      captureBody(id, ['1'], { user: { id: 'u', plan: 'free' }, custom: { plan: 'a' } }),
    )
    const conversationId = first.json().conversationId
    await postCapture(
      app,
      apiKey,
      captureBody(id, ['2'], { user: { plan: 'pro' }, organization: { name: 'Acme' } }),
    )
    await postCapture(app, apiKey, captureBody(id, ['3'], { user: { plan: 'pro' } }))
    const events = await journalEvents(db.pool, 'conversation', conversationId)
    expect(events.map((e) => e.type)).toEqual([
      'conversation.started',
      'conversation.messages-captured',
      'conversation.metadata-updated',
      'conversation.messages-captured',
      'conversation.messages-captured',
    ])
    expect(events[2]?.payload).toEqual({
      user: { id: 'u', plan: 'pro' },
      organization: { name: 'Acme' },
      session: {},
      custom: { plan: 'a' },
    })
    // Metadata alone, with only known messages, still updates.
    const res = await postCapture(
      app,
      apiKey,
      captureBody(id, ['3'], { session: { pageUrl: 'https://x.test/' } }),
    )
    expect(res.json().messagesStored).toBe(0)
    expect((await journalEvents(db.pool, 'conversation', conversationId)).at(-1)?.type).toBe(
      'conversation.metadata-updated',
    )
  })

  it('warns about custom fields outside the schema or of the wrong type, and stores them as given', async () => {
    const custom = { plan: 'pro', seats: 'three', vip: true, referrer: 'ad' }
    const res = await postCapture(app, apiKey, captureBody(conversation(), 1, { custom }))
    expect(res.statusCode).toBe(200)
    expect(res.json().warnings).toEqual([
      'custom field seats should be number',
      'custom field referrer is not in the schema',
    ])
    const [started] = await journalEvents(db.pool, 'conversation', res.json().conversationId)
    expect(started?.payload.custom).toEqual(custom)
  })

  it('warns about every custom field when the chatbot defines no schema', async () => {
    const bare = await createChatbot(app, cookie, { name: 'No schema' })
    const res = await postCapture(
      app,
      bare.apiKey,
      captureBody(conversation(), 1, { custom: { a: 1, b: 'x' } }),
    )
    expect(res.json().warnings).toEqual([
      'custom field a is not in the schema',
      'custom field b is not in the schema',
    ])
  })

  it('accepts the deprecated userId and metadata, with a Deprecation header; only their conflict with custom warns', async () => {
    const res = await postCapture(
      app,
      apiKey,
      captureBody(conversation(), 1, {
        userId: 'legacy-user',
        metadata: { plan: 'old', seats: 2 },
        custom: { plan: 'new' },
      }),
    )
    expect(res.statusCode).toBe(200)
    expect(res.headers.deprecation).toBe('true')
    expect(res.json().warnings).toEqual(['metadata.plan and custom.plan differ; custom.plan was kept'])
    const [started] = await journalEvents(db.pool, 'conversation', res.json().conversationId)
    expect(started?.payload.user).toEqual({ id: 'legacy-user' })
    expect(started?.payload.custom).toEqual({ plan: 'new', seats: 2 })
    expect(
      (await postCapture(app, apiKey, captureBody(conversation(), 1))).headers.deprecation,
    ).toBeUndefined()
  })

  it('does not queue analysis when the chatbot turned it off', async () => {
    const quiet = await createChatbot(app, cookie, { name: 'Quiet', settings: { analysisEnabled: false } })
    const res = await postCapture(app, quiet.apiKey, captureBody(conversation(), 2))
    expect(res.json()).toMatchObject({ messagesStored: 2, analysisQueued: false })
    const [, captured] = await journalEvents(db.pool, 'conversation', res.json().conversationId)
    expect(captured?.payload.analysisRequested).toBe(false)
  })

  it('stores sentAt in UTC, and the receive time when it is missing', async () => {
    const body = {
      conversationId: conversation(),
      messages: [
        { id: 'tz', role: 'user', content: 'hi', sentAt: '2026-11-21T14:30:00+02:00' },
        { id: 'none', role: 'assistant', content: 'hello', extra: 'ignored' },
      ],
    }
    const res = await postCapture(app, apiKey, body)
    expect(res.statusCode).toBe(200)
    const [, captured] = await journalEvents(db.pool, 'conversation', res.json().conversationId)
    expect(captured?.payload.messages).toEqual([
      { id: 'tz', role: 'user', content: 'hi', sentAt: '2026-11-21T12:30:00.000Z' },
      { id: 'none', role: 'assistant', content: 'hello', sentAt: NOW.toISOString() },
    ])
  })

  it('accepts every role, empty content and 100 messages', async () => {
    const body = captureBody(conversation(), 100)
    body.messages = body.messages.map((m, i) => ({
      ...m,
      role: ['user', 'assistant', 'system', 'tool'][i % 4]!,
      content: '',
    }))
    const res = await postCapture(app, apiKey, body)
    expect(res.statusCode).toBe(200)
    expect(res.json().messagesStored).toBe(100)
  })
})
