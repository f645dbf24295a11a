import type { Analyzer } from '@cas/service-analysis'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Reclusterer } from '../services/analysis/src/topics/reclusterer.ts'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { hasTestModel, requireTestModel } from './support/model.ts'
import { EAGER, INSURER } from './support/topic-requests.ts'

// An erased end user's words leave the topics' keywords and labels (trial9): a topic's keywords are made
// from its members' words, so a name only the erased end user wrote stayed in them, shown to every role,
// until a re-clustering that only new requests brought on. An erasure now makes the chatbot due for one.
requireTestModel()

const NAME = 'gribblenox'

describe.skipIf(!hasTestModel)("an erased end user's words in the topics, with the language model", () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let app: FastifyInstance
  let analyzer: Analyzer
  let cookie: string

  beforeAll(async () => {
    pipeline = await startAnalysisPipeline()
    ;({ db, app } = pipeline)
    analyzer = pipeline.analyzer!
    ;({ cookie } = await signUp(app))
  })
  afterAll(() => pipeline?.close())

  const reclusterer = () => new Reclusterer({ pool: db.pool, analyzer, policy: EAGER, log: () => {} })

  async function capture(apiKey: string, conversationId: string, userId: string, text: string) {
    const res = await postCapture(app, apiKey, {
      conversationId,
      messages: [{ id: 'q', role: 'user', content: text }],
      user: { id: userId },
    })
    expect(res.statusCode, res.body).toBe(200)
  }

  /** Every label and keyword of the chatbot's topics, as the topics report gives them to any role. */
  async function words(chatbotId: string): Promise<string[]> {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/analytics/topics?chatbotId=${chatbotId}&days=2&limit=100`,
      headers: { cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    const topics = res.json().topics as { label: string; keywords: string[] }[]
    return topics.flatMap((t) => [t.label, ...t.keywords])
  }

  const erasures = async (chatbotId: string) =>
    (
      await db.pool.query<{ erasures_since_run: number }>(
        'SELECT erasures_since_run FROM topic_reclustering WHERE chatbot_id = $1',
        [chatbotId],
      )
    ).rows[0]?.erasures_since_run

  async function erase(chatbotId: string, userId: string) {
    const res = await app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${chatbotId}/users/${userId}`,
      headers: { cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    await pipeline.settled()
  }

  it('an erasure makes the chatbot due for a re-clustering, which takes the words only the erased end user wrote out of the keywords', async () => {
    // Given a claims topic made from the requests of an end user who signs with a name, then joined by five
    // other end users' (its keywords are made when it is made, and kept while its members say them)
    const { apiKey, chatbot } = await createChatbot(app, cookie, { name: 'Claims' })
    for (const [i, text] of INSURER.claim.entries()) {
      await capture(apiKey, `named-${i}`, 'named', `Gribblenox Pottersby: ${text}`)
    }
    for (const [request, texts] of Object.entries(INSURER)) {
      for (const [i, text] of texts.entries())
        await capture(apiKey, `${request}-${i}`, `${request}-${i}`, text)
    }
    await pipeline.settled()
    expect(await reclusterer().runDue()).toMatchObject({ chatbotId: chatbot.id, ok: true })
    await pipeline.settled()
    // (The name is one of the topic's words: what the erasure has to take away.)
    expect((await words(chatbot.id)).join(' ')).toContain(NAME)
    // Nothing is due for a run now: no request since it.
    expect(await reclusterer().runDue()).toBeUndefined()

    // When that end user is erased
    await erase(chatbot.id, 'named')

    // Then the chatbot is due for a run at once, and the run remakes the keywords without the name
    expect(await erasures(chatbot.id)).toBe(INSURER.claim.length)
    expect(await reclusterer().runDue()).toMatchObject({ chatbotId: chatbot.id, ok: true })
    await pipeline.settled()
    const left = await words(chatbot.id)
    expect(left.length).toBeGreaterThan(0)
    expect(left.join(' ')).not.toContain(NAME)
    expect(await erasures(chatbot.id)).toBe(0)
    expect(await reclusterer().runDue()).toBeUndefined()
  }, 240_000)

  it('a run after every end user of the window was erased clusters nothing, and is not due again', async () => {
    const { apiKey, chatbot } = await createChatbot(app, cookie, { name: 'Drivers' })
    for (const [i, text] of INSURER.driver.entries()) await capture(apiKey, `driver-${i}`, 'only', text)
    await pipeline.settled()
    expect(await reclusterer().runDue()).toMatchObject({ chatbotId: chatbot.id, ok: true })
    await pipeline.settled()

    await erase(chatbot.id, 'only')

    expect(await erasures(chatbot.id)).toBe(5)
    expect(await reclusterer().runDue()).toMatchObject({ chatbotId: chatbot.id, ok: true })
    expect(await erasures(chatbot.id)).toBe(0)
    expect(await reclusterer().runDue()).toBeUndefined()
    expect(await words(chatbot.id)).toEqual([])
  }, 240_000)
})
