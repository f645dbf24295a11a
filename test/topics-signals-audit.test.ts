import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type { FastifyInstance, InjectOptions } from 'fastify'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { buildTestGateway } from './support/gateway.ts'
import { journalEvents } from './support/journal.ts'
import { join } from './support/members.ts'
import { projectAll } from './support/projector.ts'

// An adversarial pass over the topic-management, themes and signals surface (issues 31 and 32): what a
// careless or hostile client sends, what another organization's ids reach, and what roles may do.
// The topics, themes and signals are the analysis service's events, appended here and projected.

let db: TestDatabase
let app: FastifyInstance

interface Org {
  readonly cookie: string
  readonly orgId: string
  readonly chatbotId: string
  readonly apiKey: string
  readonly topics: { billing: string; refunds: string; retired: string; merged: string }
  readonly theme: string
  readonly conversationId: string
}

let a: Org
let b: Org

/**
 * A conversation's analysis as the analysis service records it: its first message placed in `topics`, the
 * conversation in them, and its settled `signals`.
 */
function appendAnalysis(
  client: pg.ClientBase,
  c: {
    orgId: string
    chatbotId: string
    conversationId: string
    topics: { id: string; label: string }[]
    signals: { name: string; confidence: number; evidence: string[] }[]
  },
) {
  const analyzer = { name: 'test', version: '1' }
  const sentiment = { score: 0, label: 'neutral' as const }
  return appendToStream(client, {
    streamType: 'analysis',
    streamId: c.conversationId,
    orgId: c.orgId,
    chatbotId: c.chatbotId,
    expectedVersion: 'any',
    events: [
      newEvent('analysis.messages-analyzed', {
        analyzer,
        signalsDecided: true,
        results: [{ messageId: 'm-1', sentiment, topics: c.topics }],
      }),
      newEvent('analysis.conversation-analyzed', {
        analyzer,
        sentiment,
        assistantSentiment: null,
        topics: c.topics,
      }),
      newEvent('analysis.signals-detected', { analyzer, settled: true, signals: c.signals }),
    ],
  })
}

async function seedOrg(): Promise<Org> {
  const { cookie, organization } = await signUp(app)
  const { chatbot, apiKey } = await createChatbot(app, cookie, { name: 'Bot' })
  const topics = {
    billing: randomUUID(),
    refunds: randomUUID(),
    retired: randomUUID(),
    merged: randomUUID(),
  }
  const theme = randomUUID()
  const captured = await postCapture(app, apiKey, {
    conversationId: 'c-1',
    messages: [
      { id: 'm-1', role: 'user', content: 'I want a person', sentAt: new Date().toISOString() },
      { id: 'm-2', role: 'assistant', content: 'Sorry, I cannot help', sentAt: new Date().toISOString() },
    ],
  })
  expect(captured.statusCode, captured.body).toBe(200)
  const conversationId = captured.json().conversationId as string
  const discovered = (topicId: string, label: string) =>
    newEvent('analysis.topic-discovered', { topicId, label, keywords: [], configured: false })
  const placed = [{ id: topics.billing, label: 'Billing' }]
  await withTransaction(db.pool, async (client) => {
    await appendToStream(client, {
      streamType: 'analysis',
      streamId: chatbot.id,
      orgId: organization.id,
      chatbotId: chatbot.id,
      expectedVersion: 'any',
      events: [
        discovered(topics.billing, 'Billing'),
        discovered(topics.refunds, 'Refunds'),
        discovered(topics.retired, 'Old stuff'),
        discovered(topics.merged, 'Money back'),
        newEvent('analysis.topic-retired', { topicId: topics.retired }),
        newEvent('analysis.topic-merged', { topicId: topics.merged, into: topics.refunds }),
        newEvent('analysis.themes-assigned', {
          themes: [{ themeId: theme, label: 'Payments', topicIds: [topics.billing, topics.refunds] }],
        }),
      ],
    })
    await appendAnalysis(client, {
      orgId: organization.id,
      chatbotId: chatbot.id,
      conversationId,
      topics: placed,
      signals: [
        { name: 'escalation', confidence: 0.8, evidence: ['m-1'] },
        { name: 'bot_failure', confidence: 0.7, evidence: ['m-2'] },
      ],
    })
  })
  return { cookie, orgId: organization.id, chatbotId: chatbot.id, apiKey, topics, theme, conversationId }
}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  a = await seedOrg()
  b = await seedOrg()
  await projectAll(db.pool)
})

