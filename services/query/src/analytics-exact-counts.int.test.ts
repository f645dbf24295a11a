/**
 * The overview's counts stay exact through every way the projector changes activity: messages arriving
 * out of order (earlier sentAt later), conversations and end users continuing across hours and days,
 * returning end users on several chatbots, an end user replaced within an hour, erasure, retention, a
 * deleted chatbot, and two projector instances applying the same end users' hours at once. After each
 * step, the overview of every range between chosen hours (organization-wide and per chatbot) equals a
 * brute-force count over the projected messages, and every structure the counts come from equals its
 * recomputation from the activity rows (test/support/derived-rollups.ts).
 */
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import { createProjector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from '../../../test/support/auth.ts'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { derivedRollupDifferences } from '../../../test/support/derived-rollups.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { uniqueGroupId } from '../../../test/support/kafka.ts'
import { testKeyring } from '../../../test/support/keyring.ts'
import { projectAll, projectorCaughtUp } from '../../../test/support/projector.ts'
import { sweepRetention } from '../../../test/support/retention.ts'
import { waitFor } from '../../../test/support/wait.ts'

const NOW = new Date('2026-11-20T12:30:00Z')

interface Bot {
  readonly id: string
  readonly apiKey: string
}

interface Org {
  readonly id: string
  readonly cookie: string
}

let db: TestDatabase
let app: FastifyInstance

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

async function newOrg(): Promise<Org> {
  const account = await signUp(app)
  return { id: account.organization.id, cookie: account.cookie }
}

async function newBot(org: Org, settings: Record<string, unknown> = {}): Promise<Bot> {
  const { chatbot, apiKey } = await createChatbot(app, org.cookie, { name: 'bot', settings })
  return { id: chatbot.id, apiKey }
}

let sequence = 0

/** Captures one user message per sentAt into the conversation; returns its internal id. */
async function capture(bot: Bot, conversationId: string, endUser: string | null, sentAts: string[]) {
  const res = await postCapture(app, bot.apiKey, {
    conversationId,
    messages: sentAts.map((sentAt) => ({
      id: `m${++sequence}`,
      role: sequence % 2 ? 'user' : 'assistant',
      content: 'hello',
      sentAt,
    })),
    ...(endUser === null ? {} : { user: { id: endUser } }),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().conversationId as string
}

/** Analyses every message of the conversation with one topic, as the analyzer would. */
async function analyze(org: Org, bot: Bot, conversation: string, topic: string) {
  const { rows } = await db.pool.query<{ message_id: string }>(
    'SELECT message_id FROM rm_messages WHERE conversation_id = $1',
    [conversation],
  )
  await withTransaction(db.pool, (client) =>
    appendToStream(client, {
      streamType: 'analysis',
      streamId: conversation,
      orgId: org.id,
      chatbotId: bot.id,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.messages-analyzed', {
          analyzer: { name: 'test', version: '1' },
          signalsDecided: true,
          results: rows.map((r) => ({
            messageId: r.message_id,
            sentiment: { score: 0.5, label: 'positive' as const },
            topics: [{ id: topic, label: topic }],
          })),
        }),
        newEvent('analysis.conversation-analyzed', {
          analyzer: { name: 'test', version: '1' },
          sentiment: { score: 0.5, label: 'positive' as const },
          assistantSentiment: null,
          topics: [{ id: topic, label: topic }],
        }),
      ],
    }),
  )
}

/** The counts by brute force over the projected messages (end users as their conversations name them). */
async function bruteForce(orgId: string, chatbotId: string | undefined, from: string, to: string) {
  const params = [orgId, from, to, ...(chatbotId ? [chatbotId] : [])]
  const where = `m.org_id = $1 AND m.sent_at >= $2 AND m.sent_at < $3 ${chatbotId ? 'AND m.chatbot_id = $4' : ''}`
  const { rows } = await db.pool.query(
    `SELECT count(DISTINCT m.conversation_id)::int AS "totalConversations", count(*)::int AS "totalMessages",
            count(DISTINCT c.end_user_id)::int AS "uniqueUsers"
       FROM rm_messages m JOIN rm_conversations c ON c.id = m.conversation_id WHERE ${where}`,
    params,
  )
  const { rows: topics } = await db.pool.query(
    // Conversations with a message in range, per topic of theirs (key phrases here: their own ids), as the
    // Topics page counts them; ties by the end users' messages on the topic in range, then by topic.
    `WITH active AS (SELECT DISTINCT m.conversation_id FROM rm_messages m WHERE ${where}),
          messages AS (SELECT topic, count(*) AS n FROM rm_messages m, unnest(m.topics) AS topic
                        WHERE ${where} AND m.role = 'user' GROUP BY topic)
     SELECT t.topic, t.topic AS id, count(*)::int AS count
       FROM active a JOIN rm_conversations c ON c.id = a.conversation_id, unnest(c.topics) AS t(topic)
       LEFT JOIN messages ON messages.topic = t.topic
      WHERE t.topic <> 'other'
      GROUP BY t.topic, messages.n ORDER BY count DESC, coalesce(messages.n, 0) DESC, t.topic COLLATE "C" LIMIT 10`,
    params,
  )
  return { ...rows[0], topTopics: topics }
}

