/**
 * Issue 30, item 3: capture must not drop data in silence. What a capture does not store as it was sent
 * comes back in `warnings` (the request still succeeds), and what it cannot take is a 400 naming it.
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../../test/support/auth.ts'
import { captureBody, createChatbot, postCapture } from '../../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.ts'
import { buildTestGateway } from '../../../../test/support/gateway.ts'
import { countRows, journalEvents } from '../../../../test/support/journal.ts'

const NOW = new Date('2026-11-28T12:00:00.000Z')

let db: TestDatabase
let app: FastifyInstance
let apiKey: string
/** A chatbot keeping 90 days of conversations. */
let keeps90: string

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  const { cookie } = await signUp(app)
  apiKey = (
    await createChatbot(app, cookie, { name: 'Warned', settings: { customFields: { plan: 'string' } } })
  ).apiKey
  keeps90 = (await createChatbot(app, cookie, { name: 'Keeps 90 days', settings: { retentionDays: 90 } }))
    .apiKey
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

let n = 0
const conversation = () => `warned-${++n}`

/** Captures `body` (expecting 200) and returns its warnings and what its events stored. */
async function capture(body: Record<string, unknown>) {
  const res = await postCapture(app, apiKey, body)
  expect(res.statusCode, res.body).toBe(200)
  const [started, captured] = await journalEvents(db.pool, 'conversation', res.json().conversationId)
  return {
    warnings: res.json().warnings as string[],
    deprecated: res.headers.deprecation,
    started: started!.payload,
    messages: (captured?.payload.messages ?? []) as { id: string; content: string; sentAt: string }[],
  }
}

describe('unknown top-level fields', () => {
  it('Regression (issue 30): userID, customFields and usr were dropped without a word; each gets a warning', async () => {
    const { warnings, started } = await capture({
      ...captureBody(conversation(), 1),
      userID: 'u-1',
      customFields: { plan: 'pro' },
      usr: { id: 'u-1' },
    })
    expect(warnings).toEqual([
      'field userID is not a capture field and was ignored (did you mean userId?)',
      'field customFields is not a capture field and was ignored',
      'field usr is not a capture field and was ignored',
    ])
    expect(started).toMatchObject({ user: {}, custom: {} })
  })

  it('says nothing about the fields it knows, deprecated ones included', async () => {
    const { warnings } = await capture({
      ...captureBody(conversation(), 1),
      user: { id: 'u' },
      organization: {},
      session: {},
      custom: { plan: 'pro' },
      userId: 'u',
      metadata: { plan: 'pro' },
    })
    expect(warnings).toEqual([])
  })
})

describe('a message id repeated within one request', () => {
  it('Regression (issue 30): a repeated id with another text was dropped in silence; it is stored once, with a warning', async () => {
    const body = captureBody(conversation(), ['a', 'b', 'a', 'a'])
    body.messages[2] = { ...body.messages[2]!, content: 'another text' }
    body.messages[3] = { ...body.messages[3]!, content: 'a third text' }
    const { warnings, messages } = await capture(body)
    expect(warnings).toEqual(['message id a is repeated with a different message; the first was stored'])
    expect(messages.map((m) => [m.id, m.content])).toEqual([
      ['a', 'message a'],
      ['b', 'message b'],
    ])
  })

  it('takes the same message sent twice without a warning, whatever the offset its sentAt was written with', async () => {
    const message = { id: 'same', role: 'user', content: 'hi', sentAt: '2026-11-28T10:00:00Z' }
    const { warnings, messages } = await capture({
      conversationId: conversation(),
      messages: [message, { ...message, sentAt: '2026-11-28T11:00:00+01:00' }],
    })
    expect(warnings).toEqual([])
    expect(messages).toHaveLength(1)
  })
})