afterAll(async () => {
  await app?.close()
  await db?.drop()
})

const call = (options: InjectOptions, cookie = a.cookie) =>
  app.inject({ ...options, headers: { cookie, ...(options.headers ?? {}) } } as InjectOptions)

/** Everything a command may have changed: the chatbot's stream, the topics' read model, the settings. */
async function state(org: Org) {
  const { rows: topics } = await db.pool.query(
    'SELECT id, label, pinned, hidden, canonical_id FROM rm_topics WHERE chatbot_id = $1 ORDER BY id',
    [org.chatbotId],
  )
  const events = (await journalEvents(db.pool, 'chatbot', org.chatbotId)).map((e) => e.type)
  return { topics, events }
}

/** API.md's error shape, with nothing of the internals. */
function expectError(res: { statusCode: number; body: string }, status: number, code: string, what = '') {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(status)
  const body = JSON.parse(res.body)
  expect(body).toMatchObject({ ok: false, error: { code, message: expect.any(String) } })
  expect(res.body).not.toMatch(/\bat \S+ \(|SELECT |INSERT |postgres|ZodError|node_modules/i)
}

describe('topic commands', () => {
  const topicUrl = (org: Org, topicId: string, name: string) =>
    `/api/v1/chatbots/${org.chatbotId}/topics/${topicId}/${name}`

  it("never reach another organization's chatbot or topics: 404, nothing changed", async () => {
    const before = await state(b)
    const cases: [string, object | undefined][] = [
      [topicUrl(b, b.topics.billing, 'rename'), { label: 'Mine now' }],
      [topicUrl(b, b.topics.billing, 'hide'), undefined],
      [topicUrl(b, b.topics.billing, 'merge'), { into: b.topics.refunds }],
      // A's chatbot, B's topic.
      [topicUrl(a, b.topics.billing, 'rename'), { label: 'Mine now' }],
      [topicUrl(a, b.topics.billing, 'hide'), undefined],
      [`/api/v1/chatbots/${b.chatbotId}/topics`, { label: 'Mine', examples: ['one thing', 'another'] }],
      [`/api/v1/chatbots/${b.chatbotId}/reanalysis`, {}],
    ]
    for (const [url, payload] of cases) {
      const res = await call({ method: 'POST', url, ...(payload ? { payload } : {}) })
      expectError(res, 404, 'not_found')
      expect(res.body).not.toContain(b.topics.billing)
    }
    // Merging A's topic into B's: the same answer as for an id that exists nowhere.
    const intoB = await call({
      method: 'POST',
      url: topicUrl(a, a.topics.billing, 'merge'),
      payload: { into: b.topics.refunds },
    })
    const intoNothing = await call({
      method: 'POST',
      url: topicUrl(a, a.topics.billing, 'merge'),
      payload: { into: randomUUID() },
    })
    expectError(intoB, 400, 'invalid_request')
    expect(intoB.json().error.message).toBe(intoNothing.json().error.message)
    expect(await state(b)).toEqual(before)
  })

  it('refuses careless and hostile bodies with 4xx, changing nothing', async () => {
    const before = await state(a)
    const cases: [string, unknown, number, string][] = [
      [topicUrl(a, a.topics.billing, 'rename'), { label: 42 }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'rename'), { label: null }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'rename'), ['Billing'], 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'rename'), { label: '\u200b\u200b' }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'rename'), { label: 'Bill\u0007ing' }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'rename'), { label: 'Other' }, 409, 'conflict'],
      [topicUrl(a, a.topics.billing, 'rename'), { label: 'refunds' }, 409, 'conflict'],
      // The same label in another Unicode form (full-width letters): one label to a reader.
      [topicUrl(a, a.topics.billing, 'rename'), { label: 'Ｒｅｆｕｎｄｓ' }, 409, 'conflict'],
      [
        `/api/v1/chatbots/${a.chatbotId}/topics`,
        { label: 'ＢＩＬＬＩＮＧ', examples: ['my invoice', 'a bill'] },
        409,
        'conflict',
      ],
      [
        topicUrl(a, a.topics.billing, 'merge'),
        { into: a.topics.billing.toUpperCase() },
        400,
        'invalid_request',
      ],
      [topicUrl(a, a.topics.billing, 'merge'), { into: a.topics.retired }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'merge'), { into: a.topics.merged }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'merge'), { into: 'not-a-uuid' }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.billing, 'merge'), { into: 7 }, 400, 'invalid_request'],
      [topicUrl(a, a.topics.retired, 'rename'), { label: 'Revived' }, 409, 'conflict'],
      [topicUrl(a, a.topics.merged, 'merge'), { into: a.topics.billing }, 409, 'conflict'],
      [topicUrl(a, 'other', 'hide'), undefined, 404, 'not_found'],
      [
        `/api/v1/chatbots/${a.chatbotId}/topics`,
        { label: 'Other', examples: ['x y', 'y z'] },
        409,
        'conflict',
      ],
      [
        `/api/v1/chatbots/${a.chatbotId}/topics`,
        { label: 'Roadside', examples: Array.from({ length: 10_000 }, (_, i) => `tow ${i}`) },
        400,
        'invalid_request',
      ],
      [`/api/v1/chatbots/${a.chatbotId}/topics`, { label: 'Roadside', examples: [] }, 400, 'invalid_request'],
      [
        `/api/v1/chatbots/${a.chatbotId}/topics`,
        { label: '\u200b', examples: ['tow my car', 'dead battery'] },
        400,
        'invalid_request',
      ],
      [
        `/api/v1/chatbots/${a.chatbotId}/topics`,
        { label: 'Roadside', examples: ['tow my car', '\u200b\u200b'] },
        400,
        'invalid_request',
      ],
      [`/api/v1/chatbots/${a.chatbotId}/reanalysis`, { since: 'yesterday' }, 400, 'invalid_request'],
      [`/api/v1/chatbots/${a.chatbotId}/reanalysis`, { since: 5 }, 400, 'invalid_request'],
      [`/api/v1/chatbots/${a.chatbotId}/reanalysis`, [], 400, 'invalid_request'],
    ]
    for (const [url, payload, status, code] of cases) {
      const res = await call({
        method: 'POST',
        url,
        ...(payload === undefined ? {} : { payload: payload as object }),
      })
      expect.soft(res.statusCode, `${url} ${JSON.stringify(payload)?.slice(0, 80)}: ${res.body}`).toBe(status)
      if (res.statusCode === status) expectError(res, status, code)
    }
    expect(await state(a)).toEqual(before)
  })

  it('starts one re-analysis of two asked for at once: 202 and 409, one command event', async () => {
    const url = `/api/v1/chatbots/${a.chatbotId}/reanalysis`
    const answers = await Promise.all([0, 1, 2].map(() => call({ method: 'POST', url, payload: {} })))
    expect(answers.map((r) => r.statusCode).sort()).toEqual([202, 409, 409])
    for (const r of answers.filter((r) => r.statusCode === 409)) expectError(r, 409, 'conflict')
    const requested = (await journalEvents(db.pool, 'chatbot', a.chatbotId)).filter(
      (e) => e.type === 'chatbot.reanalysis-requested',
    )
    expect(requested.map((e) => e.payload.reanalysisId)).toEqual([
      answers.find((r) => r.statusCode === 202)!.json().reanalysisId,
    ])
  })

  it('answers an API key on the dashboard routes with 401, changing nothing', async () => {
    const before = await state(a)
    for (const [method, url] of [
      ['POST', topicUrl(a, a.topics.billing, 'hide')],
      ['POST', `/api/v1/chatbots/${a.chatbotId}/reanalysis`],
      ['GET', `/api/v1/chatbots/${a.chatbotId}/reanalysis`],
      ['GET', '/api/v1/analytics/signals'],
      ['GET', '/api/v1/analytics/topics'],
      ['GET', '/api/v1/conversations?signal=escalation'],
      ['GET', `/api/v1/conversations/${a.conversationId}`],
      ['PATCH', `/api/v1/chatbots/${a.chatbotId}`],
    ] as const) {
      const res = await app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${a.apiKey}` },
        ...(method === 'GET' ? {} : { payload: {} }),
      })
      expectError(res, 401, 'unauthorized')
    }
    expect(await state(a)).toEqual(before)
  })
})

describe('signals and themes reads', () => {
  it("refuses bad query parameters with 400 in API.md's shape", async () => {
    for (const url of [
      '/api/v1/analytics/signals?tz=Mars/Olympus',
      '/api/v1/analytics/signals?tz=',
      `/api/v1/analytics/signals?tz=${'A'.repeat(5000)}`,
      '/api/v1/analytics/signals?from=2026-11-20T00:00:00Z&to=2026-11-10T00:00:00Z',
      '/api/v1/analytics/signals?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z',
      '/api/v1/analytics/signals?days=0',
      '/api/v1/analytics/signals?days=366',
      '/api/v1/analytics/signals?days=1e309',
      '/api/v1/analytics/signals?days=abc',
      '/api/v1/analytics/signals?interval=hour&days=30',
      '/api/v1/analytics/signals?interval=minute',
      '/api/v1/analytics/signals?limit=0',
      '/api/v1/analytics/signals?limit=100000',
      '/api/v1/analytics/signals?chatbotId=not-a-uuid',
      '/api/v1/analytics/signals?signal=escalation',
      '/api/v1/analytics/signals?from=not-a-date',
      '/api/v1/conversations?signal=nonsense',
      '/api/v1/conversations?signal=custom:UPPER',
      '/api/v1/conversations?signal=custom:',
      `/api/v1/conversations?signal=custom:${'a'.repeat(65)}`,
      '/api/v1/conversations?signal=escalation&signal=bot_failure',
      '/api/v1/conversations?theme=not-a-uuid',
      '/api/v1/conversations?theme=',
    ]) {
      const res = await call({ method: 'GET', url })
      expectError(res, 400, 'invalid_request')
      expect(res.json().error.details?.length ?? 0, url).toBeGreaterThan(0)
    }
  })

  it("never shows another organization's chatbot, signals, themes or conversations", async () => {
    expectError(
      await call({ method: 'GET', url: `/api/v1/analytics/signals?chatbotId=${b.chatbotId}` }),
      404,
      'not_found',
    )
    expectError(
      await call({ method: 'GET', url: `/api/v1/analytics/topics?chatbotId=${b.chatbotId}` }),
      404,
      'not_found',
    )
    expectError(
      await call({ method: 'GET', url: `/api/v1/chatbots/${b.chatbotId}/reanalysis` }),
      404,
      'not_found',
    )
    expectError(
      await call({ method: 'GET', url: `/api/v1/conversations/${b.conversationId}` }),
      404,
      'not_found',
    )
    // Another organization's theme is as unknown as a made-up one: 404, its existence not revealed.
    expectError(
      await call({ method: 'GET', url: `/api/v1/conversations?theme=${b.theme}` }),
      404,
      'not_found',
    )
    for (const query of [`topic=${b.topics.billing}`, 'signal=escalation', '']) {
      const res = await call({ method: 'GET', url: `/api/v1/conversations?limit=100&${query}` })
      expect(res.statusCode, res.body).toBe(200)
      const ids = res.json().conversations.map((c: { id: string }) => c.id)
      expect(ids, query).not.toContain(b.conversationId)
    }
    const signals = await call({ method: 'GET', url: '/api/v1/analytics/signals' })
    expect(signals.statusCode, signals.body).toBe(200)
    expect(signals.body).not.toContain(b.topics.billing)
    expect(signals.body).not.toContain(b.chatbotId)
    const topics = await call({ method: 'GET', url: '/api/v1/analytics/topics' })
    expect(topics.body).not.toContain(b.theme)
    expect(topics.body).not.toContain(b.topics.billing)
  })

  it("gives the conversation's signals with their evidence, and its own theme's conversations", async () => {
    const res = await call({ method: 'GET', url: `/api/v1/conversations/${a.conversationId}` })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().conversation.signals).toMatchObject([
      { name: 'escalation', evidence: ['m-1'] },
      { name: 'bot_failure', evidence: ['m-2'] },
    ])
    // A theme's or a topic's id in capitals is the same id (as a chatbot's or a conversation's is).
    for (const query of [
      `theme=${a.theme}`,
      `theme=${a.theme.toUpperCase()}`,
      `topic=${a.topics.billing.toUpperCase()}`,
      `signal=bot_failure&theme=${a.theme.toUpperCase()}&topic=${a.topics.billing.toUpperCase()}`,
    ]) {
      const listed = await call({ method: 'GET', url: `/api/v1/conversations?${query}` })
      expect(listed.statusCode, listed.body).toBe(200)
      expect(
        listed.json().conversations.map((c: { id: string }) => c.id),
        query,
      ).toEqual([a.conversationId])
    }
  })
})

describe('hidden topics in the signals report', () => {
  const topicEvent = async (type: 'analysis.topic-hidden' | 'analysis.topic-unhidden', topicId: string) => {
    await withTransaction(db.pool, (client) =>
      appendToStream(client, {
        streamType: 'analysis',
        streamId: a.chatbotId,
        orgId: a.orgId,
        chatbotId: a.chatbotId,
        expectedVersion: 'any',
        events: [newEvent(type, { topicId })],
      }),
    )
    await projectAll(db.pool)
  }
  const report = async () => {
    const res = await call({ method: 'GET', url: `/api/v1/analytics/signals?chatbotId=${a.chatbotId}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as {
      conversations: number
      signals: { name: string; conversations: number }[]
      topics: { id: string }[]
      needsAttention: { id: string }[]
    }
  }

  it('leaves a hidden topic out of the per-topic rates and the needs-attention ranking, as the topics report does', async () => {
    const shown = await report()
    expect(shown.topics.map((t) => t.id)).toEqual([a.topics.billing])
    expect(shown.needsAttention.map((t) => t.id)).toEqual([a.topics.billing])
    await topicEvent('analysis.topic-hidden', a.topics.billing)
    try {
      const hidden = await report()
      expect(hidden.topics).toEqual([])
      expect(hidden.needsAttention).toEqual([])
      // Its conversations still count in the signals' totals: they keep their topic and their signals.
      expect(hidden.conversations).toBe(shown.conversations)
      expect(hidden.signals).toEqual(shown.signals)
    } finally {
      await topicEvent('analysis.topic-unhidden', a.topics.billing)
    }
    expect((await report()).needsAttention.map((t) => t.id)).toEqual([a.topics.billing])
  })

  it('links a topic needing attention to the conversations it counted, over the range of the report', async () => {
    // trial5: the link had no range, so for `days=2` it listed 8 conversations where the topic counted 3.
    const res = await call({
      method: 'GET',
      url: `/api/v1/analytics/signals?chatbotId=${a.chatbotId}&days=2`,
    })
    const { range, needsAttention } = res.json() as {
      range: { from: string; to: string }
      needsAttention: { botFailures: number; link: string }[]
    }
    const [topic] = needsAttention
    const link = new URL(topic!.link, 'http://service')
    expect(Object.fromEntries(link.searchParams)).toEqual({
      chatbotId: a.chatbotId,
      topic: a.topics.billing,
      signal: 'bot_failure',
      from: range.from,
      // The list's `to` is inclusive, the report's exclusive.
      to: new Date(Date.parse(range.to) - 1).toISOString(),
    })
    const listed = await call({ method: 'GET', url: `${link.pathname}${link.search}` })
    expect(listed.statusCode, listed.body).toBe(200)
    expect(listed.json().conversations.map((c: { id: string }) => c.id)).toEqual([a.conversationId])
    expect(topic!.botFailures).toBe(1)
  })

  it("lists no conversation whose last message is at the report's exclusive end (trial10)", async () => {
    // Given two failed billing conversations two weeks back: one inside a day, one ending at its end
    const chatbot = { id: a.chatbotId }
    const failed = async (externalId: string, at: string) => {
      const captured = await postCapture(app, a.apiKey, {
        conversationId: externalId,
        messages: [
          { id: 'm-1', role: 'user', content: 'my bill is wrong', sentAt: at },
          { id: 'm-2', role: 'assistant', content: 'Sorry, I cannot help', sentAt: at },
        ],
      })
      expect(captured.statusCode, captured.body).toBe(200)
      const conversationId = captured.json().conversationId as string
      await withTransaction(db.pool, (client) =>
        appendAnalysis(client, {
          orgId: a.orgId,
          chatbotId: chatbot.id,
          conversationId,
          topics: [{ id: a.topics.billing, label: 'Billing' }],
          signals: [{ name: 'bot_failure', confidence: 0.7, evidence: ['m-2'] }],
        }),
      )
      return conversationId
    }
    const inside = await failed('edge-in', '2026-11-19T10:03:00.000Z')
    await failed('edge-at-to', '2026-11-20T00:00:00.000Z')
    await projectAll(db.pool)

    // When the report covers that day
    const res = await call({
      method: 'GET',
      url: `/api/v1/analytics/signals?chatbotId=${chatbot.id}&from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z`,
    })
    expect(res.statusCode, res.body).toBe(200)
    const [topic] = res.json().needsAttention as { botFailures: number; link: string }[]

    // Then its link lists exactly the conversation its figure counted
    expect(topic!.botFailures).toBe(1)
    const listed = await call({ method: 'GET', url: topic!.link })
    expect(listed.statusCode, listed.body).toBe(200)
    expect(listed.json().conversations.map((c: { id: string }) => c.id)).toEqual([inside])
  })
})

