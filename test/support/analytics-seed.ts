import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { signUp } from './auth.ts'
import { createChatbot, postCapture } from './chatbots.ts'
import type { TestDatabase } from './database.ts'

/**
 * Test data for the analytics tests, made through the real pipeline: captures through the API, analysis
 * results appended as events, the projector then builds the rollups (the caller runs projectAll).
 */
export interface Bot {
  readonly chatbotId: string
  readonly orgId: string
  readonly apiKey: string
  readonly cookie: string
}

type Role = 'user' | 'assistant' | 'system' | 'tool'
type Label = 'positive' | 'neutral' | 'negative'

export async function newOrg(app: FastifyInstance): Promise<{ cookie: string; orgId: string }> {
  const account = await signUp(app)
  return { cookie: account.cookie, orgId: account.organization.id }
}

export async function newBot(app: FastifyInstance, org: { cookie: string; orgId: string }): Promise<Bot> {
  const { chatbot, apiKey } = await createChatbot(app, org.cookie)
  return { chatbotId: chatbot.id, orgId: org.orgId, apiKey, cookie: org.cookie }
}

/** Captures messages `[id, role, sentAt]`; returns the internal conversation id. */
export async function capture(
  app: FastifyInstance,
  bot: Bot,
  conversationId: string,
  messages: [string, Role, string][],
  endUserId?: string,
): Promise<string> {
  const res = await postCapture(app, bot.apiKey, {
    conversationId,
    messages: messages.map(([id, role, sentAt]) => ({ id, role, content: `text of ${id}`, sentAt })),
    ...(endUserId ? { user: { id: endUserId } } : {}),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().conversationId
}

/**
 * Appends an analysis result per message `[id, score, label, topics, language?]` (without a language,
 * the result says none, as one recorded before the analyzer detected it), and the conversation's summary
 * with `conversationTopics` (the topics of its end users' messages, as the analyzer sums them up; by
 * default those of every result given), as the analyzer would.
 */
export async function analyze(
  db: TestDatabase,
  bot: Bot,
  conversation: string,
  results: [string, number, Label, string[], string?][],
  conversationTopics: string[] = [...new Set(results.flatMap(([, , , topics]) => topics))],
): Promise<void> {
  await withTransaction(db.pool, (client) =>
    appendToStream(client, {
      streamType: 'analysis',
      streamId: conversation,
      orgId: bot.orgId,
      chatbotId: bot.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.messages-analyzed', {
          analyzer: { name: 'test', version: '1' },
          signalsDecided: true,
          results: results.map(([messageId, score, label, topics, language]) => ({
            messageId,
            sentiment: { score, label },
            topics: topics.map((t) => ({ id: t, label: t })),
            ...(language === undefined ? {} : { language }),
          })),
        }),
        newEvent('analysis.conversation-analyzed', {
          analyzer: { name: 'test', version: '1' },
          sentiment: { score: 0, label: 'neutral' },
          assistantSentiment: null,
          topics: conversationTopics.map((t) => ({ id: t, label: t })),
        }),
      ],
    }),
  )
}

export interface Seeded {
  /** Organization A: chatbots a1 and a2. */
  readonly a1: Bot
  readonly a2: Bot
  /** Organization B: one chatbot, same hours and end-user id as A's, never counted in A. */
  readonly b1: Bot
}

const TEN_TOPICS = Array.from({ length: 10 }, (_, i) => `t${String(i + 1).padStart(2, '0')}`)

/**
 * The data the analytics expectations are computed from by hand (scores are multiples of 0.25, exact in
 * binary, so sums are exact). All times UTC, 2026-11:
 *
 *  a1  c1 (u1)  18th 10:05 user, 10:06 assistant, 11:10 user, 13:20 assistant, 13:21 tool  (hours 10, 11, 13)
 *      c2 (u1)  18th 11:30 user, 11:31 system
 *      c3 (—)   19th 03:00 user                     (the 18th in New York)
 *      c6 (u3)  2026-09-01 08:00 user                (outside the default 30 days)
 *  a2  c4 (u2)  18th 10:40 user, 10:41 assistant
 *      c5 (u1)  19th 15:00 user
 *  b1  cb (u1)  18th 10:10 user, 10:11 assistant, 10:12 user
 *
 * Analyzed: c1 m1 0.5 positive [billing], m2 0 neutral [billing, refund], m3 -0.75 negative [refund];
 * c2 m1 0.25 positive [account]; c3 m1 0 neutral [t01..t10]; c4 m1 0.75 positive [shipping];
 * c5 m1 1 positive [billing]; cb m1 -1 negative [billing]. Each conversation's topics are those of its end
 * user's messages (c1: billing, refund).
 */
export async function seedAnalytics(app: FastifyInstance, db: TestDatabase): Promise<Seeded> {
  const orgA = await newOrg(app)
  const a1 = await newBot(app, orgA)
  const a2 = await newBot(app, orgA)
  const b1 = await newBot(app, await newOrg(app))

  const d = (day: number, time: string) => `2026-11-${day}T${time}:00Z`
  const c1 = await capture(
    app,
    a1,
    'c1',
    [
      ['m1', 'user', d(18, '10:05')],
      ['m2', 'assistant', d(18, '10:06')],
      ['m3', 'user', d(18, '11:10')],
    ],
    'u1',
  )
  await capture(
    app,
    a1,
    'c1',
    [
      ['m4', 'assistant', d(18, '13:20')],
      ['m5', 'tool', d(18, '13:21')],
    ],
    'u1',
  )
  const c2 = await capture(
    app,
    a1,
    'c2',
    [
      ['m1', 'user', d(18, '11:30')],
      ['m2', 'system', d(18, '11:31')],
    ],
    'u1',
  )
  const c3 = await capture(app, a1, 'c3', [['m1', 'user', d(19, '03:00')]])
  await capture(app, a1, 'c6', [['m1', 'user', '2026-09-01T08:00:00Z']], 'u3')
  const c4 = await capture(
    app,
    a2,
    'c4',
    [
      ['m1', 'user', d(18, '10:40')],
      ['m2', 'assistant', d(18, '10:41')],
    ],
    'u2',
  )
  const c5 = await capture(app, a2, 'c5', [['m1', 'user', d(19, '15:00')]], 'u1')
  const cb = await capture(
    app,
    b1,
    'cb',
    [
      ['m1', 'user', d(18, '10:10')],
      ['m2', 'assistant', d(18, '10:11')],
      ['m3', 'user', d(18, '10:12')],
    ],
    'u1',
  )

  await analyze(
    db,
    a1,
    c1,
    [
      ['m1', 0.5, 'positive', ['billing']],
      ['m2', 0, 'neutral', ['billing', 'refund']],
      ['m3', -0.75, 'negative', ['refund']],
    ],
    ['billing', 'refund'],
  )
  await analyze(db, a1, c2, [['m1', 0.25, 'positive', ['account']]])
  await analyze(db, a1, c3, [['m1', 0, 'neutral', TEN_TOPICS]])
  await analyze(db, a2, c4, [['m1', 0.75, 'positive', ['shipping']]])
  await analyze(db, a2, c5, [['m1', 1, 'positive', ['billing']]])
  await analyze(db, b1, cb, [['m1', -1, 'negative', ['billing']]])
  return { a1, a2, b1 }
}