describe('a message id an earlier request stored', () => {
  /** Posts `messages` to conversation `id`, expecting 200: its answer. */
  async function send(id: string, messages: Record<string, unknown>[]) {
    const res = await postCapture(app, apiKey, { conversationId: id, messages })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as { messagesStored: number; warnings: string[]; conversationId: string }
  }

  it('Regression (trial2): another message under a stored id was dropped in silence; it still is not stored, with a warning', async () => {
    // An integrator numbering messages per request: every turn sends ids 1 and 2 again.
    const id = conversation()
    await send(id, [
      { id: '1', role: 'user', content: 'my card was declined' },
      { id: '2', role: 'assistant', content: 'Which card?' },
    ])
    const turn = await send(id, [
      { id: '1', role: 'user', content: 'the visa one' },
      { id: '2', role: 'assistant', content: 'Which card?' },
      { id: '3', role: 'assistant', content: 'Let me look.' },
    ])
    expect(turn.messagesStored).toBe(1)
    expect(turn.warnings).toEqual([
      'message id 1 is repeated with a different message than an earlier capture stored under it; the stored one was kept',
    ])
    const events = await journalEvents(db.pool, 'conversation', turn.conversationId)
    const stored = events.flatMap((e) => (e.payload.messages ?? []) as { id: string; content: string }[])
    expect(stored.map((m) => [m.id, m.content])).toEqual([
      ['1', 'my card was declined'],
      ['2', 'Which card?'],
      ['3', 'Let me look.'],
    ])
  })

  it('takes a retry in silence, with another sentAt too', async () => {
    const id = conversation()
    const message = { id: 'r', role: 'user', content: 'hello', sentAt: '2026-11-28T10:00:00Z' }
    await send(id, [message])
    const retry = await send(id, [{ ...message, sentAt: '2026-11-28T10:05:00Z' }])
    expect(retry).toMatchObject({ messagesStored: 0, warnings: [] })
  })

  it('says nothing of ids stored before the ledger kept digests (migration 0050)', async () => {
    const id = conversation()
    const first = await send(id, [{ id: 'old', role: 'user', content: 'before' }])
    await db.pool.query(
      'UPDATE capture_message_batches SET message_digests = NULL WHERE conversation_id = $1',
      [first.conversationId],
    )
    const later = await send(id, [{ id: 'old', role: 'user', content: 'after' }])
    expect(later).toMatchObject({ messagesStored: 0, warnings: [] })
  })
})

describe('deprecated fields that disagree with their replacements', () => {
  it('Regression (issue 30): userId and a different user.id kept user.id in silence; a warning says which won', async () => {
    const { warnings, started, deprecated } = await capture({
      ...captureBody(conversation(), 1),
      userId: 'legacy',
      user: { id: 'current' },
    })
    expect(warnings).toEqual(['userId and user.id differ; user.id was kept'])
    expect(started.user).toEqual({ id: 'current' })
    expect(deprecated).toBe('true')
    const agreeing = await capture({ ...captureBody(conversation(), 1), userId: 'u', user: { id: 'u' } })
    expect(agreeing.warnings).toEqual([])
  })

  it('Regression (issue 30): metadata and custom with one key of two values kept custom in silence; a warning names the key', async () => {
    const { warnings, started } = await capture({
      ...captureBody(conversation(), 1),
      metadata: { plan: 'old', seats: 2, region: 'eu' },
      custom: { plan: 'pro', region: 'eu' },
    })
    expect(warnings).toEqual([
      'metadata.plan and custom.plan differ; custom.plan was kept',
      'custom field seats is not in the schema',
      'custom field region is not in the schema',
    ])
    expect(started.custom).toEqual({ plan: 'pro', seats: 2, region: 'eu' })
  })
})

describe('sentAt in the future', () => {
  it('Regression (issue 30): a year-2999 sentAt was stored and pinned its conversation first; the receive time is stored, with a warning', async () => {
    const body = {
      conversationId: conversation(),
      messages: [
        { id: 'far', role: 'user', content: 'x', sentAt: '2999-01-01T00:00:00Z' },
        { id: 'just-over', role: 'user', content: 'y', sentAt: '2026-11-29T12:00:00.001Z' },
        { id: 'a-day', role: 'user', content: 'z', sentAt: '2026-11-29T13:00:00+01:00' },
        { id: 'past', role: 'user', content: 'w', sentAt: '2026-11-01T08:00:00Z' },
      ],
    }
    const { warnings, messages } = await capture(body)
    expect(warnings).toEqual([
      'message far sentAt 2999-01-01T00:00:00Z is more than 24 hours after the receive time; the receive time was stored',
      'message just-over sentAt 2026-11-29T12:00:00.001Z is more than 24 hours after the receive time; the receive time was stored',
    ])
    expect(messages.map((m) => [m.id, m.sentAt])).toEqual([
      ['far', NOW.toISOString()],
      ['just-over', NOW.toISOString()],
      ['a-day', '2026-11-29T12:00:00.000Z'],
      ['past', '2026-11-01T08:00:00.000Z'],
    ])
    const { rows } = await db.pool.query(
      'SELECT last_message_at FROM capture_conversations WHERE external_id = $1',
      [body.conversationId],
    )
    expect(rows[0].last_message_at.toISOString()).toBe('2026-11-29T12:00:00.000Z')
  })
})

