import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'

let db: TestDatabase
let app: FastifyInstance
let cookie: string
let otherCookie: string
let bot: { id: string; apiKey: string; orgId: string }
let otherBot: { id: string; apiKey: string }
/** Internal id by caller's conversationId, for the conversations made in beforeAll. */
const ids = new Map<string, string>()

async function capture(
  apiKey: string,
  conversationId: string,
  messages: [string, string, string][],
  extra = {},
) {
  const res = await postCapture(app, apiKey, {
    conversationId,
    messages: messages.map(([id, sentAt, content]) => ({ id, role: 'user', content, sentAt })),
    ...extra,
  })
  expect(res.statusCode, res.body).toBe(200)
  ids.set(conversationId, res.json().conversationId)
  return res.json().conversationId as string
}

async function analyzeConversation(
  conversationId: string,
  label: 'positive' | 'neutral' | 'negative',
  topics: string[],
) {
  await withTransaction(db.pool, (client) =>
    appendToStream(client, {
      streamType: 'analysis',
      streamId: conversationId,
      orgId: bot.orgId,
      chatbotId: bot.id,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.conversation-analyzed', {
          analyzer: { name: 'test', version: '1' },
          sentiment: { score: label === 'positive' ? 0.7 : label === 'negative' ? -0.7 : 0, label },
          assistantSentiment: null,
          topics: topics.map((t) => ({ id: t, label: t })),
        }),
      ],
    }),
  )
}

function get(url: string, as = cookie) {
  return app.inject({ method: 'GET', url, headers: { cookie: as } })
}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  const me = await signUp(app)
  cookie = me.cookie
  otherCookie = (await signUp(app)).cookie
  const created = await createChatbot(app, cookie)
  bot = { id: created.chatbot.id, apiKey: created.apiKey, orgId: me.organization.id }
  const other = await createChatbot(app, otherCookie)
  otherBot = { id: other.chatbot.id, apiKey: other.apiKey }
  // 25 conversations, one per hour, the last message of conversation n at hour n.
  for (let n = 0; n < 25; n++) {
    const at = new Date(Date.UTC(2026, 10, 1, n)).toISOString()
    await capture(bot.apiKey, `page-${n}`, [[`m-${n}`, at, `message number ${n}`]], {
      user: { id: `user-${n % 3}` },
    })
  }
  await capture(bot.apiKey, 'refund', [
    ['r', '2026-11-02T09:00:00Z', 'I want a refund for my broken umbrella'],
  ])
  await capture(otherBot.apiKey, 'foreign', [['f', '2026-11-02T10:00:00Z', 'refund umbrella please']])
  await analyzeConversation(ids.get('refund')!, 'negative', ['refunds', 'umbrellas'])
  await analyzeConversation(ids.get('page-3')!, 'positive', ['praise'])
  await projectAll(db.pool)
})
afterAll(async () => {
  await app.close()
  await db.drop()
})

