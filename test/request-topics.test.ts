import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { hasTestModel, requireTestModel } from './support/model.ts'
import { SUPPORT_REQUESTS } from './support/topic-requests.ts'

// Only requests make topics (issue 31): with the real language model, end to end, a conversation's topics
// come from its end user's requests; greetings, thanks and acknowledgements never form or join a topic.
requireTestModel()

const REQUESTS = SUPPORT_REQUESTS
/** Hand-written social turns: many alike, so that they would cluster into topics if they were placed. */
const SOCIAL = [
  'hi',
  'Hello there!',
  'good morning, how are you today?',
  'thanks, that solved it!',
  'great, thank you so much!',
  'thanks a lot for your help',
  'ok cool',
  'okay got it',
  'perfect, thanks',
  'bye, have a nice day',
]
const BOT = 'Happy to help! Is there anything else I can do for you?'

interface Conversation {
  conversationId: string
  topics: string[]
  topicIds: string[]
}

describe.skipIf(!hasTestModel)('only requests make topics', () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let app: FastifyInstance
  let cookie: string
  let apiKey: string
  let chatbotId: string
  const topicOf = new Map<string, string>()

  beforeAll(async () => {
    pipeline = await startAnalysisPipeline()
    ;({ db, app } = pipeline)
    ;({ cookie } = await signUp(app))
    ;({
      apiKey,
      chatbot: { id: chatbotId },
    } = await createChatbot(app, cookie, { name: 'Support' }))
    // Given: the chatbot's topics, found from requests asked once each.
    for (const [request, texts] of Object.entries(REQUESTS)) {
      for (const [i, text] of texts.entries()) await capture(`${request}-${i}`, [text])
    }
    await settled()
    // Each request's topic: the one most of its paraphrases are in (the topic model's business, tested
    // in topic-discovery.test.ts; here only what requests and social turns do with the topics).
    const all = await conversations()
    for (const request of Object.keys(REQUESTS) as (keyof typeof REQUESTS)[]) {
      const counts = new Map<string, number>()
      for (const i of REQUESTS[request].keys()) {
        for (const id of all.get(`${request}-${i}`)!.topicIds) counts.set(id, (counts.get(id) ?? 0) + 1)
      }
      const [id] = [...counts].sort((a, b) => b[1] - a[1])[0]!
      expect(id, request).toMatch(/^[0-9a-f-]{36}$/)
      topicOf.set(request, id)
    }
    expect(new Set(topicOf.values()).size).toBe(Object.keys(REQUESTS).length)
  })
  afterAll(() => pipeline?.close())

  /** One conversation: each of the end user's messages answered by the bot. */
  async function capture(conversationId: string, userMessages: readonly string[]) {
    const res = await postCapture(app, apiKey, {
      conversationId,
      messages: userMessages.flatMap((content, i) => [
        { id: `u${i}`, role: 'user', content },
        { id: `a${i}`, role: 'assistant', content: BOT },
      ]),
    })
    expect(res.statusCode, res.body).toBe(200)
  }

  /** Every capture analysed, and the projector past everything in the journal. */
  const settled = () => pipeline.settled()

  async function conversations(): Promise<Map<string, Conversation>> {
    const found = new Map<string, Conversation>()
    let cursor: string | null = null
    do {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations?chatbotId=${chatbotId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        headers: { cookie },
      })
      expect(res.statusCode, res.body).toBe(200)
      const page = res.json() as { conversations: Conversation[]; nextCursor: string | null }
      for (const c of page.conversations) found.set(c.conversationId, c)
      cursor = page.nextCursor
    } while (cursor)
    return found
  }

  async function topicIds(): Promise<string[]> {
    const { rows } = await db.pool.query<{ id: string }>(
      'SELECT id FROM topic_clusters WHERE chatbot_id = $1 ORDER BY id',
      [chatbotId],
    )
    return rows.map((r) => r.id)
  }

  it('greetings, thanks and acknowledgements make no topic, join none and count in none, not even "other"', async () => {
    const before = { topics: await topicIds(), report: await topicsReport() }
    // Each social turn three times over, in conversations of their own and of several social turns.
    for (let round = 0; round < 3; round++) {
      for (const [i, text] of SOCIAL.entries()) await capture(`social-${round}-${i}`, [text])
      await capture(`small-talk-${round}`, ['hi', 'ok cool', 'thanks, bye'])
    }
    await settled()
    const all = await conversations()
    const social = [...all.values()].filter((c) => /^(social|small-talk)-/.test(c.conversationId))
    expect(social).toHaveLength(SOCIAL.length * 3 + 3)
    for (const c of social) expect(c.topicIds, c.conversationId).toEqual([])
    expect(await topicIds()).toEqual(before.topics)
    const { rows: pooled } = await db.pool.query(
      "SELECT conversation_id FROM topic_pool WHERE chatbot_id = $1 AND conversation_id IN (SELECT id FROM rm_conversations WHERE external_id ~ '^(social|small-talk)-')",
      [chatbotId],
    )
    expect(pooled).toEqual([])
    // The Topics page counts them nowhere: not in a topic, and not in the long tail either.
    const report = await topicsReport()
    expect(report.conversationsWithTopics).toBe(before.report.conversationsWithTopics)
    expect(report.topics).toEqual(before.report.topics)
  })

  it("takes a conversation's topic from the request in its second message, after a greeting", async () => {
    await capture('hi-then-request', ['hi', 'what do I do if I lost my password'])
    await settled()
    expect((await conversations()).get('hi-then-request')!.topicIds).toEqual([topicOf.get('password')])
    const { rows } = await db.pool.query<{ message_id: string; topics: string[] }>(
      `SELECT m.message_id, m.topics FROM rm_messages m JOIN rm_conversations c ON c.id = m.conversation_id
        WHERE c.external_id = 'hi-then-request' AND m.role = 'user' ORDER BY m.message_id`,
    )
    expect(rows.map((r) => [r.message_id, r.topics])).toEqual([
      ['u0', []],
      ['u1', [topicOf.get('password')]],
    ])
  })

  it('counts a greeting and a request in one message as the request', async () => {
    await capture('greeting-and-request', ["Hello! my parcel still hasn't arrived"])
    await capture('request-and-thanks', ['I cannot remember my password, thanks'])
    await settled()
    const all = await conversations()
    expect(all.get('greeting-and-request')!.topicIds).toEqual([topicOf.get('delivery')])
    expect(all.get('request-and-thanks')!.topicIds).toEqual([topicOf.get('password')])
  })

  it('gives requests without a content word ("what time is it?") a topic with their paraphrases, and "ok" or "thanks!" none', async () => {
    // Their words are all ones labels pass over (time words, "tell"): the model, not the words, says they
    // ask for something, so a chatbot about time or scheduling keeps its core request.
    const time = [
      'what time is it?',
      'what time is it now?',
      "what's the time?",
      'tell me the time please',
      'what time is it right now',
    ]
    for (const [i, text] of time.entries()) await capture(`time-${i}`, [text])
    await capture('time-ok', ['ok'])
    await capture('time-thanks', ['thanks!'])
    await settled()
    const all = await conversations()
    const counts = new Map<string, number>()
    for (const i of time.keys())
      for (const id of all.get(`time-${i}`)!.topicIds) counts.set(id, (counts.get(id) ?? 0) + 1)
    const [id, members] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? []
    expect(members, JSON.stringify([...counts])).toBeGreaterThanOrEqual(4)
    expect([topicOf.get('password'), topicOf.get('delivery')]).not.toContain(id)
    expect(all.get('time-ok')!.topicIds).toEqual([])
    expect(all.get('time-thanks')!.topicIds).toEqual([])
    // Named in the members' words, and by no other topic's label.
    const { rows } = await db.pool.query<{ id: string; label: string }>(
      'SELECT id, label FROM topic_clusters WHERE chatbot_id = $1 AND merged_into IS NULL AND NOT retired',
      [chatbotId],
    )
    expect(rows.find((r) => r.id === id)!.label).toMatch(/time/)
    expect(new Set(rows.map((r) => r.label.toLowerCase())).size).toBe(rows.length)
  })

  it('gives a conversation two topics when its end user asks two things', async () => {
    await capture('two-requests', [
      'hi there',
      'I need to reset my password',
      'thanks! also, where is my order? it has not arrived yet',
      'great, thank you',
    ])
    await settled()
    const topics = (await conversations()).get('two-requests')!.topicIds
    expect([...topics].sort()).toEqual([topicOf.get('password'), topicOf.get('delivery')].sort())
  })

  it('ends multi-turn conversations with thanks and "it works now" without a topic: no thanks topic forms', async () => {
    // Closings of the kinds that once clustered into a topic "work, thank, thanks" (thanks with a reason,
    // "all sorted", "that did the trick"), each closing a conversation about a request, many alike.
    const closings = [
      'brilliant, that did the trick, thanks!',
      'all sorted now, thank you',
      'it works again, cheers',
      'ah ok, good to know. thanks',
      'done that, thanks',
      "yes, that's all fine now, thank you",
    ]
    const before = await topicIds()
    const asked = ['password', 'delivery'] as const
    for (let round = 0; round < 3; round++) {
      for (const [i, closing] of closings.entries()) {
        const request = asked[(round + i) % 2]!
        await capture(`closing-${round}-${i}`, [REQUESTS[request][(round + i) % 5]!, closing])
      }
    }
    // A thanks with a request in it still asks.
    await capture('thanks-then-asks', ['where is my order?', 'thanks! and how do I reset my password?'])
    await settled()
    const all = await conversations()
    for (let round = 0; round < 3; round++) {
      for (const i of closings.keys()) {
        const id = `closing-${round}-${i}`
        expect(all.get(id)!.topicIds, id).toEqual([topicOf.get(asked[(round + i) % 2]!)])
      }
    }
    expect(await topicIds()).toEqual(before)
    const { rows } = await db.pool.query<{ message_id: string; topics: string[] }>(
      `SELECT m.message_id, m.topics FROM rm_messages m JOIN rm_conversations c ON c.id = m.conversation_id
        WHERE c.external_id ~ '^closing-' AND m.role = 'user' AND m.message_id = 'u1'`,
    )
    expect(rows).toHaveLength(closings.length * 3)
    for (const r of rows) expect(r.topics).toEqual([])
    const asks = all.get('thanks-then-asks')!.topicIds
    expect([...asks].sort()).toEqual([topicOf.get('password'), topicOf.get('delivery')].sort())
  })

  async function topicsReport() {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/analytics/topics?chatbotId=${chatbotId}&days=2&limit=100`,
      headers: { cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }
})
