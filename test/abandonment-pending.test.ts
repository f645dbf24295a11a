import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signUp } from './support/auth.ts'
import { createChatbot, postCapture } from './support/chatbots.ts'
import { createTestDatabase, type TestDatabase } from './support/database.ts'
import { buildTestGateway } from './support/gateway.ts'
import { projectAll } from './support/projector.ts'

// Issue 32, trial7's finding 3: the abandonment count rose for half an hour after the status read up to
// date, and nothing said that the range's last conversations were still within their chatbot's quiet
// period. The signals report now counts them (abandonmentPending), by the test clock here.

let db: TestDatabase
let app: FastifyInstance
let cookie: string
/** The time the gateway sees: fixed by the tests. */
let clock = new Date()
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000)
const bots: Record<'quick' | 'slow' | 'off', { id: string; apiKey: string }> = {} as never

/**
 * A conversation of `bot` captured: the end user asks, the assistant answers at `talkEnded` (`answer`), then
 * any `after` (tool or system messages).
 */
async function capture(
  bot: keyof typeof bots,
  conversationId: string,
  talkEnded: Date,
  {
    answer = 'It is out for delivery.',
    after = [],
  }: { answer?: string; after?: Record<string, string>[] } = {},
) {
  const res = await postCapture(app, bots[bot].apiKey, {
    conversationId,
    messages: [
      {
        id: 'm0',
        role: 'user',
        content: 'where is my parcel?',
        sentAt: new Date(talkEnded.getTime() - 5_000).toISOString(),
      },
      { id: 'm1', role: 'assistant', content: answer, sentAt: talkEnded.toISOString() },
      ...after,
    ],
  })
  expect(res.statusCode, res.body).toBe(200)
}

async function pending(chatbot?: keyof typeof bots) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/analytics/signals?days=7${chatbot ? `&chatbotId=${bots[chatbot].id}` : ''}`,
    headers: { cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().abandonmentPending
}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => clock, { ownProjector: true }))
  ;({ cookie } = await signUp(app))
  const settings = {
    quick: { signals: { abandonmentAfterMinutes: 1 } },
    slow: {},
    off: { signals: { disabled: ['abandonment'] } },
  }
  for (const [name, s] of Object.entries(settings)) {
    const created = await createChatbot(app, cookie, { name, settings: s })
    bots[name as keyof typeof bots] = { id: created.chatbot.id, apiKey: created.apiKey }
  }
  clock = T0
  await capture('quick', 'quick-recent', new Date(T0.getTime() - 20_000))
  await capture('quick', 'quick-old', new Date(T0.getTime() - 10 * 60_000))
  await capture('slow', 'slow-recent', new Date(T0.getTime() - 5 * 60_000))
  await capture('off', 'off-recent', new Date(T0.getTime() - 10_000))
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

describe('the signals report says which abandonments are still to be decided', () => {
  it("counts a chatbot's conversations within its quiet period, and none once it has passed", async () => {
    clock = T0
    expect(await pending('quick')).toEqual({
      conversations: 1,
      nextDueAt: new Date(T0.getTime() - 20_000 + 60_000).toISOString(),
      quietPeriodMinutes: 1,
    })
    // Due at the last message plus one minute: decided from then on (detect.ts: settled when now >= dueAt).
    clock = new Date(T0.getTime() + 40_000)
    expect(await pending('quick')).toEqual({ conversations: 0, nextDueAt: null, quietPeriodMinutes: 1 })
  })

  it("reads each chatbot's own quiet period over the organization, and none where abandonment is off", async () => {
    clock = T0
    expect(await pending()).toEqual({
      conversations: 2,
      nextDueAt: new Date(T0.getTime() + 40_000).toISOString(),
      quietPeriodMinutes: null,
    })
    clock = new Date(T0.getTime() + 40_000)
    expect(await pending()).toEqual({
      conversations: 1,
      nextDueAt: new Date(T0.getTime() + 25 * 60_000).toISOString(),
      quietPeriodMinutes: null,
    })
    expect(await pending('slow')).toMatchObject({ conversations: 1, quietPeriodMinutes: 30 })
    expect(await pending('off')).toEqual({ conversations: 0, nextDueAt: null, quietPeriodMinutes: null })
  })

  it('follows a change of the quiet period: shortened, the conversation past it waits no more', async () => {
    clock = T0
    const patched = await app.inject({
      method: 'PATCH',
      url: `/api/v1/chatbots/${bots.slow.id}`,
      headers: { cookie },
      payload: { settings: { signals: { abandonmentAfterMinutes: 2 } } },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    await projectAll(db.pool)
    expect(await pending('slow')).toEqual({ conversations: 0, nextDueAt: null, quietPeriodMinutes: 2 })
    expect(await pending()).toMatchObject({ conversations: 1, quietPeriodMinutes: null })
  })

  it("times the quiet period from the conversation's last end-user or assistant message, as the analysis does", async () => {
    // Regression: it was timed from the last message of any role, so a tool's (or a system) message after the
    // talk kept a conversation waiting whose abandonment detect.ts had already decided (it reads only the talk).
    await capture('quick', 'quick-tool-last', new Date(T0.getTime() - 5 * 60_000), {
      answer: 'Let me look it up.',
      after: [
        {
          id: 'm2',
          role: 'tool',
          content: '{"status":"out for delivery"}',
          sentAt: new Date(T0.getTime() - 10_000).toISOString(),
        },
      ],
    })
    await projectAll(db.pool)
    clock = T0
    expect(await pending('quick')).toEqual({
      conversations: 1,
      nextDueAt: new Date(T0.getTime() - 20_000 + 60_000).toISOString(),
      quietPeriodMinutes: 1,
    })
  })
})
