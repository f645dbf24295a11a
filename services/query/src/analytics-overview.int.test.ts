import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  analyze,
  capture,
  newBot,
  newOrg,
  type Seeded,
  seedAnalytics,
} from '../../../test/support/analytics-seed.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'

const NOW = new Date('2026-11-20T12:30:00Z')

let db: TestDatabase
let app: FastifyInstance
let seed: Seeded

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  seed = await seedAnalytics(app, db)
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

function overview(query: string, cookie = seed.a1.cookie) {
  return app.inject({ method: 'GET', url: `/api/v1/analytics/overview${query}`, headers: { cookie } })
}

async function ok(query: string, cookie?: string) {
  const res = await overview(query, cookie)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/** Key phrases (the seed's topics) are their own ids. */
const ones = (topics: string[]) => topics.map((topic) => ({ topic, id: topic, count: 1 }))

describe('GET /api/v1/analytics/overview', () => {
  it('sums the whole organization over the last 30 days by default', async () => {
    // Hand computation from the seed (test/support/analytics-seed.ts): c6 is older than 30 days, organization B never counts.
    expect(await ok('')).toEqual({
      ok: true,
      range: { from: '2026-10-21T12:00:00.000Z', to: '2026-11-20T13:00:00.000Z' },
      // c1 is active in three hours and counts once.
      totalConversations: 5,
      totalMessages: 11,
      // u1 (c1, c2 on a1; c5 on a2) and u2; c3 has no end user.
      uniqueUsers: 2,
      avgMessagesPerConversation: 2.2,
      // The end users' messages: (0.5 - 0.75 + 0.25 + 0 + 0.75 + 1) / 6, to 4 decimals.
      sentiment: { average: 0.2917, positive: 4, neutral: 1, negative: 1, analyzed: 6 },
      // The assistant's (c1 m2) apart.
      assistantSentiment: { average: 0, positive: 0, neutral: 1, negative: 0, analyzed: 1 },
      // Ten at most, by conversations (billing: c1 and c5), then end-user messages, then label.
      topTopics: [
        { topic: 'billing', id: 'billing', count: 2 },
        ...ones(['account', 'refund', 'shipping', 't01', 't02', 't03', 't04', 't05', 't06']),
      ],
      otherTopic: null,
      messagesByRole: { user: 6, assistant: 3, system: 1, tool: 1 },
      // The seed's results say no language (analytics-languages.int.test.ts has them).
      languages: { detected: 0, notEnglish: 0, notEnglishShare: null, mainOther: null },
    })
  })

  it('narrows to one chatbot with chatbotId', async () => {
    expect(await ok(`?chatbotId=${seed.a1.chatbotId}`)).toMatchObject({
      totalConversations: 3,
      totalMessages: 8,
      uniqueUsers: 1,
      avgMessagesPerConversation: 2.67,
      sentiment: { average: 0, positive: 2, neutral: 1, negative: 1, analyzed: 4 },
      assistantSentiment: { average: 0, positive: 0, neutral: 1, negative: 0, analyzed: 1 },
      topTopics: ones(['account', 'billing', 'refund', 't01', 't02', 't03', 't04', 't05', 't06', 't07']),
      messagesByRole: { user: 4, assistant: 2, system: 1, tool: 1 },
    })
    // u1 talks to both chatbots: 1 + 2 users per chatbot, 2 for the organization.
    expect(await ok(`?chatbotId=${seed.a2.chatbotId.toUpperCase()}`)).toMatchObject({
      totalConversations: 2,
      totalMessages: 3,
      uniqueUsers: 2,
      avgMessagesPerConversation: 1.5,
      sentiment: { average: 0.875, positive: 2, neutral: 0, negative: 0, analyzed: 2 },
      topTopics: ones(['billing', 'shipping']),
      messagesByRole: { user: 2, assistant: 1, system: 0, tool: 0 },
    })
  })

  it('shows another organization only its own data', async () => {
    expect(await ok('', seed.b1.cookie)).toMatchObject({
      totalConversations: 1,
      totalMessages: 3,
      uniqueUsers: 1,
      avgMessagesPerConversation: 3,
      sentiment: { average: -1, positive: 0, neutral: 0, negative: 1, analyzed: 1 },
      topTopics: [{ topic: 'billing', count: 1 }],
      messagesByRole: { user: 2, assistant: 1, system: 0, tool: 0 },
    })
  })

  it('covers whole UTC hours: from rounds down, to rounds up', async () => {
    // Hours 18th 10:00 up to 19th 03:00: c3 (03:00) is out, every message of the 18th is in.
    expect(await ok('?from=2026-11-18T10:30:00Z&to=2026-11-19T03:00:00Z')).toMatchObject({
      range: { from: '2026-11-18T10:00:00.000Z', to: '2026-11-19T03:00:00.000Z' },
      totalConversations: 3,
      totalMessages: 9,
      uniqueUsers: 2,
      sentiment: { average: 0.1875, positive: 3, neutral: 0, negative: 1, analyzed: 4 },
      topTopics: ones(['account', 'billing', 'refund', 'shipping']),
      messagesByRole: { user: 4, assistant: 3, system: 1, tool: 1 },
    })
    // One millisecond past 03:00 takes in the whole 03:00 hour, and c3 with it.
    expect(await ok('?from=2026-11-18T10:30:00Z&to=2026-11-19T03:00:00.001Z')).toMatchObject({
      range: { from: '2026-11-18T10:00:00.000Z', to: '2026-11-19T04:00:00.000Z' },
      totalConversations: 4,
      totalMessages: 10,
    })
  })

  it('counts a conversation by its messages in range, not by all of them', async () => {
    // The 11:00 hour: c1 m3, c2 m1 and m2.
    expect(await ok('?from=2026-11-18T11:00:00Z&to=2026-11-18T12:00:00Z')).toMatchObject({
      totalConversations: 2,
      totalMessages: 3,
      uniqueUsers: 1,
      avgMessagesPerConversation: 1.5,
      sentiment: { average: -0.25, positive: 1, neutral: 0, negative: 1, analyzed: 2 },
      messagesByRole: { user: 2, assistant: 0, system: 1, tool: 0 },
    })
    // A range with `to` only reaches `days` back: 2 days before the 18th 12:00 misses the 18th 13:00 messages.
    expect(await ok('?to=2026-11-18T12:00:00Z&days=2')).toMatchObject({ totalMessages: 7 })
  })

  it('reaches older data with an explicit range, and answers zeros where there is none', async () => {
    expect(await ok('?from=2026-08-01T00:00:00Z&to=2026-12-01T00:00:00Z')).toMatchObject({
      totalConversations: 6,
      totalMessages: 12,
      uniqueUsers: 3,
      avgMessagesPerConversation: 2,
    })
    expect(await ok('?days=1&tz=Asia/Kolkata')).toEqual({
      ok: true,
      range: { from: '2026-11-19T12:00:00.000Z', to: '2026-11-20T13:00:00.000Z' },
      totalConversations: 1,
      totalMessages: 1,
      uniqueUsers: 1,
      avgMessagesPerConversation: 1,
      sentiment: { average: 1, positive: 1, neutral: 0, negative: 0, analyzed: 1 },
      assistantSentiment: { average: null, positive: 0, neutral: 0, negative: 0, analyzed: 0 },
      topTopics: ones(['billing']),
      otherTopic: null,
      messagesByRole: { user: 1, assistant: 0, system: 0, tool: 0 },
      languages: { detected: 0, notEnglish: 0, notEnglishShare: null, mainOther: null },
    })
    expect(await ok('?from=2026-10-01T00:00:00Z&to=2026-10-02T00:00:00Z')).toEqual({
      ok: true,
      range: { from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z' },
      totalConversations: 0,
      totalMessages: 0,
      uniqueUsers: 0,
      avgMessagesPerConversation: 0,
      sentiment: { average: null, positive: 0, neutral: 0, negative: 0, analyzed: 0 },
      assistantSentiment: { average: null, positive: 0, neutral: 0, negative: 0, analyzed: 0 },
      topTopics: [],
      otherTopic: null,
      messagesByRole: { user: 0, assistant: 0, system: 0, tool: 0 },
      languages: { detected: 0, notEnglish: 0, notEnglishShare: null, mainOther: null },
    })
  })

  it('answers 401 without a session', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/analytics/overview' })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('unauthorized')
  })

  it("answers 404 for another organization's chatbot, or an unknown one", async () => {
    for (const id of [seed.b1.chatbotId, randomUUID()]) {
      const res = await overview(`?chatbotId=${id}`)
      expect(res.statusCode, id).toBe(404)
      expect(res.json().error.code).toBe('not_found')
    }
  })

  it.each([
    ['?days=0', '/days'],
    ['?days=366', '/days'],
    ['?days=seven', '/days'],
    ['?from=2025-11-20T12:29:00Z&to=2026-11-20T12:30:00Z', '/from'],
    ['?from=2026-11-18T10:00:00Z&to=2026-11-18T10:00:00Z', '/from'],
    ['?from=2026-11-18T10:00:00Z&days=3', '/days'],
    ['?from=2026-11-18T10:00:00', '/from'],
    ['?to=yesterday', '/to'],
    ['?tz=Mars/Olympus', '/tz'],
    ['?tz=UTC%2B5', '/tz'],
    ['?chatbotId=not-a-uuid', '/chatbotId'],
    ['?interval=day', '/'],
  ])('answers 400 for %s', async (query, path) => {
    const res = await overview(query)
    expect(res.statusCode, res.body).toBe(400)
    const { error } = res.json()
    expect(error.code).toBe('invalid_request')
    expect(error.message).toBe('The request querystring is invalid.')
    expect(error.details).toEqual([expect.objectContaining({ path, message: expect.any(String) })])
    // Our own checks say where the parameter is; the shared handler's schema errors do not (yet).
    expect(error.details[0].in ?? 'querystring').toBe('querystring')
  })
})

describe('top topics, on the overview as on the Topics page', () => {
  it('counts conversations, not messages, ranks them as the Topics page does, and shows Other apart in both', async () => {
    const org = await newOrg(app)
    const bot = await newBot(app, org)
    const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, '0')}:00Z`
    // "setup": one talkative conversation of six end-user messages. "login": three conversations of one.
    // "other": two conversations in no topic. "billing": two conversations, one message each in range.
    const chatty = await capture(
      app,
      bot,
      'chatty',
      Array.from({ length: 6 }, (_, i) => [`m${i}`, 'user', at(i)] as [string, 'user', string]),
    )
    await analyze(
      db,
      bot,
      chatty,
      Array.from(
        { length: 6 },
        (_, i) => [`m${i}`, 0.25, 'positive', ['setup']] as [string, number, 'positive', string[]],
      ),
    )
    for (const [name, topic] of [
      ['l1', 'login'],
      ['l2', 'login'],
      ['l3', 'login'],
      ['o1', 'other'],
      ['o2', 'other'],
      ['b1', 'billing'],
      ['b2', 'billing'],
    ] as const) {
      const id = await capture(app, bot, name, [['m', 'user', at(30)]])
      await analyze(db, bot, id, [['m', -0.25, 'negative', [topic]]])
    }
    await projectAll(db.pool)
    const range = 'from=2026-11-20T00:00:00Z&to=2026-11-20T12:00:00Z'
    const overview = await ok(`?${range}`, org.cookie)
    const topicsRes = await app.inject({
      method: 'GET',
      url: `/api/v1/analytics/topics?${range}`,
      headers: { cookie: org.cookie },
    })
    expect(topicsRes.statusCode, topicsRes.body).toBe(200)
    const page = topicsRes.json()
    // Conversations first: login (3) above billing (2, fewer messages would not matter) above setup (1
    // conversation of 6 messages), whose six messages ranked it first when the overview counted messages.
    expect(overview.topTopics).toEqual([
      { topic: 'login', id: 'login', count: 3 },
      { topic: 'billing', id: 'billing', count: 2 },
      { topic: 'setup', id: 'setup', count: 1 },
    ])
    expect(overview.otherTopic).toEqual({ topic: 'Other', id: 'other', count: 2 })
    // The Topics page: the same topics, in the same order, with the same counts; "other" apart there too.
    expect(
      page.topics.map((t: { label: string; id: string; conversations: number }) => ({
        topic: t.label,
        id: t.id,
        count: t.conversations,
      })),
    ).toEqual(overview.topTopics)
    expect(page.other.conversations).toBe(overview.otherTopic.count)
    // A conversation in no topic shows as Other in the conversation list too.
    const list = await app.inject({
      method: 'GET',
      url: '/api/v1/conversations?topic=other',
      headers: { cookie: org.cookie },
    })
    expect(list.json().conversations.map((c: { topics: string[] }) => c.topics)).toEqual([
      ['Other'],
      ['Other'],
    ])
  })

  it('counts on the Topics page, themes included, each conversation with a message in range once', async () => {
    const org = await newOrg(app)
    const bot = await newBot(app, org)
    const [GAP, INSIDE, TWICE, THEME] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    const at = (time: string) => `2026-11-19T${time}:00Z`
    // The range is 11:00 to 13:00. "gap": messages before and after it, none in it (it spans the range
    // without being active in it). "inside": one message in it between two outside. "twice": two in it.
    const conversations: [string, string, string[]][] = [
      ['gap', GAP, ['09:10', '14:10']],
      ['inside', INSIDE, ['09:10', '12:10', '14:10']],
      ['twice', TWICE, ['11:10', '12:20']],
    ]
    for (const [name, topic, times] of conversations) {
      const id = await capture(
        app,
        bot,
        name,
        times.map((t, i) => [`m${i}`, 'user', at(t)] as [string, 'user', string]),
      )
      await analyze(
        db,
        bot,
        id,
        times.map((_, i) => [`m${i}`, 0, 'neutral', [topic]] as [string, number, 'neutral', string[]]),
      )
    }
    await withTransaction(db.pool, (client) =>
      appendToStream(client, {
        streamType: 'analysis',
        streamId: bot.chatbotId,
        orgId: bot.orgId,
        chatbotId: bot.chatbotId,
        expectedVersion: 'any',
        events: [
          newEvent('analysis.themes-assigned', {
            themes: [{ themeId: THEME, label: 'All', topicIds: [GAP, INSIDE, TWICE] }],
          }),
        ],
      }),
    )
    await projectAll(db.pool)
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/analytics/topics?chatbotId=${bot.chatbotId}&from=${at('11:00')}&to=${at('13:00')}`,
      headers: { cookie: org.cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    const page = res.json()
    expect(page.conversationsWithTopics).toBe(2)
    expect(
      page.topics.map((t: { id: string; conversations: number; messages: number; share: number }) => [
        t.id,
        t.conversations,
        t.messages,
        t.share,
      ]),
    ).toEqual([
      [TWICE, 1, 2, 0.5],
      [INSIDE, 1, 1, 0.5],
    ])
    // Each with its conversation as the example, as it is now (its last message after the range too).
    expect(
      page.topics.map((t: { examples: { conversationId: string; lastMessageAt: string }[] }) =>
        t.examples.map((e) => [e.conversationId, e.lastMessageAt]),
      ),
    ).toEqual([
      [['twice', at('12:20').replace('Z', '.000Z')]],
      [['inside', at('14:10').replace('Z', '.000Z')]],
    ])
    expect(page.themes).toEqual([
      {
        id: THEME,
        chatbotId: bot.chatbotId,
        label: 'All',
        conversations: 2,
        messages: 3,
        share: 1,
        topicIds: [TWICE, INSIDE],
      },
    ])
  })
})