async function overview(org: Org, query: string) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/analytics/overview${query}`,
    headers: { cookie: org.cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  const { totalConversations, totalMessages, uniqueUsers, topTopics, range } = res.json()
  return { range, counts: { totalConversations, totalMessages, uniqueUsers, topTopics } }
}

const hour = (iso: string) => new Date(iso).toISOString()

/**
 * Every range between two of `marks` (whole hours), and the default one (the last 30 days), for the
 * organization and each of its chatbots: the overview equals the brute-force count.
 */
async function expectExact(org: Org, bots: readonly Bot[], marks: readonly string[]) {
  const scopes = [undefined, ...bots.map((b) => b.id)]
  const sorted = [...marks].map(hour).sort()
  for (const chatbotId of scopes) {
    const scope = chatbotId ? `chatbotId=${chatbotId}` : ''
    const latest = await overview(org, `?${scope}`)
    expect(latest.counts, `last 30 days ${scope}`).toEqual(
      await bruteForce(org.id, chatbotId, latest.range.from, latest.range.to),
    )
    for (const [i, from] of sorted.entries()) {
      for (const to of sorted.slice(i + 1)) {
        const got = await overview(org, `?from=${from}&to=${to}&${scope}`)
        expect(got.counts, `${from} – ${to} ${scope}`).toEqual(await bruteForce(org.id, chatbotId, from, to))
      }
    }
  }
}

async function expectDerivedExact() {
  expect(await derivedRollupDifferences(db.pool)).toEqual({})
}

describe('exact overview counts through every projector path', () => {
  // Hours around the data, so that ranges start and end before, inside and after each activity.
  const marks = [
    '2026-10-31T00:00Z',
    '2026-11-01T11:00Z',
    '2026-11-08T00:00Z',
    '2026-11-09T22:00Z',
    '2026-11-10T09:00Z',
    '2026-11-10T10:00Z',
    '2026-11-11T03:00Z',
    '2026-11-11T15:00Z',
    '2026-11-12T23:00Z',
    '2026-11-13T01:00Z',
    '2026-11-14T13:00Z',
    '2026-11-14T14:00Z',
  ]
  let a: Org
  let b: Org
  let a1: Bot
  let a2: Bot
  let a3: Bot
  let b1: Bot
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    a = await newOrg()
    b = await newOrg()
    a1 = await newBot(a)
    a2 = await newBot(a)
    a3 = await newBot(a, { retentionDays: 7 })
    b1 = await newBot(b)
  })

  it('counts conversations and returning end users across hours, days and chatbots', async () => {
    // c1 (u1): two messages in one hour, the next hour (projected), then across midnight two days later.
    ids.c1 = await capture(a1, 'c1', 'u1', [
      '2026-11-10T09:10:00Z',
      '2026-11-10T09:50:00Z',
      '2026-11-10T10:05:00Z',
    ])
    await projectAll(db.pool)
    await capture(a1, 'c1', 'u1', ['2026-11-12T23:50:00Z', '2026-11-13T00:10:00Z'])
    // u1 comes back on a1 in another conversation, and talks to a2 too.
    ids.c2 = await capture(a1, 'c2', 'u1', ['2026-11-11T14:00:00Z'])
    ids.c3 = await capture(a2, 'c3', 'u1', ['2026-11-12T08:00:00Z'])
    ids.c4 = await capture(a2, 'c4', 'u2', ['2026-11-10T09:30:00Z'])
    ids.c5 = await capture(a1, 'c5', null, ['2026-11-14T12:00:00Z'])
    // u3: an old conversation on a3 (retention 7 days), a recent one, and one on a2.
    ids.c7 = await capture(a3, 'c7', 'u3', ['2026-11-01T10:00:00Z'])
    ids.c8 = await capture(a3, 'c8', 'u3', ['2026-11-14T10:00:00Z'])
    // Organization B: the same end-user id, the same hours, never counted in A.
    ids.cb = await capture(b1, 'cb', 'u1', ['2026-11-10T09:15:00Z', '2026-11-12T08:30:00Z'])
    await projectAll(db.pool)
    await analyze(a, a1, ids.c1, 'billing')
    await analyze(a, a2, ids.c4, 'shipping')
    await analyze(b, b1, ids.cb, 'billing')
    await projectAll(db.pool)
    await expectDerivedExact()
    await expectExact(a, [a1, a2, a3], marks)
    await expectExact(b, [b1], marks)
  })

  it('stays exact when messages arrive out of order', async () => {
    // c1 gets an hour before all of its others, and one between two of them (u1 too).
    await capture(a1, 'c1', 'u1', ['2026-11-09T22:30:00Z', '2026-11-11T03:15:00Z'])
    // c4: another message in an hour it already has.
    await capture(a2, 'c4', 'u2', ['2026-11-10T09:45:00Z'])
    // c5 and c8 go on after their last hour (c8's end user, u3, too).
    await capture(a1, 'c5', null, ['2026-11-14T13:30:00Z'])
    await capture(a3, 'c8', 'u3', ['2026-11-14T16:00:00Z', '2026-11-14T12:00:00Z'])
    // u3 on a2, before all of u3's others but one.
    ids.c6 = await capture(a2, 'c6', 'u3', ['2026-11-08T05:00:00Z', '2026-11-01T10:20:00Z'])
    await projectAll(db.pool)
    await expectDerivedExact()
    await expectExact(a, [a1, a2, a3], marks)
  })

  it('stays exact when a later capture names another end user within the same hour', async () => {
    // c4's only hour now belongs to u5: u2 is no longer active anywhere.
    await capture(a2, 'c4', 'u5', ['2026-11-10T09:55:00Z'])
    await projectAll(db.pool)
    await expectDerivedExact()
    const { rows } = await db.pool.query(
      'SELECT end_user_id FROM rm_org_user_hours WHERE org_id = $1 AND end_user_id = $2',
      [a.id, 'u2'],
    )
    expect(rows).toEqual([])
    await expectExact(a, [a1, a2, a3], marks)
  })

  it("stays exact when an end user's conversations on one chatbot are erased", async () => {
    const res = await app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${a1.id}/users/u1`,
      headers: { cookie: a.cookie },
    })
    expect(res.json()).toEqual({ ok: true, conversationsErased: 2 })
    await projectAll(db.pool)
    await expectDerivedExact()
    // u1 is still an end user of the organization, through a2.
    expect((await overview(a, '?from=2026-11-01T00:00:00Z&to=2026-11-15T00:00:00Z')).counts.uniqueUsers).toBe(
      3,
    )
    await expectExact(a, [a1, a2, a3], marks)
    await expectExact(b, [b1], marks)
  })

  it('stays exact when retention erases the older conversations of a returning end user', async () => {
    expect(await sweepRetention(db.pool, () => NOW)).toBe(1)
    await projectAll(db.pool)
    await expectDerivedExact()
    await expectExact(a, [a1, a2, a3], marks)
  })

  it('stays exact when a chatbot is deleted', async () => {
    const res = await app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${a2.id}`,
      headers: { cookie: a.cookie },
    })
    expect(res.statusCode).toBe(200)
    await projectAll(db.pool)
    await expectDerivedExact()
    await expectExact(a, [a1, a3], marks)
    await expectExact(b, [b1], marks)
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*)::int FROM rm_chatbot_user_hours WHERE chatbot_id = $1) AS hours,
              (SELECT count(*)::int FROM rm_daily_topics WHERE chatbot_id = $1) AS topics`,
      [a2.id],
    )
    expect(rows[0]).toEqual({ hours: 0, topics: 0 })
  })
})

