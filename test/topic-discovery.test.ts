import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import type { Analyzer } from '@cas/service-analysis'
import type { Projector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enqueueReanalysis } from '../services/analysis/src/reanalyze.ts'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { testKeyring } from './support/keyring.ts'
import { hasTestModel, requireTestModel } from './support/model.ts'
import { expectReplayKeeps } from './support/projector.ts'
import { SUPPORT_REQUESTS } from './support/topic-requests.ts'

// Topic discovery end to end with the real language model: captures through the API, the analysis
// service placing end users' messages in topics, the projector, and the dashboard's reads.
requireTestModel()

/** Hand-written support requests (not from any benchmark): paraphrases of one request each. */
const REQUESTS = {
  ...SUPPORT_REQUESTS,
  cancel: [
    'I want to cancel my subscription',
    'I would like to end my subscription',
    'Please stop my monthly membership',
    'unsubscribe me from the premium plan',
    'cancel my subscription today',
  ],
}
const LATER = {
  invoice: [
    'Can I get a copy of my invoice?',
    'I need a receipt for my last payment',
    'Where can I download my invoices?',
    'send me the invoice for March',
  ],
  password: ['what do I do if I lost my password', 'password change please'],
}
/** What the bot says to everyone: none of its words may ever make a topic. */
const BOILERPLATE = 'I am sorry to hear that. Let me help you with that right away, our team is here for you.'
const BOT_ONLY_WORDS = ['sorry', 'hear', 'right away', 'team']

interface Conversation {
  id: string
  conversationId: string
  topics: string[]
  topicIds: string[]
}

