import { randomUUID } from 'node:crypto'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import { OTHER_TOPIC_ID } from '@cas/events'
import type { Projector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AnalysisPipeline, startAnalysisPipeline } from './support/analysis-pipeline.ts'
import { signUp } from './support/auth.ts'
import { createChatbot } from './support/chatbots.ts'
import type { TestDatabase } from './support/database.ts'
import { journalEvents } from './support/journal.ts'
import { join } from './support/members.ts'
import { hasTestModel, requireTestModel } from './support/model.ts'
import { expectReplayKeeps } from './support/projector.ts'
import { captureRequests, INSURER, ROADSIDE } from './support/topic-requests.ts'

// Creating a topic from examples (issue 31, item 6), end to end with the real language model: owners and
// admins give a label and 2 to 20 example requests; the gateway commits the command as an event; the
// analysis service embeds the examples, creates the topic (label pinned) and moves into it the requests
// that lie clearly nearer it than their own topic; later paraphrases join it, distinct requests do not.
requireTestModel()

describe.skipIf(!hasTestModel)('creating a topic from examples, with the language model', () => {
  let pipeline: AnalysisPipeline
  let db: TestDatabase
  let app: FastifyInstance
  let projector: Projector
  let cookie: string
  let memberCookie: string
  let apiKey: string
  let chatbotId: string
  const requestOf = new Map<string, string>()

  beforeAll(async () => {
    pipeline = await startAnalysisPipeline()
    ;({ db, app, projector } = pipeline)
    ;({ cookie } = await signUp(app))
    memberCookie = (await join(app, cookie, 'member')).cookie
    ;({
      apiKey,
      chatbot: { id: chatbotId },
    } = await createChatbot(app, cookie, { name: 'Insurer' }))
  })
  afterAll(() => pipeline?.close())

  async function capture(requests: Record<string, string[]>) {
    await captureRequests(app, apiKey, requests, requestOf)
    await settled()
  }

  const settled = () => pipeline.settled()

  /** Each conversation's topic (its caller's id → topic id), as the conversations API shows it. */
  async function placement() {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/conversations?chatbotId=${chatbotId}&limit=100`,
      headers: { cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    return new Map(
      (res.json().conversations as { conversationId: string; topicIds: string[] }[]).map(
        (c) => [c.conversationId, c.topicIds.join()] as const,
      ),
    )
  }

  const ofRequest = (placed: Map<string, string>, request: string) =>
    [...placed].filter(([c]) => requestOf.get(c) === request).map(([, topic]) => topic)

  const create = (payload: object, as = cookie) =>
    app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbotId}/topics`,
      headers: { cookie: as },
      payload,
    })

  const journal = async () => ({
    commands: (await journalEvents(db.pool, 'chatbot', chatbotId)).filter((e) =>
      e.type.startsWith('chatbot.topic-'),
    ),
    created: (await journalEvents(db.pool, 'analysis', chatbotId)).filter(
      (e) => e.type === 'analysis.topic-created-by-user',
    ),
  })

  let before: Map<string, string>

  const commandList = async () => {
    const res = await app.inject({
      method: 'GET',
      url: `/api/v1/chatbots/${chatbotId}/topics/commands`,
      headers: { cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().commands as { type: string; status: string; moved: number | null }[]
  }

  it("finds topics in the insurer's requests (the ground the command stands on)", async () => {
    await capture(INSURER)
    await capture({ roadside: ROADSIDE.before })
    before = await placement()
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM rm_topics WHERE chatbot_id = $1', [
      chatbotId,
    ])
    expect(rows[0].n).toBeGreaterThan(0)
  })

  it("refuses bad input (400), a member (403) and a taken label (409) in the API's error shape, changing nothing", async () => {
    const examples = ROADSIDE.examples
    const cases: [object, number][] = [
      [{ label: '', examples }, 400],
      [{ label: '   ', examples }, 400],
      [{ label: 'x'.repeat(81), examples }, 400],
      [{ label: 'Roadside', examples: [examples[0]] }, 400],
      [{ label: 'Roadside', examples: [] }, 400],
      [{ label: 'Roadside', examples: Array.from({ length: 21 }, (_, i) => `tow my car number ${i}`) }, 400],
      [{ label: 'Roadside', examples: [examples[0], 'y'.repeat(501)] }, 400],
      [{ label: 'Roadside', examples: [examples[0], '  '] }, 400],
      [{ label: 'Roadside' }, 400],
      [{ label: 'Roadside', examples, extra: 1 }, 400],
    ]
    for (const [payload, status] of cases) {
      const res = await create(payload)
      expect(res.statusCode, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`).toBe(status)
      expect(res.json()).toMatchObject({
        ok: false,
        error: { code: 'invalid_request', message: expect.any(String) },
      })
      expect(res.json().error.details.length).toBeGreaterThan(0)
    }
    const member = await create({ label: 'Roadside', examples }, memberCookie)
    expect(member.statusCode).toBe(403)
    expect(member.json()).toMatchObject({ ok: false, error: { code: 'forbidden' } })
    const { rows } = await db.pool.query('SELECT label FROM rm_topics WHERE chatbot_id = $1 LIMIT 1', [
      chatbotId,
    ])
    const taken = await create({ label: rows[0].label.toUpperCase(), examples })
    expect(taken.statusCode, taken.body).toBe(409)
    expect(taken.json()).toMatchObject({ ok: false, error: { code: 'conflict' } })
    const unknown = await app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${randomUUID()}/topics`,
      headers: { cookie },
      payload: { label: 'Roadside', examples },
    })
    expect(unknown.statusCode).toBe(404)
    await settled()
    expect(await journal()).toEqual({ commands: [], created: [] })
    expect(await placement()).toEqual(before)
  })

  let roadside: string

  it('creates the topic: an event, its label pinned, and the roadside requests move into it', async () => {
    const res = await create({ label: '  Roadside   assistance ', examples: ROADSIDE.examples })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ ok: true, topic: { label: 'Roadside assistance', pinned: true } })
    roadside = res.json().topic.id
    await settled()
    const { commands, created } = await journal()
    expect(commands.map((e) => e.type)).toEqual(['chatbot.topic-creation-requested'])
    expect(created.map((e) => e.payload)).toEqual([
      { topicId: roadside, label: 'Roadside assistance', keywords: expect.any(Array), examples: 4 },
    ])
    const { rows } = await db.pool.query(
      'SELECT label, pinned, hidden FROM rm_topics WHERE chatbot_id = $1 AND id = $2',
      [chatbotId, roadside],
    )
    expect(rows).toEqual([{ label: 'Roadside assistance', pinned: true, hidden: false }])
    const after = await placement()
    expect(ofRequest(after, 'roadside')).toEqual(ROADSIDE.before.map(() => roadside))
    // The outcome says how many requests moved (analysis.topic-command-handled v2, the commands list).
    const outcome = (await journalEvents(db.pool, 'analysis', chatbotId)).find(
      (e) => e.type === 'analysis.topic-command-handled',
    )
    expect(outcome).toMatchObject({
      version: 2,
      payload: { outcome: 'applied', moved: ROADSIDE.before.length },
    })
    expect((await commandList())[0]).toMatchObject({
      type: 'create',
      status: 'applied',
      moved: ROADSIDE.before.length,
    })
    // Distinct requests stay where they were.
    for (const request of Object.keys(INSURER))
      expect(ofRequest(after, request)).toEqual(ofRequest(before, request))
  })

  it('places later paraphrases in it, and later distinct requests elsewhere', async () => {
    await capture({
      paraphrase: ROADSIDE.after,
      distinct: [
        'I want to add my wife as a driver',
        'how do I pay my premium?',
        'file a claim for hail damage',
      ],
    })
    const placed = await placement()
    expect(ofRequest(placed, 'paraphrase')).toEqual(ROADSIDE.after.map(() => roadside))
    for (const topic of ofRequest(placed, 'distinct')) expect(topic).not.toBe(roadside)
  })

  it('takes the quote requests from the topic a user merged their topics into (pinned), and says how many moved', async () => {
    // trial2 and fix3: the "quote" topics merged into "bill", then "Quotes" created from three quote
    // requests moved none of them, because a merge (or a rename) pins the topic and pinned topics kept
    // their members. A creation is a user's later, explicit act: it takes them from the pinned topic.
    const placed = await placement()
    const [bill] = ofRequest(placed, 'bill')
    // Placement while settling varies with timing: a quote request may wait in "other" (no topic to merge),
    // or sit in the bill topic already, leaving no quote topic to merge; a rename pins the bill topic then.
    const quoteTopics = new Set(ofRequest(placed, 'quote').filter((t) => t !== bill && t !== OTHER_TOPIC_ID))
    expect(bill).toBeDefined()
    const rename = await app.inject({
      method: 'POST',
      url: `/api/v1/chatbots/${chatbotId}/topics/${bill}/rename`,
      headers: { cookie },
      payload: { label: 'Billing' },
    })
    expect(rename.statusCode, rename.body).toBe(200)
    for (const topic of quoteTopics) {
      const merge = await app.inject({
        method: 'POST',
        url: `/api/v1/chatbots/${chatbotId}/topics/${topic}/merge`,
        headers: { cookie },
        payload: { into: bill },
      })
      expect(merge.statusCode, merge.body).toBe(200)
    }
    await settled()
    const merged = await placement()
    const { rows: pinned } = await db.pool.query(
      'SELECT pinned FROM rm_topics WHERE chatbot_id = $1 AND id = $2',
      [chatbotId, bill],
    )
    expect(pinned).toEqual([{ pinned: true }])
    // The quote conversations (captured in INSURER.quote's order) now in the pinned bill topic; the
    // examples are three quote requests, those first.
    const quoteIds = [...requestOf].filter(([, r]) => r === 'quote').map(([c]) => c)
    const textOf = new Map(quoteIds.map((c, i) => [c, INSURER.quote[i]!]))
    const inBill = quoteIds.filter((c) => merged.get(c) === bill)
    expect(inBill.length).toBeGreaterThan(0)
    const examples = [...new Set([...inBill.map((c) => textOf.get(c)!), ...INSURER.quote])].slice(0, 3)
    const res = await create({ label: 'Quotes', examples })
    expect(res.statusCode, res.body).toBe(200)
    const quotes = res.json().topic.id as string
    await settled()
    const after = await placement()
    const fromBill = inBill.filter((c) => examples.includes(textOf.get(c)!))
    expect(fromBill.length).toBeGreaterThan(0)
    for (const c of fromBill) expect(after.get(c), c).toBe(quotes)
    // A creation moves requests only into the new topic: every other request stays where the merge left it,
    // or (a request the model reads nearer the quote examples than its topic, which now include pinned
    // ones: CI once saw 'please put my husband on my car insurance' follow them) goes into "Quotes".
    for (const [c, topic] of after)
      if (requestOf.get(c) !== 'quote' && topic !== merged.get(c)) expect(topic, c).toBe(quotes)
    // The roadside requests, in a pinned topic a creation made and far from quotes, stay in it.
    expect(ofRequest(after, 'roadside')).toEqual(ofRequest(merged, 'roadside'))
    expect(new Set(ofRequest(after, 'roadside'))).toEqual(new Set([roadside]))
    // Each conversation has one request: the requests moved are the conversations now in "Quotes".
    const inQuotes = [...after.values()].filter((t) => t.split(',').includes(quotes)).length
    expect((await commandList())[0]).toMatchObject({ type: 'create', status: 'applied', moved: inQuotes })
  })

  it('rebuilds the same topics and assignments from the events on a replay', async () => {
    const snapshot = async () => {
      const { rows: all } = await db.pool.query(
        'SELECT id, label, keywords, canonical_id, pinned, hidden FROM rm_topics ORDER BY id',
      )
      const { rows: placed } = await db.pool.query('SELECT id, topics FROM rm_conversations ORDER BY id')
      return { all, placed }
    }
    const before = await snapshot()
    await expectReplayKeeps(db.pool, projector, snapshot, before, {
      ...EMBEDDED_EVENT_LOG,
      pollIntervalMs: 5,
    })
  })
})