describe('two projector instances adding hours of the same end users at once', () => {
  it('link every hour once', async () => {
    const own = await createTestDatabase()
    const { app: gateway } = await buildTestGateway(own, {}, () => NOW)
    const groupId = uniqueGroupId('projector')
    const projectors = [0, 1].map(() =>
      createProjector({
        pool: own.pool,
        keyring: testKeyring,
        eventLog: { kind: 'journal', pollIntervalMs: 5, partitions: 4 },
        logger: false,
        groupId,
        maxBatchSize: 3,
      }),
    )
    try {
      for (const p of projectors) await p.consumer.start()
      await waitFor(() => projectors.every((p) => p.consumer.stats.partitions.length > 0), {
        what: 'both projectors to own partitions',
      })
      const account = await signUp(gateway)
      const bots = [
        await createChatbot(gateway, account.cookie, { name: 'one' }),
        await createChatbot(gateway, account.cookie, { name: 'two' }),
      ]
      // 120 conversations of 2 end users on two chatbots, hours in every order, in small batches: the two
      // projectors keep adding hours to the same users' chains.
      const captures = Array.from({ length: 120 }, (_, i) =>
        postCapture(gateway, bots[i % 2]?.apiKey, {
          conversationId: `conversation-${i}`,
          user: { id: `u${i % 3 === 0 ? 0 : 1}` },
          messages: [0, 1].map((k) => ({
            id: `m${k}`,
            role: 'user',
            content: 'hello',
            sentAt: new Date(Date.UTC(2026, 10, 1 + ((i * 7) % 13), (i * 5 + k * 3) % 24, 10)).toISOString(),
          })),
        }),
      )
      expect((await Promise.all(captures)).every((r) => r.statusCode === 200)).toBe(true)
      await waitFor(() => projectorCaughtUp(own.pool, groupId), { what: 'the projectors to catch up' })
      expect(projectors.every((p) => p.stats.applied > 0)).toBe(true)
      expect(await derivedRollupDifferences(own.pool)).toEqual({})
    } finally {
      for (const p of projectors) await p.consumer.stop()
      await gateway.close()
      await own.drop()
    }
  })
})