describe.skipIf(!hasTestModel)('topic discovery with the language model', () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let app: FastifyInstance
  let analyzer: Analyzer
  let projector: Projector
  let cookie: string
  let apiKey: string
  let chatbotId: string
  let n = 0

  beforeAll(async () => {
    pipeline = await startAnalysisPipeline()
    ;({ db, app, projector } = pipeline)
    analyzer = pipeline.analyzer!
    ;({ cookie } = await signUp(app))
    ;({
      apiKey,
      chatbot: { id: chatbotId },
    } = await createChatbot(app, cookie, { name: 'Support', settings: { topics: { refunds: ['refund'] } } }))
  })
  afterAll(() => pipeline?.close())

  /** One conversation per request: the end user's message, then the bot's boilerplate. */
  async function captureAll(requests: Record<string, string[]>): Promise<Map<string, string[]>> {
    const byRequest = new Map<string, string[]>()
    for (const [request, texts] of Object.entries(requests)) {
      for (const text of texts) {
        const conversationId = `${request}-${++n}`
        const res = await postCapture(app, apiKey, {
          conversationId,
          messages: [
            { id: 'q', role: 'user', content: text },
            { id: 'a', role: 'assistant', content: BOILERPLATE },
          ],
        })
        expect(res.statusCode, res.body).toBe(200)
        byRequest.set(request, [...(byRequest.get(request) ?? []), conversationId])
      }
    }
    await settled()
    return byRequest
  }

  /** Every capture queued for analysis and analyzed, and the projector past everything in the journal. */
  const settled = () => pipeline.settled()

  async function conversations(query = ''): Promise<Map<string, Conversation>> {
    const found = new Map<string, Conversation>()
    let cursor: string | null = null
    do {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v1/conversations?chatbotId=${chatbotId}&limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`,
        headers: { cookie },
      })
      expect(res.statusCode, res.body).toBe(200)
      const page = res.json() as { conversations: Conversation[]; nextCursor: string | null }
      for (const c of page.conversations) found.set(c.conversationId, c)
      cursor = page.nextCursor
    } while (cursor)
    return found
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

  it("puts paraphrases of one request in one topic, different requests in different ones, and never the bot's words", async () => {
    const byRequest = await captureAll(REQUESTS)
    const all = await conversations()
    const topicOf = (conversationId: string) => all.get(conversationId)!.topicIds
    // A paraphrase outside its request's spread waits in "other" (issue 31: it joins only when clearly
    // inside); and as the analysis places messages in whatever batches capture timing makes, one may
    // still land in a neighbour's topic (bench/FINDINGS.md, "Issue 31: granularity from the data": one
    // message at a time, a first topic can take a neighbour). So: all but one of a request's paraphrases
    // share its topic, and the requests' topics differ.
    const requestTopics = [...byRequest].map(([request, ids]) => {
      const placed = ids.map((id) => topicOf(id).join()).filter((t) => t !== 'other')
      const counts = new Map<string, number>()
      for (const t of placed) counts.set(t, (counts.get(t) ?? 0) + 1)
      const [topic, members] = [...counts].sort((a, b) => b[1] - a[1])[0]!
      expect(members, `${request}: ${[...counts].join(' / ')}`).toBeGreaterThanOrEqual(ids.length - 1)
      return topic
    })
    expect(requestTopics.every((t) => t !== '' && t !== 'other')).toBe(true)
    expect(new Set(requestTopics).size).toBe(requestTopics.length)
    const report = await topicsReport()
    for (const topic of report.topics as { label: string; keywords: string[] }[]) {
      for (const word of BOT_ONLY_WORDS) {
        expect([topic.label, ...topic.keywords].join(' ')).not.toContain(word)
      }
    }
    expect(report.topics.some((t: { label: string }) => t.label.startsWith('password'))).toBe(true)
  })

  it('keeps topic ids as more conversations arrive, and finds the new request', async () => {
    const before = await conversations()
    const topicsBefore = new Set([...before.values()].flatMap((c) => c.topicIds))
    const later = await captureAll(LATER)
    const after = await conversations()
    const topicsAfter = new Set([...after.values()].flatMap((c) => c.topicIds))
    // No topic changes its id or goes away. "other" is no topic: the pool empties when a topic takes what waited
    // there (as below), and which message waits depends on the analysis batches' order.
    for (const id of topicsBefore) if (id !== 'other') expect(topicsAfter.has(id), id).toBe(true)
    // A conversation keeps its topic, unless it was waiting in the pool ("other") and a topic took it.
    const found = [...topicsAfter].filter((id) => !topicsBefore.has(id) && id !== 'other')
    for (const [conversationId, c] of before) {
      const now = after.get(conversationId)!
      if (now.topicIds.join() !== c.topicIds.join())
        expect(c.topicIds, `${conversationId}: ${c.topics} → ${now.topics}`).toEqual(['other'])
    }
    // Each later message is in its request's topic or, outside its spread, waits in "other".
    const passwordTopic = before.get('password-1')!.topicIds
    for (const id of later.get('password')!)
      expect([passwordTopic.join(), 'other']).toContain(after.get(id)!.topicIds.join())
    const invoicesPlaced = later.get('invoice')!.map((id) => after.get(id)!.topicIds.join())
    const invoices = new Set(invoicesPlaced.filter((t) => t !== 'other'))
    expect(invoices.size).toBe(1)
    expect(invoicesPlaced.filter((t) => t !== 'other').length).toBeGreaterThanOrEqual(3)
    expect(found).toEqual([[...invoices][0]])
  })

  it("places a message naming a configured topic's keyword in it, under its own label", async () => {
    const byRequest = await captureAll({ refund: ['I want a refund for my broken headphones'] })
    const [conversationId] = byRequest.get('refund')!
    expect((await conversations()).get(conversationId!)!.topics).toEqual(['refunds'])
  })

  it('answers the topics with their figures, and filters conversations by topic id or label', async () => {
    const report = await topicsReport()
    const password = report.topics.find((t: { label: string }) => t.label.includes('password'))
    // Seven password conversations, less any that waits in "other" (outside the topic's spread).
    const placed = [...(await conversations()).values()].filter((c) =>
      c.topicIds.includes(password.id),
    ).length
    expect(placed).toBeGreaterThanOrEqual(5)
    expect(password).toMatchObject({
      chatbotId,
      conversations: placed,
      messages: placed,
      configured: false,
    })
    expect(password.share).toBeCloseTo(placed / report.conversationsWithTopics, 4)
    expect(password.trend.reduce((sum: number, p: { messages: number }) => sum + p.messages, 0)).toBe(placed)
    expect(password.examples).toHaveLength(3)
    expect(password.examples[0].excerpt).toMatch(/password/i)
    const refunds = report.topics.find((t: { label: string }) => t.label === 'refunds')
    expect(refunds).toMatchObject({ configured: true, keywords: ['refund'], conversations: 1 })
    // The most conversations first.
    const counts = report.topics.map((t: { conversations: number }) => t.conversations)
    expect(counts).toEqual([...counts].sort((a, b) => b - a))

    const byId = await conversations(`&topic=${password.id}`)
    const byLabel = await conversations(`&topic=${encodeURIComponent(password.label.toUpperCase())}`)
    expect([...byId.keys()].sort()).toEqual([...byLabel.keys()].sort())
    // All of them password conversations, but for at most one neighbour placed there (as above).
    expect([...byId.keys()].filter((id) => !id.startsWith('password-')).length).toBeLessThanOrEqual(1)
    expect(byId.size).toBe(placed)
  })

  it("re-analysis embeds a chatbot's earlier messages and places them in topics, under the model's version", async () => {
    const quiet = await createChatbot(app, cookie, { name: 'Quiet', settings: { analysisEnabled: false } })
    // Two requests: a lone group, with nothing to set it against, is not told from noise (issue 31).
    const texts = [...REQUESTS.password, ...REQUESTS.delivery]
    for (const [i, text] of texts.entries()) {
      const res = await postCapture(app, quiet.apiKey, {
        conversationId: `quiet-${i}`,
        messages: [{ id: 'q', role: 'user', content: text }],
      })
      expect(res.json().analysisQueued).toBe(false)
    }
    const { keys: queued } = await enqueueReanalysis(db.pool, testKeyring, {
      chatbotId: quiet.chatbot.id,
      analyzer: analyzer.info,
      now: new Date(),
    })
    expect(queued).toHaveLength(texts.length)
    await settled()
    const { rows } = await db.pool.query<{ analyzer: string; topics: string[]; content: string }>(
      'SELECT analyzer, topics, content FROM rm_messages WHERE chatbot_id = $1',
      [quiet.chatbot.id],
    )
    expect(rows).toHaveLength(texts.length)
    for (const r of rows)
      expect(r.analyzer).toMatch(/^local-embedding@Xenova\/all-MiniLM-L6-v2@q8#[0-9a-f]{16}\+/)
    const topicsOf = (request: string[]) =>
      rows
        .filter((r) => request.includes(r.content))
        .map((r) => r.topics.join())
        .filter((t) => t !== 'other')
    const password = topicsOf(REQUESTS.password)
    expect(password.length).toBeGreaterThanOrEqual(REQUESTS.password.length - 1)
    expect(new Set(password).size).toBe(1)
    expect(password[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(topicsOf(REQUESTS.delivery)).not.toContain(password[0])
  })

  it('a re-analysis with the same model leaves every message in its topic, counted once', async () => {
    await settled()
    const sizes = async () =>
      (
        await db.pool.query('SELECT id, size, terms FROM topic_clusters WHERE chatbot_id = $1 ORDER BY id', [
          chatbotId,
        ])
      ).rows
    const before = { sizes: await sizes(), conversations: await conversations() }
    // Another analyzer version of the same model (say, new sentiment rules): every capture analysed again.
    const { keys: queued } = await enqueueReanalysis(db.pool, testKeyring, {
      chatbotId,
      analyzer: { name: analyzer.info.name, version: `${analyzer.info.version}+again` },
      now: new Date(),
    })
    expect(queued.length).toBeGreaterThan(10)
    await settled()
    expect(await sizes()).toEqual(before.sizes)
    const after = await conversations()
    for (const [id, c] of before.conversations) expect(after.get(id)!.topicIds, id).toEqual(c.topicIds)
  })

  it('rebuilds the same topics from the events on a replay', async () => {
    await settled()
    const snapshot = async () => {
      const { rows: topics } = await db.pool.query(
        'SELECT id, label, keywords, configured, canonical_id FROM rm_topics ORDER BY id',
      )
      const { rows: placed } = await db.pool.query('SELECT id, topics FROM rm_conversations ORDER BY id')
      const { rows: themes } = await db.pool.query<{
        chatbot_id: string
        label: string
        topic_ids: string[]
      }>('SELECT chatbot_id, id, label, topic_ids, position FROM rm_themes ORDER BY chatbot_id, id')
      return { topics, placed, themes }
    }
    const before = await snapshot()
    expect(before.topics.length).toBeGreaterThanOrEqual(5)
    // The topics are grouped into themes (themes.ts): each theme's topics are topics of its chatbot not
    // merged away, no topic is in two themes, and no two themes of a chatbot share a label.
    const own = before.themes.filter((t) => t.chatbot_id === chatbotId)
    expect(own.length).toBeGreaterThanOrEqual(1)
    const grouped = own.flatMap((t) => t.topic_ids)
    expect(new Set(grouped).size).toBe(grouped.length)
    const canonical = new Set(
      (before.topics as { id: string; canonical_id: string }[])
        .filter((t) => t.id === t.canonical_id)
        .map((t) => t.id),
    )
    for (const id of grouped) expect(canonical.has(id), id).toBe(true)
    expect(new Set(own.map((t) => t.label)).size).toBe(own.length)
    await expectReplayKeeps(db.pool, projector, snapshot, before, {
      ...EMBEDDED_EVENT_LOG,
      pollIntervalMs: 5,
    })
  })
})