describe('GET /api/v1/conversations', () => {
  it('pages through every conversation once, newest last message first, with an opaque cursor', async () => {
    const seen: string[] = []
    let url = '/api/v1/conversations?limit=10'
    for (let page = 0; page < 5; page++) {
      const res = await get(url)
      expect(res.statusCode).toBe(200)
      const body = res.json()
      seen.push(...body.conversations.map((c: { conversationId: string }) => c.conversationId))
      if (!body.nextCursor) break
      url = `/api/v1/conversations?limit=10&cursor=${body.nextCursor}`
    }
    expect(seen).toEqual(['refund', ...Array.from({ length: 25 }, (_, i) => `page-${24 - i}`)])
  })

  it('returns the Conversation shape of API.md', async () => {
    const res = await get(`/api/v1/conversations?limit=1&q=umbrella`)
    expect(res.json()).toEqual({
      ok: true,
      nextCursor: null,
      conversations: [
        {
          id: ids.get('refund'),
          chatbotId: bot.id,
          conversationId: 'refund',
          user: {},
          organization: {},
          session: {},
          custom: {},
          messageCount: 1,
          firstMessageAt: '2026-11-02T09:00:00.000Z',
          lastMessageAt: '2026-11-02T09:00:00.000Z',
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          sentiment: { score: -0.7, label: 'negative' },
          assistantSentiment: null,
          topics: ['refunds', 'umbrellas'],
          topicIds: ['refunds', 'umbrellas'],
          preview: 'I want a refund for my broken umbrella',
          signals: [],
        },
      ],
    })
  })

  it.each([
    [
      'from/to on last message time',
      'from=2026-11-01T05:00:00Z&to=2026-11-01T07:00:00Z',
      ['page-7', 'page-6', 'page-5'],
    ],
    ['userId', 'userId=user-2&to=2026-11-01T12:00:00Z', ['page-11', 'page-8', 'page-5', 'page-2']],
    ['sentiment', 'sentiment=positive', ['page-3']],
    ['topic', 'topic=umbrellas', ['refund']],
    ['full-text q', 'q=broken', ['refund']],
    ['q matching nothing', 'q=zebra', []],
  ])('filters by %s', async (_what, query, expected) => {
    const res = await get(`/api/v1/conversations?${query}&chatbotId=${bot.id}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().conversations.map((c: { conversationId: string }) => c.conversationId)).toEqual(
      expected,
    )
  })

  it('takes one instant as a range (both ends inclusive) and refuses a from after to, as analytics does', async () => {
    const instant = await get(
      `/api/v1/conversations?from=2026-11-01T06:00:00Z&to=2026-11-01T06:00:00Z&chatbotId=${bot.id}`,
    )
    expect(instant.statusCode, instant.body).toBe(200)
    const res = await get(
      `/api/v1/conversations?from=2026-12-01T00:00:00Z&to=2026-11-01T00:00:00Z&chatbotId=${bot.id}`,
    )
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: 'The request querystring is invalid.',
        details: [{ path: '/from', message: 'must not be after to', in: 'querystring' }],
      },
    })
  })

  it("never lists another organization's conversations, even searching for them", async () => {
    const res = await get('/api/v1/conversations?q=umbrella&limit=100')
    expect(res.json().conversations.map((c: { conversationId: string }) => c.conversationId)).toEqual([
      'refund',
    ])
    const theirs = await get(`/api/v1/conversations?chatbotId=${bot.id}`, otherCookie)
    expect(theirs.statusCode).toBe(404)
    expect(theirs.json().error.code).toBe('not_found')
  })

  // The list answered 200 with no conversations for a chatbot id it did not know, where analytics is 404.
  it('answers 404 for a chatbot id that is unknown, as for one of another organization', async () => {
    const unknown = await get(`/api/v1/conversations?chatbotId=${randomUUID()}`)
    const theirs = await get(`/api/v1/conversations?chatbotId=${otherBot.id}`)
    for (const res of [unknown, theirs]) {
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({
        ok: false,
        error: { code: 'not_found', message: 'No chatbot with this id.' },
      })
    }
    const ours = await get(`/api/v1/conversations?chatbotId=${bot.id.toUpperCase()}&q=zebra`)
    expect(ours.statusCode).toBe(200)
  })

  it.each([
    ['limit=101', '/limit'],
    ['limit=0', '/limit'],
    ['limit=ten', '/limit'],
    ['cursor=bm9wZQ', '/cursor'],
    ['sentiment=happy', '/sentiment'],
    ['chatbotId=42', '/chatbotId'],
    ['from=yesterday', '/from'],
    ['colour=blue', '/'],
  ])('answers 400 for %s', async (query, path) => {
    const res = await get(`/api/v1/conversations?${query}`)
    expect(res.statusCode).toBe(400)
    expect(res.json().error.code).toBe('invalid_request')
    expect(res.json().error.details.map((d: { path: string }) => d.path)).toContain(path)
  })

  it('answers 401 without a session', async () => {
    const res = await app.inject('/api/v1/conversations')
    expect(res.statusCode).toBe(401)
  })
})

describe("the list's preview: the end user's first message", () => {
  let previews: { id: string; apiKey: string }
  const listed = async () => {
    const res = await get(`/api/v1/conversations?chatbotId=${previews.id}&limit=100`)
    expect(res.statusCode, res.body).toBe(200)
    return Object.fromEntries(
      res
        .json()
        .conversations.map((c: { conversationId: string; preview: string | null }) => [
          c.conversationId,
          c.preview,
        ]),
    )
  }
  const send = (
    conversationId: string,
    messages: { id: string; role: string; content: string; sentAt: string }[],
  ) =>
    postCapture(app, previews.apiKey, { conversationId, messages }).then((res) =>
      expect(res.statusCode, res.body).toBe(200),
    )

  beforeAll(async () => {
    const created = await createChatbot(app, cookie, { name: 'Previews bot' })
    previews = { id: created.chatbot.id, apiKey: created.apiKey }
  })

  it('is the first end-user message with text, on one line, cut to 160 characters without splitting a character', async () => {
    await send('greeted', [
      { id: 'a', role: 'assistant', content: 'Hi! How can I help?', sentAt: '2026-11-05T10:00:00Z' },
      { id: 'b', role: 'user', content: '  ', sentAt: '2026-11-05T10:00:01Z' },
      { id: 'c', role: 'user', content: 'My order\n\nnever   arrived', sentAt: '2026-11-05T10:00:02Z' },
      { id: 'd', role: 'user', content: 'Hello?', sentAt: '2026-11-05T10:00:03Z' },
    ])
    await send('long', [
      { id: 'a', role: 'user', content: `${'🙂'.repeat(200)} end`, sentAt: '2026-11-05T10:00:00Z' },
    ])
    await send('silent', [
      { id: 'a', role: 'assistant', content: 'Anyone there?', sentAt: '2026-11-05T10:00:00Z' },
    ])
    await projectAll(db.pool)
    const shown = await listed()
    expect(shown.greeted).toBe('My order never arrived')
    expect(shown.long).toBe(`${'🙂'.repeat(159)}…`)
    expect(shown.silent).toBeNull()
  })

  it('changes when a later capture brings an earlier end-user message, and only then', async () => {
    await send('late', [{ id: 'b', role: 'user', content: 'Second thought', sentAt: '2026-11-05T11:00:00Z' }])
    await projectAll(db.pool)
    expect((await listed()).late).toBe('Second thought')
    await send('late', [{ id: 'c', role: 'user', content: 'Even later', sentAt: '2026-11-05T12:00:00Z' }])
    await send('silent', [{ id: 'b', role: 'user', content: 'Now I speak', sentAt: '2026-11-05T12:00:00Z' }])
    await projectAll(db.pool)
    expect(await listed()).toMatchObject({ late: 'Second thought', silent: 'Now I speak' })
    await send('late', [{ id: 'a', role: 'user', content: 'First, in fact', sentAt: '2026-11-05T10:30:00Z' }])
    await projectAll(db.pool)
    expect((await listed()).late).toBe('First, in fact')
  })
})

describe('GET /api/v1/conversations?q= (stemmed full-text search)', () => {
  let stems: { id: string; apiKey: string }
  beforeAll(async () => {
    const created = await createChatbot(app, cookie, { name: 'Stems bot' })
    stems = { id: created.chatbot.id, apiKey: created.apiKey }
    const say = (conversationId: string, content: string) =>
      capture(stems.apiKey, conversationId, [['m', '2026-11-03T10:00:00Z', content]])
    await say('crash', 'The app crash happened at login')
    await say('crashes', 'It crashes every time I open settings')
    await say('crashed', 'Yesterday the whole thing crashed')
    await say('crashing', 'Why does it keep crashing?')
    await say('crash-title', 'CRASH report attached')
    await say('cancel', 'How do I cancel my plan?')
    await say('cancelled', 'I cancelled last week but was charged')
    await say('canceling', 'Canceling is impossible on the phone')
    await say('unrelated', 'The crane lifted the canvas')
    await say('accented', 'Quiero la devolución del billete, por favor')
    await say('unaccented', 'la devolucion no llega')
    await projectAll(db.pool)
  })

  const found = async (q: string) => {
    const res = await get(`/api/v1/conversations?chatbotId=${stems.id}&limit=100&q=${encodeURIComponent(q)}`)
    expect(res.statusCode, res.body).toBe(200)
    return res
      .json()
      .conversations.map((c: { conversationId: string }) => c.conversationId)
      .sort()
  }

  it.each(['crash', 'crashes', 'crashed', 'crashing', 'Crash'])(
    'q=%s finds every inflection of crash',
    async (q) => {
      expect(await found(q)).toEqual(['crash', 'crash-title', 'crashed', 'crashes', 'crashing'])
    },
  )

  it.each(['cancel', 'cancelled', 'canceling'])('q=%s finds every inflection of cancel', async (q) => {
    expect(await found(q)).toEqual(['cancel', 'canceling', 'cancelled'])
  })

  it.each(['devolución', 'devolucion', 'Devolución', 'DEVOLUCION'])(
    'q=%s finds the word with and without its accent (trial6)',
    async (q) => {
      expect(await found(q)).toEqual(['accented', 'unaccented'])
    },
  )

  it('keeps websearch syntax: phrases, OR and exclusion, over stems', async () => {
    expect(await found('"keeps crashing"')).toEqual(['crashing'])
    expect(await found('crashed or cancelling')).toEqual([
      'cancel',
      'canceling',
      'cancelled',
      'crash',
      'crash-title',
      'crashed',
      'crashes',
      'crashing',
    ])
    expect(await found('crash -report')).toEqual(['crash', 'crashed', 'crashes', 'crashing'])
  })
})

describe('GET /api/v1/conversations?topic= (part of a label, any case)', () => {
  let topicsBot: { id: string; apiKey: string }
  const BILLING = randomUUID()
  const LOGIN = randomUUID()
  const PASSWORDS = randomUUID()
  const ADOPTION = randomUUID()
  const append = (streamId: string, events: ReturnType<typeof newEvent>[]) =>
    withTransaction(db.pool, (client) =>
      appendToStream(client, {
        streamType: 'analysis',
        streamId,
        orgId: bot.orgId,
        chatbotId: topicsBot.id,
        expectedVersion: 'any',
        events,
      }),
    )
  /** A conversation of one end-user message, analyzed into the given topics (message and conversation). */
  const onTopics = async (conversationId: string, topics: { id: string; label: string }[]) => {
    const id = await capture(topicsBot.apiKey, conversationId, [
      ['m', '2026-11-04T10:00:00Z', conversationId],
    ])
    const analyzer = { name: 'test', version: '1' }
    const sentiment = { score: 0, label: 'neutral' as const }
    await append(id, [
      newEvent('analysis.messages-analyzed', {
        analyzer,
        results: [{ messageId: 'm', sentiment, topics }],
        signalsDecided: true,
      }),
      newEvent('analysis.conversation-analyzed', { analyzer, sentiment, assistantSentiment: null, topics }),
    ])
  }

  beforeAll(async () => {
    const created = await createChatbot(app, cookie, { name: 'Topics bot' })
    topicsBot = { id: created.chatbot.id, apiKey: created.apiKey }
    // Discovered topics (rm_topics rows, labelled) and key phrases (their own labels, no row).
    const discovered = (topicId: string, label: string) =>
      newEvent('analysis.topic-discovered', { topicId, label, keywords: [], configured: false })
    await append(topicsBot.id, [
      discovered(BILLING, 'Billing, invoices'),
      discovered(LOGIN, 'Login problems'),
      discovered(PASSWORDS, 'Password reset'),
      discovered(ADOPTION, 'adopt, birth mother'),
    ])
    await onTopics('invoice', [{ id: BILLING, label: 'Billing, invoices' }])
    await onTopics('login', [{ id: LOGIN, label: 'Login problems' }])
    await onTopics('reset', [{ id: PASSWORDS, label: 'Password reset' }])
    await onTopics('phrase', [{ id: 'rebilling fees', label: 'rebilling fees' }])
    await onTopics('tail', [{ id: 'other', label: 'other' }])
    await onTopics('adoption', [{ id: ADOPTION, label: 'adopt, birth mother' }])
    await projectAll(db.pool)
  })

  const listed = async (topic: string) => {
    const res = await get(
      `/api/v1/conversations?chatbotId=${topicsBot.id}&limit=100&topic=${encodeURIComponent(topic)}`,
    )
    expect(res.statusCode, res.body).toBe(200)
    return res
      .json()
      .conversations.map((c: { conversationId: string }) => c.conversationId)
      .sort()
  }

  it.each([
    ['a whole label', 'Login problems', ['login']],
    ['a label in another case', 'LOGIN PROBLEMS', ['login']],
    ['a word of a label, any case', 'login', ['login']],
    ['part of a word, in labels and key phrases', 'BILL', ['invoice', 'phrase']],
    ['part of a key phrase', 'fees', ['phrase']],
    ['a topic id', PASSWORDS, ['reset']],
    [
      '"other", the long tail alone (the id the Topics page links Other with), not "birth mother"',
      'other',
      ['tail'],
    ],
    ['"Other", its label, the long tail alone', 'Other', ['tail']],
    ['part of "other", the long tail and labels containing it', 'othe', ['adoption', 'tail']],
    ['LIKE wildcards, taken literally', '%', []],
    ['an underscore, taken literally', 'log_n', []],
    ['no label', 'shipping', []],
  ])('matches %s', async (_what, topic, expected) => {
    expect(await listed(topic)).toEqual(expected)
  })

  it('matches in the whole organization without chatbotId', async () => {
    const res = await get(`/api/v1/conversations?limit=100&topic=${encodeURIComponent('reset')}`)
    expect(res.json().conversations.map((c: { conversationId: string }) => c.conversationId)).toEqual([
      'reset',
    ])
  })
})

describe('themes: GET /api/v1/conversations?theme= and the topics API', () => {
  let themesBot: { id: string; apiKey: string }
  const CARD_DELIVERY = randomUUID()
  const CARD_ACTIVATE = randomUUID()
  const LOST_CARD = randomUUID()
  const TRANSFER_FEE = randomUUID()
  const CARDS = randomUUID()
  const TRANSFERS = randomUUID()
  const append = (streamId: string, events: ReturnType<typeof newEvent>[]) =>
    withTransaction(db.pool, (client) =>
      appendToStream(client, {
        streamType: 'analysis',
        streamId,
        orgId: bot.orgId,
        chatbotId: themesBot.id,
        expectedVersion: 'any',
        events,
      }),
    )
  /** A conversation of one end-user message per topic, analyzed into them. */
  const onTopics = async (conversationId: string, topics: { id: string; label: string }[]) => {
    const id = await capture(
      themesBot.apiKey,
      conversationId,
      topics.map((t, i) => [`m${i}`, `2026-11-04T10:00:0${i}Z`, t.label]),
    )
    const analyzer = { name: 'test', version: '1' }
    const sentiment = { score: 0, label: 'neutral' as const }
    const results = topics.map((t, i) => ({ messageId: `m${i}`, sentiment, topics: [t] }))
    await append(id, [
      newEvent('analysis.messages-analyzed', { analyzer, results, signalsDecided: true }),
      newEvent('analysis.conversation-analyzed', { analyzer, sentiment, assistantSentiment: null, topics }),
    ])
  }
  const topic = (id: string, label: string) => ({ id, label })

  beforeAll(async () => {
    const created = await createChatbot(app, cookie, { name: 'Themes bot' })
    themesBot = { id: created.chatbot.id, apiKey: created.apiKey }
    const discovered = (topicId: string, label: string) =>
      newEvent('analysis.topic-discovered', { topicId, label, keywords: [], configured: false })
    const themes = (list: [string, string, string[]][]) =>
      newEvent('analysis.themes-assigned', {
        themes: list.map(([themeId, label, topicIds]) => ({ themeId, label, topicIds })),
      })
    await append(themesBot.id, [
      discovered(CARD_DELIVERY, 'card delivery'),
      discovered(CARD_ACTIVATE, 'activate card'),
      discovered(LOST_CARD, 'lost card'),
      discovered(TRANSFER_FEE, 'transfer fee'),
      // A first grouping, replaced whole by the second.
      themes([[TRANSFERS, 'Everything', [CARD_DELIVERY, CARD_ACTIVATE, LOST_CARD, TRANSFER_FEE]]]),
      newEvent('analysis.topic-merged', { topicId: LOST_CARD, into: CARD_ACTIVATE }),
      themes([
        [CARDS, 'Card', [CARD_DELIVERY, CARD_ACTIVATE]],
        [TRANSFERS, 'Transfer', [TRANSFER_FEE]],
      ]),
    ])
    await onTopics('delivery', [topic(CARD_DELIVERY, 'card delivery')])
    await onTopics('both', [topic(CARD_DELIVERY, 'card delivery'), topic(CARD_ACTIVATE, 'activate card')])
    await onTopics('lost', [topic(LOST_CARD, 'lost card')])
    await onTopics('fee', [topic(TRANSFER_FEE, 'transfer fee')])
    await onTopics('phrase', [topic('card fees', 'card fees')])
    await projectAll(db.pool)
  })

  const listed = async (query: string) => {
    const res = await get(`/api/v1/conversations?chatbotId=${themesBot.id}&limit=100&${query}`)
    expect(res.statusCode, res.body).toBe(200)
    return res
      .json()
      .conversations.map((c: { conversationId: string }) => c.conversationId)
      .sort()
  }

  it('lists the conversations in any topic of the theme, merged topics included', async () => {
    expect(await listed(`theme=${CARDS}`)).toEqual(['both', 'delivery', 'lost'])
    expect(await listed(`theme=${TRANSFERS}`)).toEqual(['fee'])
  })

  it('answers 404 for a theme the organization or the chatbot does not have, as for an unknown chatbot', async () => {
    for (const query of [`theme=${randomUUID()}`, `theme=${CARDS}&chatbotId=${bot.id}`]) {
      const res = await get(`/api/v1/conversations?${query}`)
      expect(res.statusCode, query).toBe(404)
      expect(res.json()).toEqual({
        ok: false,
        error: { code: 'not_found', message: 'No theme with this id.' },
      })
    }
  })

  it('takes a theme and a topic together as both', async () => {
    expect(await listed(`theme=${CARDS}&topic=${CARD_ACTIVATE}`)).toEqual(['both', 'lost'])
    expect(await listed(`theme=${TRANSFERS}&topic=card`)).toEqual([])
  })

  it('answers 400 invalid_request for a theme that is no id', async () => {
    for (const theme of ['cards', '', '1234']) {
      const res = await get(`/api/v1/conversations?theme=${encodeURIComponent(theme)}`)
      expect(res.statusCode, theme).toBe(400)
      expect(res.json()).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    }
  })

  it('gives each topic its theme and each theme its totals, a conversation in two of its topics once', async () => {
    const res = await get(
      `/api/v1/analytics/topics?chatbotId=${themesBot.id}&from=2026-11-04T00:00:00Z&to=2026-11-05T00:00:00Z`,
    )
    expect(res.statusCode, res.body).toBe(200)
    const page = res.json()
    const themeOf = Object.fromEntries(
      page.topics.map((t: { label: string; theme: unknown }) => [t.label, t.theme]),
    )
    expect(themeOf).toEqual({
      'card delivery': { id: CARDS, label: 'Card' },
      'activate card': { id: CARDS, label: 'Card' },
      'transfer fee': { id: TRANSFERS, label: 'Transfer' },
      'card fees': null,
    })
    expect(page.themes).toEqual([
      {
        id: CARDS,
        chatbotId: themesBot.id,
        label: 'Card',
        conversations: 3,
        messages: 4,
        share: 0.6,
        // As ranked: two conversations each, two messages each, then by label.
        topicIds: [CARD_ACTIVATE, CARD_DELIVERY],
      },
      {
        id: TRANSFERS,
        chatbotId: themesBot.id,
        label: 'Transfer',
        conversations: 1,
        messages: 1,
        share: 0.2,
        topicIds: [TRANSFER_FEE],
      },
    ])
  })
})

describe('a theme with a hidden topic', () => {
  const SHOWN = randomUUID()
  const HIDDEN = randomUUID()
  const THEME = randomUUID()
  const HIDDEN_THEME = randomUUID()
  let hiddenBot: { id: string; apiKey: string }
  const append = (streamId: string, events: ReturnType<typeof newEvent>[]) =>
    withTransaction(db.pool, (client) =>
      appendToStream(client, {
        streamType: 'analysis',
        streamId,
        orgId: bot.orgId,
        chatbotId: hiddenBot.id,
        expectedVersion: 'any',
        events,
      }),
    )
  const onTopics = async (conversationId: string, topics: { id: string; label: string }[]) => {
    const id = await capture(
      hiddenBot.apiKey,
      conversationId,
      topics.map((t, i) => [`m${i}`, `2026-11-04T10:00:0${i}Z`, t.label]),
    )
    const analyzer = { name: 'test', version: '1' }
    const sentiment = { score: 0, label: 'neutral' as const }
    const results = topics.map((t, i) => ({ messageId: `m${i}`, sentiment, topics: [t] }))
    await append(id, [
      newEvent('analysis.messages-analyzed', { analyzer, results, signalsDecided: true }),
      newEvent('analysis.conversation-analyzed', { analyzer, sentiment, assistantSentiment: null, topics }),
    ])
  }

  beforeAll(async () => {
    const created = await createChatbot(app, cookie, { name: 'Hidden topic bot' })
    hiddenBot = { id: created.chatbot.id, apiKey: created.apiKey }
    const discovered = (topicId: string, label: string) =>
      newEvent('analysis.topic-discovered', { topicId, label, keywords: [], configured: false })
    await append(hiddenBot.id, [
      discovered(SHOWN, 'order delivery'),
      discovered(HIDDEN, 'ta, ty'),
      newEvent('analysis.themes-assigned', {
        themes: [
          { themeId: THEME, label: 'Order', topicIds: [SHOWN, HIDDEN] },
          { themeId: HIDDEN_THEME, label: 'Thanks', topicIds: [HIDDEN] },
        ],
      }),
      newEvent('analysis.topic-hidden', { topicId: HIDDEN }),
    ])
    const shown = { id: SHOWN, label: 'order delivery' }
    const hidden = { id: HIDDEN, label: 'ta, ty' }
    await onTopics('shown', [shown])
    await onTopics('both', [shown, hidden])
    await onTopics('hidden-only', [hidden])
    await projectAll(db.pool)
  })

  // Walked on 626 multi-turn conversations: hiding "ta, ty" left a theme at 155 conversations but 139
  // end-user messages, more conversations than its shown topics held together (133).
  it('counts and lists only the conversations of the topics it shows', async () => {
    const res = await get(
      `/api/v1/analytics/topics?chatbotId=${hiddenBot.id}&from=2026-11-04T00:00:00Z&to=2026-11-05T00:00:00Z`,
    )
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().themes).toEqual([
      expect.objectContaining({ id: THEME, conversations: 2, messages: 2, topicIds: [SHOWN] }),
    ])
    const list = await get(`/api/v1/conversations?chatbotId=${hiddenBot.id}&limit=100&theme=${THEME}`)
    expect(list.statusCode, list.body).toBe(200)
    expect(
      list
        .json()
        .conversations.map((c: { conversationId: string }) => c.conversationId)
        .sort(),
    ).toEqual(['both', 'shown'])
  })

  it('lists no conversation for a theme whose topics are all hidden: a theme it has, not a 404', async () => {
    const list = await get(`/api/v1/conversations?chatbotId=${hiddenBot.id}&limit=100&theme=${HIDDEN_THEME}`)
    expect(list.statusCode, list.body).toBe(200)
    expect(list.json().conversations).toEqual([])
  })
})

describe('GET /api/v1/conversations/:id', () => {
  it('returns the conversation with its messages in sentAt order, ties in arrival order', async () => {
    const id = await capture(bot.apiKey, 'ordered', [
      ['late', '2026-11-03T10:00:02Z', 'third'],
      ['tie-1', '2026-11-03T10:00:01Z', 'first of the tie'],
      ['tie-2', '2026-11-03T10:00:01Z', 'second of the tie'],
    ])
    await capture(bot.apiKey, 'ordered', [['early', '2026-11-03T10:00:00Z', 'zeroth']])
    await projectAll(db.pool)
    const res = await get(`/api/v1/conversations/${id}`)
    expect(res.statusCode).toBe(200)
    const { conversation } = res.json()
    expect(conversation.messages.map((m: { id: string }) => m.id)).toEqual([
      'early',
      'tie-1',
      'tie-2',
      'late',
    ])
    expect(conversation.messages[0]).toEqual({
      id: 'early',
      role: 'user',
      content: 'zeroth',
      sentAt: '2026-11-03T10:00:00.000Z',
      sentiment: null,
      analyzer: null,
    })
    expect(conversation.messageCount).toBe(4)
  })

  it("answers 404 for an unknown, malformed or another organization's id", async () => {
    const foreign = ids.get('foreign')!
    for (const id of [randomUUID(), 'nope', foreign]) {
      const res = await get(`/api/v1/conversations/${id}`)
      expect(res.statusCode, id).toBe(404)
      expect(res.json().error.code).toBe('not_found')
    }
    expect((await get(`/api/v1/conversations/${foreign}`, otherCookie)).statusCode).toBe(200)
  })
})
