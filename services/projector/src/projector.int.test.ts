import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import { describe, expect, it } from 'vitest'
import { createChatbot, postCapture } from '../../../test/support/chatbots.ts'
import { useSignedInGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'

const gateway = useSignedInGateway()

interface Bot {
  chatbotId: string
  orgId: string
  apiKey: string
}

async function newBot(): Promise<Bot> {
  const { chatbot, apiKey } = await createChatbot(gateway.app, gateway.cookie)
  const { rows } = await gateway.db.pool.query('SELECT org_id FROM chatbots WHERE id = $1', [chatbot.id])
  return { chatbotId: chatbot.id, orgId: rows[0].org_id, apiKey }
}

async function capture(
  bot: Bot,
  conversationId: string,
  messages: { id: string; role: string; sentAt: string }[],
  extra = {},
) {
  const res = await postCapture(gateway.app, bot.apiKey, {
    conversationId,
    messages: messages.map((m) => ({ ...m, content: `text of ${m.id}` })),
    ...extra,
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().conversationId as string
}

async function analyze(
  bot: Bot,
  conversationId: string,
  results: [string, number, 'positive' | 'neutral' | 'negative', string[]][],
  version = '1',
) {
  await withTransaction(gateway.db.pool, (client) =>
    appendToStream(client, {
      streamType: 'analysis',
      streamId: conversationId,
      orgId: bot.orgId,
      chatbotId: bot.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.messages-analyzed', {
          analyzer: { name: 'test', version },
          signalsDecided: true,
          results: results.map(([messageId, score, label, topics]) => ({
            messageId,
            sentiment: { score, label },
            topics: topics.map((t) => ({ id: t, label: t })),
          })),
        }),
      ],
    }),
  )
}

async function hourly(chatbotId: string) {
  const { rows } = await gateway.db.pool.query(
    `SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour, messages, user_messages, assistant_messages,
            sentiment_sum::float8 AS sentiment_sum, sentiment_count, positive, neutral, negative
       FROM rm_hourly_stats WHERE chatbot_id = $1 ORDER BY hour`,
    [chatbotId],
  )
  return rows
}

async function topics(chatbotId: string) {
  const { rows } = await gateway.db.pool.query(
    'SELECT topic, sum(messages)::int AS n FROM rm_hourly_topics WHERE chatbot_id = $1 GROUP BY topic ORDER BY topic',
    [chatbotId],
  )
  return rows
}

