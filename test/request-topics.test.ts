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
/** A request, then the bot asks for an order number and a day, and the end user answers each. */
const SLOT_TURNS: readonly (readonly ['user' | 'assistant', string])[] = [
  ['user', "My package hasn't arrived yet"],
  ['assistant', 'Sorry about that! Could you give me your order number?'],
  ['user', 'KS-44719'],
  ['assistant', 'Thanks. The courier can bring it again on Thursday or Friday. Which day would suit you?'],
  ['user', 'friday please'],
]

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

  it('makes no topic of what an end user says after their request unless they clearly ask again, whether captured at once, a message at a time or as a backlog', async () => {
    // Regression (rules-v6): a report of what the end user did, or a follow-up meaning little read alone,
    // passed the request gate (the doubt goes to keeping), and on multi-turn traffic such messages formed
    // the largest topic, "thanks, thank, gray". Now the doubt goes to keeping only for the first request.
    const followUps = [
      'right, I have reordered it',
      'installed it, all good',
      'sent it just now, thanks',
      "ok I'll try again tomorrow",
      'ok will have a look later',
      'done that, nothing changed',
    ]
    const asked = ['password', 'delivery'] as const
    const sentAt = (i: number) => new Date(Date.UTC(2026, 10, 21, 9, 0, i)).toISOString()
    const turns = (request: string, then: string) =>
      [
        { id: 'u0', role: 'user', content: request },
        { id: 'a0', role: 'assistant', content: BOT },
        { id: 'u1', role: 'user', content: then },
      ].map((m, i) => ({ ...m, sentAt: sentAt(i) }))
    const cases: { id: string; messages: ReturnType<typeof turns> }[] = []
    for (const [round, way] of ['at-once', 'each-message', 'backlog'].entries()) {
      for (const [i, followUp] of followUps.entries()) {
        const request = REQUESTS[asked[(round + i) % 2]!][(round + i) % 5]!
        cases.push({ id: `follow-up-${way}-${i}`, messages: turns(request, followUp) })
      }
      // Thanks, then a second request: a topic of its own.
      cases.push({
        id: `asks-again-${way}`,
        messages: turns(REQUESTS.delivery[round]!, 'thanks! and how do I reset my password?'),
      })
    }
    const of = (way: string) => cases.filter((c) => c.id.includes(way))
    const post = async (conversationId: string, messages: readonly unknown[]) => {
      const res = await postCapture(app, apiKey, { conversationId, messages })
      expect(res.statusCode, res.body).toBe(200)
    }
    const before = await topicIds()
    for (const c of of('at-once')) await post(c.id, c.messages)
    // Each message captured as it is sent, and analysed before the next comes.
    for (const i of [0, 1, 2]) {
      for (const c of of('each-message')) await post(c.id, [c.messages[i]])
      await settled()
    }
    // Each message captured alone while the analysis is stopped: claimed in order once it starts.
    await pipeline.stopAnalysis()
    for (const i of [0, 1, 2]) for (const c of of('backlog')) await post(c.id, [c.messages[i]])
    await pipeline.startAnalysis(pipeline.analyzer!)
    await settled()

    const all = await conversations()
    const placed = await placedMessages(
      chatbotId,
      cases.map((c) => c.id),
    )
    for (const [round, way] of ['at-once', 'each-message', 'backlog'].entries()) {
      for (const i of followUps.keys()) {
        const id = `follow-up-${way}-${i}`
        // The follow-up neither makes nor joins a topic, nor waits in "other": the request keeps its own.
        expect(all.get(id)!.topicIds, id).toEqual([topicOf.get(asked[(round + i) % 2]!)])
        expect(placed.get(id), id).toEqual(['u0'])
      }
      const asks = all.get(`asks-again-${way}`)!.topicIds
      expect([...asks].sort(), way).toEqual([topicOf.get('password'), topicOf.get('delivery')].sort())
      expect(placed.get(`asks-again-${way}`), way).toEqual(['u0', 'u1'])
    }
    expect(await topicIds()).toEqual(before)
  })

  it("gives no topic to answers to the bot's questions for a detail; the same words after an open invitation still ask", async () => {
    // The bot asks for an order number and a day; the end user answers each (rules-v6).
    await captureTurns('slot-answers', SLOT_TURNS)
    // The same words after an open invitation are a request (an order number alone never is: rules-v8).
    await captureTurns('opens-with-day', [
      ['assistant', 'Hello! How can I help you today?'],
      ['user', 'friday please'],
    ])
    // A request after a greeting that asks how to help, and one after a slot question, keep their topics.
    await captureTurns('greeted-request', [
      ['assistant', 'Hello! How can I help you today?'],
      ['user', "I forgot my password and can't sign in"],
    ])
    await captureTurns('asks-instead', [
      ['assistant', 'Which day would suit you?'],
      ['user', 'I need to reset my password'],
    ])
    await settled()
    const all = await conversations()
    expect(all.get('slot-answers')!.topicIds).toEqual([topicOf.get('delivery')])
    expect(all.get('greeted-request')!.topicIds).toEqual([topicOf.get('password')])
    expect(all.get('asks-instead')!.topicIds).toEqual([topicOf.get('password')])
    const placed = await placedMessages(chatbotId, ['slot-answers', 'opens-with-day'])
    // The answers neither make nor join a topic, nor wait in "other"; the request they answer does.
    expect(placed.get('slot-answers')).toEqual(['m0'])
    expect(placed.get('opens-with-day')).toEqual(['m1'])
  })

  it('makes no topic of a message made only of codes and numbers, where it comes and whatever the bot asked; a request naming one still asks', async () => {
    // Regression (rules-v8): postcodes, references and model numbers read as near no anchor, so as
    // requests, when the bot's turn before them was not read as asking for them; they formed a topic.
    await captureTurns('reference-then-request', [
      ['user', 'RT-55012'],
      ['assistant', 'Thanks! What can I do for you?'],
      ['user', "My package hasn't arrived yet"],
    ])
    await captureTurns('postcode-after-statement', [
      ['user', "I forgot my password and can't sign in"],
      ['assistant', 'I will need the postcode we have on file for you before I can look into this.'],
      ['user', 'N17 0AP'],
    ])
    await captureTurns('request-naming-a-reference', [
      ['user', "where's my parcel? the tracking says RT-55012"],
    ])
    await settled()
    const all = await conversations()
    expect(all.get('reference-then-request')!.topicIds).toEqual([topicOf.get('delivery')])
    expect(all.get('postcode-after-statement')!.topicIds).toEqual([topicOf.get('password')])
    const placed = await placedMessages(chatbotId, [
      'reference-then-request',
      'postcode-after-statement',
      'request-naming-a-reference',
    ])
    expect(placed.get('reference-then-request')).toEqual(['m2'])
    expect(placed.get('postcode-after-statement')).toEqual(['m0'])
    expect(placed.get('request-naming-a-reference')).toEqual(['m0'])
  })

  it('judges the answers alike whether the conversation came in one capture, a capture per message or a backlog, and again when re-analysed', async () => {
    // Regression (rules-v5, reverted): the bot's turn was read from the answer's own capture only, so an
    // integration capturing each message as it happens (the SDKs, OpenTelemetry) got topics for answers.
    const { apiKey: key, chatbot } = await createChatbot(app, cookie, { name: 'Slots' })
    const sentAt = (i: number) => new Date(Date.UTC(2026, 10, 20, 10, 0, i)).toISOString()
    const message = (i: number) => ({
      id: `m${i}`,
      role: SLOT_TURNS[i]![0],
      content: SLOT_TURNS[i]![1],
      sentAt: sentAt(i),
    })
    const post = async (conversationId: string, ids: readonly number[]) => {
      const res = await postCapture(app, key, { conversationId, messages: ids.map(message) })
      expect(res.statusCode, res.body).toBe(200)
    }
    await post('one-capture', [...SLOT_TURNS.keys()])
    // Each message captured as it is sent, and analysed before the next comes.
    for (const i of SLOT_TURNS.keys()) {
      await post('each-message', [i])
      await settled()
    }
    // Each message captured alone while the analysis is stopped: its jobs wait together, and are claimed
    // in order (the bot's turn analysed and stored before the answer after it).
    await pipeline.stopAnalysis()
    for (const i of SLOT_TURNS.keys()) await post('backlog', [i])
    await pipeline.startAnalysis(pipeline.analyzer!)
    await settled()
    const variants = ['one-capture', 'each-message', 'backlog']
    const expected = new Map(variants.map((v) => [v, ['m0']]))
    expect(await placedMessages(chatbot.id, variants)).toEqual(expected)
    // The bot's slot questions are stored with its turns, decided once when each was analysed.
    const { rows: asked } = await db.pool.query<{ external_id: string; message_id: string }>(
      `SELECT c.external_id, r.message_id FROM analysis_results r JOIN rm_conversations c ON c.id = r.conversation_id
        WHERE r.chatbot_id = $1 AND r.slot_question IS NOT NULL ORDER BY c.external_id, r.message_id`,
      [chatbot.id],
    )
    expect(asked.map((r) => `${r.external_id}/${r.message_id}`)).toEqual(
      variants.sort().flatMap((v) => [`${v}/m1`, `${v}/m3`]),
    )
    // A re-analysis queues every capture again, all at once: the same decisions.
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbot.id}/reanalysis`,
      headers: { cookie },
      payload: {},
    })
    expect(res.statusCode, res.body).toBe(202)
    await settled()
    const { rows: jobs } = await db.pool.query(
      "SELECT 1 FROM analysis_jobs WHERE chatbot_id = $1 AND status = 'done'",
      [chatbot.id],
    )
    expect(jobs).toHaveLength(2 * (1 + 2 * SLOT_TURNS.length))
    expect(await placedMessages(chatbot.id, variants)).toEqual(expected)
  })

  /** A conversation of the given turns, in order, with ids m0, m1, … */
  async function captureTurns(conversationId: string, turns: readonly (readonly [string, string])[]) {
    const res = await postCapture(app, apiKey, {
      conversationId,
      messages: turns.map(([role, content], i) => ({ id: `m${i}`, role, content })),
    })
    expect(res.statusCode, res.body).toBe(200)
  }

  /** Per conversation, its messages placed as requests: in a topic, or waiting in "other" (the pool). */
  async function placedMessages(
    chatbot: string,
    externalIds: readonly string[],
  ): Promise<Map<string, string[]>> {
    const { rows } = await db.pool.query<{ external_id: string; message_id: string }>(
      `SELECT c.external_id, m.message_id FROM rm_messages m JOIN rm_conversations c ON c.id = m.conversation_id
        WHERE c.chatbot_id = $1 AND c.external_id = ANY($2) AND m.role = 'user'
          AND (cardinality(m.topics) > 0 OR EXISTS (SELECT 1 FROM topic_pool p
                 WHERE p.conversation_id = c.id AND p.message_id = m.message_id))
        ORDER BY c.external_id, m.message_id`,
      [chatbot, externalIds],
    )
    const placed = new Map<string, string[]>()
    for (const r of rows) placed.set(r.external_id, [...(placed.get(r.external_id) ?? []), r.message_id])
    return placed
  }

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