describe('signal and topic settings', () => {
  const patch = (settings: unknown, cookie = a.cookie) =>
    call({ method: 'PATCH', url: `/api/v1/chatbots/${a.chatbotId}`, payload: { settings } }, cookie)
  const stored = async () =>
    (await db.pool.query('SELECT settings FROM chatbots WHERE id = $1', [a.chatbotId])).rows[0].settings

  it('refuses bad signal settings with 400, changing nothing', async () => {
    const before = { settings: await stored(), state: await state(a) }
    const example = (label: string) => ({ label, examples: ['can I get a discount?'] })
    for (const settings of [
      { signals: { disabled: ['nonsense'] } },
      { signals: { disabled: 'escalation' } },
      { signals: { custom: [{ label: 'Discount', examples: [] }] } },
      { signals: { custom: [{ label: 'Discount', examples: Array.from({ length: 10_000 }, () => 'x') }] } },
      { signals: { custom: [{ label: 'Discount', examples: ['   '] }] } },
      { signals: { custom: [{ label: 'Discount', examples: ['\u200b'] }] } },
      { signals: { custom: [{ label: '!!!', examples: ['a discount'] }] } },
      // Two labels of one name (custom:discount): the second would never fire.
      { signals: { custom: [example('Discount'), example('discount!')] } },
      // Two labels that have no name of their own (their slug is empty: both custom:signal).
      { signals: { custom: [example('割引'), example('値引き')] } },
      { signals: { abandonmentAfterMinutes: 0 } },
      { signals: { abandonmentAfterMinutes: 1.5 } },
      { topics: { Billing: 'invoice' } },
      { topics: { '   ': ['invoice'] } },
      { topics: { Billing: ['invoice', ' '] } },
    ]) {
      const res = await patch(settings)
      expect.soft(res.statusCode, `${JSON.stringify(settings).slice(0, 100)}: ${res.body}`).toBe(400)
      if (res.statusCode === 400) expectError(res, 400, 'invalid_request')
      else await patch({ signals: null, topics: null })
    }
    expect({ settings: await stored(), state: await state(a) }).toEqual(before)
  })
})

