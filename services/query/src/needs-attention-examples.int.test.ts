import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'

// Issue 32: Needs attention's examples were bare conversation ids, shown as "conversation 1, 2, 3": a
// support lead could not tell which one to open. Each now comes with when it started and the end user's
// first words, through capture, the projector and the route as a lead's dashboard reads them.

let db: TestDatabase
let app: FastifyInstance
let cookie: string
const ids = new Map<string, string>()

interface Account {
  orgId: string
  chatbotId: string
  apiKey: string
}

/** A conversation of a user message and the bot's failed reply, in topic "cards", with a bot failure. */
async function failedConversation(account: Account, conversationId: string, userText: string, at: string) {
  const reply = new Date(new Date(at).getTime() + 60_000).toISOString()
  const res = await postCapture(app, account.apiKey, {
    conversationId,
    messages: [
      { id: 'u', role: 'user', content: userText, sentAt: at },
      { id: 'b', role: 'assistant', content: "I'm not sure I understand.", sentAt: reply },
    ],
  })
  expect(res.statusCode, res.body).toBe(200)
  const id = res.json().conversationId as string
  ids.set(conversationId, id)
  await withTransaction(db.pool, (client) =>
    appendToStream(client, {
      streamType: 'analysis',
      streamId: id,
      orgId: account.orgId,
      chatbotId: account.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.conversation-analyzed', {
          analyzer: { name: 'test', version: '1' },
          sentiment: { score: -0.5, label: 'negative' },
          assistantSentiment: null,
          topics: [{ id: 'cards', label: 'cards' }],
        }),
        newEvent('analysis.signals-detected', {
          analyzer: { name: 'test', version: '1' },
          signals: [{ name: 'bot_failure', confidence: 0.8, evidence: ['b'] }],
          settled: false,
        }),
      ],
    }),
  )
}

/**
 * A conversation of two requests, each in its own topic (the analysis's per-message results), and the
 * bot failing both: a bot failure on the conversation, which counts in each of its topics.
 */
async function twoRequests(account: Account, conversationId: string, at: string) {
  const later = (minutes: number) => new Date(new Date(at).getTime() + minutes * 60_000).toISOString()
  const res = await postCapture(app, account.apiKey, {
    conversationId,
    messages: [
      { id: 'u1', role: 'user', content: 'can you port my number\nfrom another provider?', sentAt: at },
      { id: 'b1', role: 'assistant', content: "I'm not sure I understand.", sentAt: later(1) },
      { id: 'u2', role: 'user', content: 'also, add sky sport to my plan', sentAt: later(2) },
      { id: 'b2', role: 'assistant', content: "I'm not sure I understand.", sentAt: later(3) },
    ],
  })
  expect(res.statusCode, res.body).toBe(200)
  const id = res.json().conversationId as string
  ids.set(conversationId, id)
  const analyzer = { name: 'test', version: '1' }
  const neutral = { score: 0, label: 'neutral' as const }
  await withTransaction(db.pool, (client) =>
    appendToStream(client, {
      streamType: 'analysis',
      streamId: id,
      orgId: account.orgId,
      chatbotId: account.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.messages-analyzed', {
          analyzer,
          results: [
            { messageId: 'u1', sentiment: neutral, topics: [{ id: 'porting', label: 'port, number' }] },
            { messageId: 'u2', sentiment: neutral, topics: [{ id: 'sky', label: 'add sky, sky sport' }] },
          ],
          signalsDecided: true,
        }),
        newEvent('analysis.conversation-analyzed', {
          analyzer,
          sentiment: { score: -0.5, label: 'negative' },
          assistantSentiment: null,
          topics: [
            { id: 'porting', label: 'port, number' },
            { id: 'sky', label: 'add sky, sky sport' },
          ],
        }),
        newEvent('analysis.signals-detected', {
          analyzer,
          signals: [{ name: 'bot_failure', confidence: 0.8, evidence: ['b2'] }],
          settled: false,
        }),
      ],
    }),
  )
}

async function account(): Promise<Account & { cookie: string }> {
  const me = await signUp(app)
  const created = await createChatbot(app, me.cookie)
  return {
    cookie: me.cookie,
    orgId: me.organization.id,
    chatbotId: created.chatbot.id,
    apiKey: created.apiKey,
  }
}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db))
  const ours = await account()
  const theirs = await account()
  cookie = ours.cookie
  await failedConversation(ours, 'arrived', '  My card\n\nnever   arrived', '2026-11-03T14:03:00Z')
  await failedConversation(ours, 'long', `Card declined ${'🙂'.repeat(200)}`, '2026-11-04T09:00:00Z')
  // Another organization's conversation in a topic of the same id, the most recent of all.
  await failedConversation(
    theirs,
    'foreign',
    'Where is my card? (another organization)',
    '2026-11-05T08:00:00Z',
  )
  await twoRequests(ours, 'two-requests', '2026-10-07T10:00:00Z')
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

it("gives each example of Needs attention its start and the end user's first words, of the organization only", async () => {
  const res = await app.inject({
    method: 'GET',
    url: '/api/v1/analytics/signals?from=2026-11-01T00:00:00Z&to=2026-11-10T00:00:00Z',
    headers: { cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  const [cards, ...others] = res.json().needsAttention
  expect(others).toEqual([])
  expect(cards.id).toBe('cards')
  // `examples` as it was, for existing clients; the new field describes the same conversations in order.
  expect(cards.examples).toEqual([ids.get('long'), ids.get('arrived')])
  expect(cards.exampleConversations).toEqual([
    {
      id: ids.get('long'),
      conversationId: 'long',
      firstMessageAt: '2026-11-04T09:00:00.000Z',
      // Cut to 160 characters with the ellipsis, never inside a surrogate pair.
      excerpt: `Card declined ${'🙂'.repeat(145)}…`,
    },
    {
      id: ids.get('arrived'),
      conversationId: 'arrived',
      firstMessageAt: '2026-11-03T14:03:00.000Z',
      // One line, as the conversation list previews it.
      excerpt: 'My card never arrived',
    },
  ])
  expect(JSON.stringify(res.json())).not.toContain(ids.get('foreign'))
  expect(res.body).not.toContain('another organization')
})

it("shows, for each topic of a conversation of two requests, the end user's message in that topic", async () => {
  // trial1 (issues 31/32): every example read the conversation's first end-user words, so a conversation's
  // second topic ("add sky, sky sport") was illustrated by its first request ("can you port my number…").
  const res = await app.inject({
    method: 'GET',
    url: '/api/v1/analytics/signals?from=2026-10-01T00:00:00Z&to=2026-10-10T00:00:00Z',
    headers: { cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  const excerpts = Object.fromEntries(
    res
      .json()
      .needsAttention.map((t: { id: string; exampleConversations: { excerpt: string | null }[] }) => [
        t.id,
        t.exampleConversations.map((e) => e.excerpt),
      ]),
  )
  expect(excerpts).toEqual({
    sky: ['also, add sky sport to my plan'],
    // One line, as a preview is.
    porting: ['can you port my number from another provider?'],
  })
})