describe("a conversation already past the chatbot's retention", () => {
  const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString()
  const body = (id: string, lastDaysAgo: number) => ({
    conversationId: id,
    messages: [
      { id: 'q', role: 'user', content: 'my router keeps dropping', sentAt: daysAgo(lastDaysAgo + 1) },
      { id: 'a', role: 'assistant', content: 'Let us restart it.', sentAt: daysAgo(lastDaysAgo) },
    ],
  })
  it('Regression (trial11): an import older than the retention was stored, analysed and shown, then erased at the sweep, with nothing said; a warning says so', async () => {
    const res = await postCapture(app, keeps90, body('imported-old', 100))
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      messagesStored: 2,
      analysisQueued: true,
      warnings: [
        "the conversation's last message is older than this chatbot's retention (90 days): it is erased at the next retention sweep",
      ],
    })
  })
  it('says nothing within the retention, for a chatbot keeping everything, or for a conversation it already had', async () => {
    for (const [key, id, days] of [
      [keeps90, 'imported-recent', 89],
      [apiKey, 'kept-forever', 1_000],
    ] as const) {
      const res = await postCapture(app, key, body(id, days))
      expect(res.json().warnings, id).toEqual([])
    }
    const later = {
      conversationId: 'imported-recent',
      messages: [{ id: 'old', role: 'user', content: 'and', sentAt: daysAgo(200) }],
    }
    const res = await postCapture(app, keeps90, later)
    expect(res.json()).toMatchObject({ messagesStored: 1, warnings: [] })
  })
})

describe('size limits', () => {
  const long = 'x'.repeat(1_025)
  const stored = async () =>
    Promise.all(['event_journal', 'capture_conversations'].map((t) => countRows(db.pool, t)))

  it.each([
    ['user.name', { user: { name: long } }, '/user/name'],
    ['user.email', { user: { email: long } }, '/user/email'],
    ['an extra user field', { user: { bio: long } }, '/user/bio'],
    ['an organization field', { organization: { name: long } }, '/organization/name'],
    ['session.pageUrl', { session: { pageUrl: long } }, '/session/pageUrl'],
    ['a custom field', { custom: { plan: long } }, '/custom/plan'],
    ['a metadata field', { metadata: { plan: long } }, '/metadata/plan'],
    ['user.id past 256', { user: { id: 'u'.repeat(257) } }, '/user/id'],
    ['userId past 256', { userId: 'u'.repeat(257) }, '/userId'],
  ])(
    'Regression (issue 30): %s of any length was stored; past the limit it is a 400 naming it, storing nothing',
    async (_what, extra, path) => {
      const before = await stored()
      const res = await postCapture(app, apiKey, { ...captureBody(conversation(), 1), ...extra })
      expect(res.statusCode).toBe(400)
      expect(res.json().error.details).toEqual([expect.objectContaining({ path })])
      expect(res.json().error.details[0].message).toMatch(/<=(1024|256) characters/)
      expect(await stored()).toEqual(before)
    },
  )

  it('takes values of exactly 1,024 characters and ids of 256', async () => {
    const full = 'y'.repeat(1_024)
    const { started } = await capture({
      ...captureBody(conversation(), 1),
      user: { id: 'u'.repeat(256), name: full, bio: full },
      organization: { name: full },
      session: { device: full },
      custom: { plan: full },
    })
    expect(started).toMatchObject({
      user: { name: full, bio: full },
      organization: { name: full },
      session: { device: full },
      custom: { plan: full },
    })
  })
})

describe('timestamps without a zone', () => {
  it('Regression (issue 30): "Invalid ISO datetime" did not say what was wrong; the message asks for a zone', async () => {
    const res = await postCapture(app, apiKey, {
      conversationId: conversation(),
      messages: [{ id: '1', role: 'user', content: 'x', sentAt: '2026-11-28T10:00:00' }],
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error.details).toEqual([
      {
        path: '/messages/0/sentAt',
        message: 'must be an ISO 8601 date-time with a zone, Z or +hh:mm (e.g. 2026-11-28T10:00:00Z)',
      },
    ])
  })
})
