import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type { Projector } from '@cas/service-projector'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { buildTestGateway } from './support/gateway.ts'
import { expectReplayKeeps, projectAll } from './support/projector.ts'

// Regression (issue 32): the signals report read when a signal was turned on from the audit log, which
// does not hold the settings a chatbot was created with: a custom signal given at creation and carried
// through a later change of the custom list was rated over the conversations after that change only.
// And the knowledge gaps rated a signal turned on later over all the topic's conversations, those
// analysed while it was off included. The periods now come from the chatbot's events (rm_signal_periods),
// kept by the projector and made again by a rebuild.

const DISCOUNT = { label: 'Asks for a discount', examples: ['can I get a discount?'] }
const REFUND = { label: 'Wants a refund', examples: ['I want my money back'] }

let db: TestDatabase
let app: FastifyInstance
let projector: Projector
let cookie: string
let chatbotId: string
let apiKey: string
let orgId: string
const topicId = randomUUID()

/** A conversation captured with its last message at `sentAt`, analysed into the topic with `signals`. */
async function conversation(
  apiKey: string,
  orgId: string,
  sentAt: Date,
  signals: { name: string; label?: string }[],
) {
  const captured = await postCapture(app, apiKey, {
    conversationId: `c-${randomUUID()}`,
    messages: [{ id: 'm-1', role: 'user', content: 'hello', sentAt: sentAt.toISOString() }],
  })
  expect(captured.statusCode, captured.body).toBe(200)
  const analyzer = { name: 'test', version: '1' }
  await withTransaction(db.pool, async (client) => {
    await appendToStream(client, {
      streamType: 'analysis',
      streamId: captured.json().conversationId,
      orgId,
      chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.conversation-analyzed', {
          analyzer,
          sentiment: { score: 0, label: 'neutral' },
          assistantSentiment: null,
          topics: [{ id: topicId, label: 'Billing' }],
        }),
        newEvent('analysis.signals-detected', {
          analyzer,
          settled: true,
          signals: signals.map((s) => ({ ...s, confidence: 0.8, evidence: ['m-1'] })),
        }),
      ],
    })
  })
}

const report = async () => {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/analytics/signals?chatbotId=${chatbotId}&days=7`,
    headers: { cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/** Turns off exactly these built-in signals of the chatbot (settings.signals.disabled). */
const disableSignals = async (disabled: string[]) => {
  const patched = await app.inject({
    method: 'PATCH',
    url: `/api/v1/chatbots/${chatbotId}`,
    headers: { cookie },
    payload: { settings: { signals: { disabled } } },
  })
  expect(patched.statusCode, patched.body).toBe(200)
}

/** The events so far projected: the projector started again over the journal. */
const reproject = async () => {
  await projector.consumer.stop()
  projector = await projectAll(db.pool)
}

/** Sets the chatbot's own signals (settings.signals.custom), its built-in ones as they are. */
const setCustomSignals = async (custom: (typeof DISCOUNT)[]) => {
  const patched = await app.inject({
    method: 'PATCH',
    url: `/api/v1/chatbots/${chatbotId}`,
    headers: { cookie },
    payload: { settings: { signals: { custom } } },
  })
  expect(patched.statusCode, patched.body).toBe(200)
}

/** How many of the chatbot's conversations the list filtered by `signal` holds. */
const listedBy = async (signal: string) => {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/conversations?chatbotId=${chatbotId}&signal=${signal}`,
    headers: { cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().conversations.length
}

const periods = async () =>
  (
    await db.pool.query(
      `SELECT signal, since_creation, on_version, off_version, off_since IS NULL AS open
         FROM rm_signal_periods WHERE chatbot_id = $1 ORDER BY signal, on_version`,
      [chatbotId],
    )
  ).rows

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, undefined, { ownProjector: true }))
  let organization: { id: string }
  ;({ cookie, organization } = await signUp(app))
  // Created with its own signal and escalation off; the custom list changed later (the discount kept,
  // a refund added), escalation turned on by the same change.
  const created = await createChatbot(app, cookie, {
    name: 'Bot',
    settings: { signals: { disabled: ['escalation'], custom: [DISCOUNT] } },
  })
  chatbotId = created.chatbot.id
  apiKey = created.apiKey
  orgId = organization.id
  const before = new Date(Date.now() - 10 * 60_000)
  await conversation(created.apiKey, organization.id, before, [
    { name: 'custom:asks-for-a-discount', label: DISCOUNT.label },
  ])
  await conversation(created.apiKey, organization.id, before, [{ name: 'bot_failure' }])
  await conversation(created.apiKey, organization.id, before, [])
  const patched = await app.inject({
    method: 'PATCH',
    url: `/api/v1/chatbots/${chatbotId}`,
    headers: { cookie },
    payload: { settings: { signals: { disabled: [], custom: [DISCOUNT, REFUND] } } },
  })
  expect(patched.statusCode, patched.body).toBe(200)
  const after = new Date()
  await conversation(created.apiKey, organization.id, after, [
    { name: 'escalation' },
    { name: 'custom:wants-a-refund', label: REFUND.label },
  ])
  await conversation(created.apiKey, organization.id, after, [])
  projector = await projectAll(db.pool)
})