describe('projector', () => {
  it('projects a captured conversation, its messages and the hourly rollups', async () => {
    const bot = await newBot()
    const id = await capture(
      bot,
      'c-1',
      [
        { id: 'a', role: 'user', sentAt: '2026-11-20T10:05:00Z' },
        { id: 'b', role: 'assistant', sentAt: '2026-11-20T10:06:00Z' },
        { id: 'c', role: 'user', sentAt: '2026-11-20T11:01:00Z' },
      ],
      { user: { id: 'end-user-1', plan: 'pro' }, custom: { tier: 'gold' } },
    )
    await capture(bot, 'c-1', [{ id: 'd', role: 'assistant', sentAt: '2026-11-20T11:02:00Z' }], {
      session: { device: 'ios' },
    })
    await projectAll(gateway.db.pool)

    const { rows } = await gateway.db.pool.query('SELECT * FROM rm_conversations WHERE id = $1', [id])
    expect(rows[0]).toMatchObject({
      org_id: bot.orgId,
      chatbot_id: bot.chatbotId,
      external_id: 'c-1',
      end_user: { id: 'end-user-1', plan: 'pro' },
      end_user_id: 'end-user-1',
      session: { device: 'ios' },
      custom: { tier: 'gold' },
      message_count: 4,
      first_message_at: new Date('2026-11-20T10:05:00Z'),
      last_message_at: new Date('2026-11-20T11:02:00Z'),
      stream_version: 4,
    })
    const { rows: messages } = await gateway.db.pool.query(
      'SELECT message_id, role, content FROM rm_messages WHERE conversation_id = $1 ORDER BY sent_at, arrival',
      [id],
    )
    expect(messages.map((m) => m.message_id)).toEqual(['a', 'b', 'c', 'd'])
    expect(await hourly(bot.chatbotId)).toMatchObject([
      { hour: '2026-11-20T10', messages: 2, user_messages: 1, assistant_messages: 1 },
      { hour: '2026-11-20T11', messages: 2, user_messages: 1, assistant_messages: 1 },
    ])
    const { rows: activity } = await gateway.db.pool.query(
      'SELECT count(*)::int AS n, count(DISTINCT end_user_id)::int AS users FROM rm_hourly_activity WHERE chatbot_id = $1',
      [bot.chatbotId],
    )
    expect(activity[0]).toEqual({ n: 2, users: 1 })
  })

  it('adds analysis to messages and rollups, and re-analysis replaces it exactly', async () => {
    const bot = await newBot()
    const id = await capture(bot, 'c-2', [
      { id: 'a', role: 'user', sentAt: '2026-11-20T09:00:00Z' },
      { id: 'b', role: 'user', sentAt: '2026-11-20T09:30:00Z' },
    ])
    await analyze(bot, id, [
      ['a', 0.8, 'positive', ['billing']],
      ['b', -0.5, 'negative', ['billing', 'refund']],
    ])
    await projectAll(gateway.db.pool)
    expect(await hourly(bot.chatbotId)).toMatchObject([
      { sentiment_sum: expect.closeTo(0.3, 6), sentiment_count: 2, positive: 1, negative: 1, neutral: 0 },
    ])
    expect(await topics(bot.chatbotId)).toEqual([
      { topic: 'billing', n: 2 },
      { topic: 'refund', n: 1 },
    ])

    await analyze(bot, id, [['b', 0, 'neutral', ['billing']]], '2')
    await projectAll(gateway.db.pool)
    expect(await hourly(bot.chatbotId)).toMatchObject([
      { sentiment_sum: expect.closeTo(0.8, 6), sentiment_count: 2, positive: 1, negative: 0, neutral: 1 },
    ])
    expect(await topics(bot.chatbotId)).toEqual([{ topic: 'billing', n: 2 }])
    const { rows } = await gateway.db.pool.query(
      'SELECT sentiment_label, analyzer FROM rm_messages WHERE conversation_id = $1 AND message_id = $2',
      [id, 'b'],
    )
    expect(rows[0]).toEqual({ sentiment_label: 'neutral', analyzer: 'test@2' })
  })

  it('counts an analysis that arrives before its message once the message arrives', async () => {
    const bot = await newBot()
    const id = await capture(bot, 'c-3', [{ id: 'a', role: 'user', sentAt: '2026-11-20T08:00:00Z' }])
    await analyze(bot, id, [['late', 0.5, 'positive', ['shipping']]])
    await projectAll(gateway.db.pool)
    expect(await hourly(bot.chatbotId)).toMatchObject([{ messages: 1, sentiment_count: 0 }])

    await capture(bot, 'c-3', [{ id: 'late', role: 'user', sentAt: '2026-11-20T08:10:00Z' }])
    await projectAll(gateway.db.pool)
    expect(await hourly(bot.chatbotId)).toMatchObject([{ messages: 2, sentiment_count: 1, positive: 1 }])
    expect(await topics(bot.chatbotId)).toEqual([{ topic: 'shipping', n: 1 }])
  })

  it('keeps rollups exact when every event is delivered again', async () => {
    const bot = await newBot()
    const id = await capture(bot, 'c-4', [
      { id: 'a', role: 'user', sentAt: '2026-11-19T12:00:00Z' },
      { id: 'b', role: 'assistant', sentAt: '2026-11-19T12:01:00Z' },
    ])
    await analyze(bot, id, [['a', 1, 'positive', ['x']]])
    await projectAll(gateway.db.pool)
    const before = [await hourly(bot.chatbotId), await topics(bot.chatbotId)]
    // Redelivery from the very start: the checkpoint is lost, every event comes again.
    await gateway.db.pool.query(
      "UPDATE consumer_checkpoints SET last_offset = -1 WHERE group_id = 'projector'",
    )
    await projectAll(gateway.db.pool)
    expect([await hourly(bot.chatbotId), await topics(bot.chatbotId)]).toEqual(before)
    const { rows } = await gateway.db.pool.query('SELECT message_count FROM rm_conversations WHERE id = $1', [
      id,
    ])
    expect(rows[0].message_count).toBe(2)
  })

  it('removes every read-model row of a deleted chatbot, and late events never bring them back', async () => {
    const bot = await newBot()
    const id = await capture(bot, 'c-5', [{ id: 'a', role: 'user', sentAt: '2026-11-20T07:00:00Z' }], {
      user: { id: 'u' },
    })
    await analyze(bot, id, [['a', 0.2, 'neutral', ['t']]])
    await projectAll(gateway.db.pool)
    const del = await gateway.app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${bot.chatbotId}`,
      headers: { cookie: gateway.cookie },
    })
    expect(del.statusCode).toBe(200)
    // An analysis result still in flight when the chatbot was deleted.
    await analyze(bot, id, [['a', 0.9, 'positive', ['t']]], '2')
    await projectAll(gateway.db.pool)
    for (const table of [
      'rm_conversations',
      'rm_messages',
      'rm_hourly_stats',
      'rm_hourly_topics',
      'rm_hourly_activity',
    ]) {
      const { rows } = await gateway.db.pool.query(`SELECT 1 FROM ${table} WHERE chatbot_id = $1`, [
        bot.chatbotId,
      ])
      expect(rows, table).toEqual([])
    }
    const { rows } = await gateway.db.pool.query('SELECT 1 FROM rm_deleted_chatbots WHERE chatbot_id = $1', [
      bot.chatbotId,
    ])
    expect(rows).toHaveLength(1)
  })
})