describe("who changes a chatbot's topics, signals, analysis and retention settings", () => {
  const patch = (settings: unknown, cookie: string) =>
    call({ method: 'PATCH', url: `/api/v1/chatbots/${a.chatbotId}`, payload: { settings } }, cookie)
  const stored = async () =>
    (await db.pool.query('SELECT settings FROM chatbots WHERE id = $1', [a.chatbotId])).rows[0].settings

  it('refuses a member settings.topics, settings.signals, settings.analysisEnabled and settings.retentionDays (403, nothing changed), as it does the topic commands and erasure', async () => {
    const member = (await join(app, a.cookie, 'member')).cookie
    const before = { settings: await stored(), state: await state(a) }
    for (const settings of [
      { signals: { disabled: ['bot_failure'] } },
      { signals: null },
      { topics: { Billing: ['invoice'] } },
      { topics: null },
      { customFields: { plan: 'string' }, signals: { abandonmentAfterMinutes: 5 } },
      // Turning analysis off, and the retention whose job erases conversations, as erasure is.
      { analysisEnabled: false },
      { analysisEnabled: null },
      { retentionDays: 1 },
      { retentionDays: null },
      { customFields: { plan: 'string' }, retentionDays: 30 },
    ]) {
      const res = await patch(settings, member)
      expectError(res, 403, 'forbidden', JSON.stringify(settings))
      for (const key of Object.keys(settings).filter((k) => k !== 'customFields')) {
        expect(res.json().error.message).toContain(`settings.${key}`)
      }
    }
    expect({ settings: await stored(), state: await state(a) }).toEqual(before)
    // The rest of the settings stay a member's to change.
    const fields = await patch({ customFields: { plan: 'string' } }, member)
    expect(fields.statusCode, fields.body).toBe(200)
    const admin = (await join(app, a.cookie, 'admin')).cookie
    const signals = await patch(
      {
        signals: { disabled: ['frustration'] },
        topics: { Billing: ['invoice'] },
        analysisEnabled: false,
        retentionDays: 30,
      },
      admin,
    )
    expect(signals.statusCode, signals.body).toBe(200)
    expect(await stored()).toEqual({
      customFields: { plan: 'string' },
      signals: { disabled: ['frustration'] },
      topics: { Billing: ['invoice'] },
      analysisEnabled: false,
      retentionDays: 30,
    })
  })
})