afterAll(async () => {
  await projector?.consumer.stop()
  await app?.close()
  await db?.drop()
})

describe("signals' periods from the chatbot's events", () => {
  it('keeps each signal’s periods: on since the creation, or since the change that turned it on', async () => {
    expect(await periods()).toEqual([
      { signal: 'abandonment', since_creation: true, on_version: 1, off_version: null, open: true },
      { signal: 'bot_failure', since_creation: true, on_version: 1, off_version: null, open: true },
      {
        signal: 'custom:asks-for-a-discount',
        since_creation: true,
        on_version: 1,
        off_version: null,
        open: true,
      },
      {
        signal: 'custom:wants-a-refund',
        since_creation: false,
        on_version: 2,
        off_version: null,
        open: true,
      },
      { signal: 'escalation', since_creation: false, on_version: 2, off_version: null, open: true },
      { signal: 'frustration', since_creation: true, on_version: 1, off_version: null, open: true },
      { signal: 'repetition', since_creation: true, on_version: 1, off_version: null, open: true },
      { signal: 'resolution', since_creation: true, on_version: 1, off_version: null, open: true },
    ])
  })

  it('rates a custom signal given at creation and kept through a change of the list over all its conversations', async () => {
    const signals = (await report()).signals as { name: string }[]
    expect(signals.find((s) => s.name === 'custom:asks-for-a-discount')).toMatchObject({
      conversations: 1,
      conversationsChecked: 5,
      rate: 0.2,
    })
    expect(signals.find((s) => s.name === 'custom:wants-a-refund')).toMatchObject({
      conversations: 1,
      conversationsChecked: 2,
      rate: 0.5,
    })
  })

  it("rates a signal turned on later, per topic, over the topic's conversations checked for it", async () => {
    const body = await report()
    const [billing] = body.topics
    expect(billing).toMatchObject({ id: topicId, conversations: 5 })
    expect(billing.signals.escalation).toEqual({ conversations: 1, conversationsChecked: 2, rate: 0.5 })
    expect(billing.signals.bot_failure).toEqual({ conversations: 1, conversationsChecked: 5, rate: 0.2 })
    expect(body.needsAttention).toMatchObject([
      { id: topicId, conversations: 5, botFailures: 1, conversationsChecked: 5, botFailureRate: 0.2 },
    ])
  })

  it('gives the same periods and the same report after a rebuild of the read models', async () => {
    const snapshot = async () => ({ periods: await periods(), report: await report() })
    await expectReplayKeeps(db.pool, projector, snapshot, await snapshot())
  })

  // Regression: with a signal turned off, the report counted it nowhere but the list filtered by it still
  // listed the conversations that carried it, so the organization's Signals figure and its link disagreed.
  it('lists by a signal only while it is on, as the report counts it', async () => {
    expect(await listedBy('bot_failure')).toBe(1)
    await disableSignals(['bot_failure'])
    await reproject()
    const off = ((await report()).signals as { name: string }[]).find((s) => s.name === 'bot_failure')
    expect(off).toMatchObject({ enabled: false, conversations: 0 })
    expect(await listedBy('bot_failure')).toBe(0)
    await disableSignals([])
    await reproject()
    expect(await listedBy('bot_failure')).toBe(1)
  })

  // Regression (issue 32): a conversation counted as checked for a signal when its last message fell in
  // a period the signal was on. One captured a few minutes after its last message, just after bot failure
  // was turned off (a client that sends a conversation once it ends, an import), was analysed without it
  // and counted as checked once it was back on: 8/30 where 8/28 was right. What counts is when its
  // signals were decided.
  it('counts as checked a conversation analysed while the signal was on, not one analysed while it was off', async () => {
    type Figures = { name: string; conversations: number; conversationsChecked: number }
    const botFailure = async () => {
      await reproject()
      return ((await report()).signals as Figures[]).find((s) => s.name === 'bot_failure')!
    }
    const checkedBefore = await botFailure()
    // Its last message minutes before bot failure was turned off, captured and analysed after.
    const lastMessage = new Date(Date.now() - 5 * 60_000)
    await disableSignals(['bot_failure'])
    await conversation(apiKey, orgId, lastMessage, [])
    await disableSignals([])
    // Analysed while bot failure is on again: checked, with its bot failure.
    await conversation(apiKey, orgId, new Date(), [{ name: 'bot_failure' }])
    expect(await botFailure()).toMatchObject({
      enabled: true,
      conversations: checkedBefore.conversations + 1,
      conversationsChecked: checkedBefore.conversationsChecked + 1,
    })
    // The list by the signal agrees with the report.
    expect(await listedBy('bot_failure')).toBe(checkedBefore.conversations + 1)
    const snapshot = async () => ({ report: await report() })
    await expectReplayKeeps(db.pool, projector, snapshot, await snapshot())
  })

  // A custom signal removed from the settings is off like a built-in one turned off: the report counts it
  // nowhere and the list by it lists nothing; added back, the conversations that carry it count again.
  it('lists by a custom signal only while the settings name it, as the report counts it', async () => {
    const refund = 'custom:wants-a-refund'
    const reported = async () =>
      ((await report()).signals as { name: string }[]).find((s) => s.name === refund)
    expect(await listedBy(refund)).toBe(1)
    await setCustomSignals([DISCOUNT])
    await reproject()
    expect(await reported()).toBeUndefined()
    expect(await listedBy(refund)).toBe(0)
    expect(await listedBy('custom:asks-for-a-discount')).toBe(1)
    await setCustomSignals([DISCOUNT, REFUND])
    await reproject()
    expect(await reported()).toMatchObject({ enabled: true, conversations: 1 })
    expect(await listedBy(refund)).toBe(1)
  })

  it('names a custom signal no conversation has yet by its label in the settings', async () => {
    // A lead's first hour: a custom signal added after the traffic was reported with `label: null` (the
    // label came only from a conversation that had it), so the dashboard showed its slug.
    const complaint = { label: 'Complains about the price', examples: ['that is far too expensive'] }
    await setCustomSignals([DISCOUNT, REFUND, complaint])
    await reproject()
    const signals = (await report()).signals as { name: string; label: string | null }[]
    expect(signals.find((s) => s.name === 'custom:complains-about-the-price')).toMatchObject({
      label: complaint.label,
      conversations: 0,
    })
    expect(signals.find((s) => s.name === 'custom:wants-a-refund')).toMatchObject({ label: REFUND.label })
    expect(signals.find((s) => s.name === 'escalation')).toMatchObject({ label: null })
    await setCustomSignals([DISCOUNT, REFUND])
    await reproject()
  })
})
