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
