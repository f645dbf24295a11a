import { randomUUID } from 'node:crypto'
import { withOrgScope } from '@cas/db'
import { BUILTIN_SIGNAL_NAMES } from '@cas/events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { readSignals, type SignalsReport } from './repositories/signals.ts'

// Regression (issue 32): the signals report counted a signal turned off for a chatbot from conversations
// analysed before ("Frustration 3 (9.7 %)" for a chatbot with frustration off), and rated a custom signal
// added later over every conversation of the range, those analysed before it existed included ("2 of 31").

const T0 = new Date('2026-11-01T00:00:00Z')
const ADDED = new Date('2026-11-10T00:00:00Z')
const DAY = 86_400_000
const DISCOUNT = 'custom:asks-for-a-discount'
let db: TestDatabase
const org = randomUUID()
const [bot, other] = [randomUUID(), randomUUID()]

/** A period of a signal, as the projector keeps them from the chatbot's events (rm_signal_periods). */
async function period(chatbotId: string, signal: string, on: Date | 'creation', version: number, off?: Date) {
  await db.pool.query(
    `INSERT INTO rm_signal_periods (org_id, chatbot_id, signal, on_since, since_creation, on_version, off_since,
                                    off_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      org,
      chatbotId,
      signal,
      on === 'creation' ? T0 : on,
      on === 'creation',
      version,
      off ?? null,
      off === undefined ? null : version + 1,
    ],
  )
}

/** A conversation with its last message at `lastAt`, its signals decided at `decidedAt` (null: never). */
async function conversation(
  chatbotId: string,
  lastAt: Date,
  signals: string[],
  topics: string[] = [],
  decidedAt: Date | null = lastAt,
) {
  const id = randomUUID()
  await db.pool.query(
    `INSERT INTO rm_conversations (id, org_id, chatbot_id, external_id, message_count, first_message_at,
                                  last_message_at, created_at, updated_at, topics, stream_version)
     VALUES ($1, $2, $3, $4, 2, $5, $5, $5, $5, $6, 2)`,
    [id, org, chatbotId, `c-${id}`, lastAt, topics],
  )
  for (const s of signals) {
    await db.pool.query(
      `INSERT INTO rm_conversation_signals (org_id, chatbot_id, conversation_id, signal, label, confidence,
                                            evidence, analyzer)
       VALUES ($1, $2, $3, $4, $5, 0.8, '{}', 'test')`,
      [org, chatbotId, id, s, s === DISCOUNT ? 'Asks for a discount' : null],
    )
  }
  if (decidedAt !== null) {
    await db.pool.query(
      `INSERT INTO rm_signals_decided (conversation_id, org_id, chatbot_id, decided_at) VALUES ($1, $2, $3, $4)`,
      [id, org, chatbotId, decidedAt],
    )
  }
  return id
}

const read = (chatbotId?: string): Promise<SignalsReport> =>
  withOrgScope(db.readerPool, org, (client) =>
    readSignals(
      client,
      { orgId: org, chatbotId, from: T0, to: new Date(T0.getTime() + 30 * DAY) },
      'day',
      'UTC',
      10,
    ),
  )
const figure = (report: SignalsReport, name: string) => report.signals.find((s) => s.name === name)

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [org, 'o', T0])
  const discount = { label: 'Asks for a discount', examples: ['any coupon?'] }
  for (const [id, settings] of [
    [bot, { signals: { disabled: ['frustration'], custom: [discount] } }],
    [other, {}],
  ] as const) {
    await db.pool.query(
      `INSERT INTO rm_chatbots (id, org_id, name, api_key_prefix, settings, created_at, stream_version)
       VALUES ($1, $2, 'bot', 'k', $3, $4, 1)`,
      [id, org, JSON.stringify(settings), T0],
    )
  }
  // The custom signal added on ADDED, and frustration turned off the day after; the other chatbot's
  // signals on since its creation, resolution turned off between its two conversations and on again
  // after them.
  for (const signal of BUILTIN_SIGNAL_NAMES) {
    if (signal !== 'frustration') await period(bot, signal, 'creation', 1)
    if (signal !== 'resolution') await period(other, signal, 'creation', 1)
  }
  await period(bot, 'frustration', 'creation', 1, new Date(ADDED.getTime() + DAY))
  await period(bot, DISCOUNT, ADDED, 3)
  await period(other, 'resolution', 'creation', 1, new Date(T0.getTime() + 5.5 * DAY))
  await period(other, 'resolution', new Date(T0.getTime() + 20 * DAY), 3)
  // The chatbot: 4 conversations before the custom signal (one frustrated, one bot failure), 2 after (one
  // with the custom signal); the other chatbot: 2 conversations, one frustrated.
  const before = (d: number) => new Date(T0.getTime() + d * DAY)
  await conversation(bot, before(1), ['frustration', 'escalation'], ['billing'])
  await conversation(bot, before(2), ['bot_failure'], ['billing'])
  await conversation(bot, before(3), [])
  await conversation(bot, before(4), [])
  await conversation(bot, new Date(ADDED.getTime() + 2 * DAY), [DISCOUNT])
  await conversation(bot, new Date(ADDED.getTime() + 3 * DAY), [])
  await conversation(other, before(5), ['frustration'])
  await conversation(other, before(6), [])
})

afterAll(async () => {
  await db?.drop()
})

describe('signals turned off or added later', () => {
  it("shows a signal turned off for the chatbot as off, without the old conversations' counts", async () => {
    const report = await read(bot)
    expect(figure(report, 'frustration')).toMatchObject({
      enabled: false,
      conversations: 0,
      conversationsChecked: 0,
      rate: 0,
    })
    expect(figure(report, 'bot_failure')).toMatchObject({
      enabled: true,
      conversations: 1,
      conversationsChecked: 6,
    })
    // Nor in the knowledge gaps per topic, nor in Needs attention.
    expect(report.topics.find((t) => t.id === 'billing')?.signals).toMatchObject({
      frustration: { conversations: 0, rate: 0 },
      escalation: { conversations: 1, rate: 0.5 },
      bot_failure: { conversations: 1, rate: 0.5 },
    })
  })

  it('rates a custom signal added later over the conversations checked for it', async () => {
    const report = await read(bot)
    expect(figure(report, DISCOUNT)).toMatchObject({
      label: 'Asks for a discount',
      enabled: true,
      conversations: 1,
      conversationsChecked: 2,
      rate: 0.5,
    })
    const days = figure(report, DISCOUNT)!.trend.filter((p) => p.conversationsChecked > 0)
    expect(days.map((p) => [p.conversations, p.conversationsChecked, p.rate])).toEqual([
      [1, 1, 1],
      [0, 1, 0],
    ])
  })

  it('counts a signal for the organization over the chatbots where it is on', async () => {
    const report = await read()
    expect(report.conversations).toBe(8)
    expect(figure(report, 'frustration')).toMatchObject({
      enabled: true,
      conversations: 1,
      conversationsChecked: 2,
      rate: 0.5,
    })
    expect(figure(report, DISCOUNT)).toMatchObject({ conversations: 1, conversationsChecked: 2 })
  })

  it('counts as checked the conversations of an earlier period of a signal turned off and on again', async () => {
    expect(figure(await read(other), 'resolution')).toMatchObject({
      enabled: true,
      conversations: 0,
      conversationsChecked: 1,
    })
  })

  it('counts every conversation as checked for the custom signal once a re-analysis after it has finished', async () => {
    await db.pool.query(
      `INSERT INTO rm_reanalysis (org_id, chatbot_id, reanalysis_id, status, analyzer, done, failed, total,
                                  started_at, finished_at)
       VALUES ($1, $2, $3, 'finished', 'local', 6, 0, 6, $4, $4)`,
      [org, bot, randomUUID(), new Date(ADDED.getTime() + 4 * DAY)],
    )
    expect(figure(await read(bot), DISCOUNT)).toMatchObject({ conversations: 1, conversationsChecked: 6 })
    await db.pool.query('DELETE FROM rm_reanalysis WHERE chatbot_id = $1', [bot])
  })

  // Regression (issue 32): a conversation counted as checked when its last message fell in a period the
  // signal was on, though its signals were decided when it was analysed: one captured (or imported) just
  // after the signal was turned off, its last message before, never got it, and counted as checked once
  // the signal was back on ("8/30" where "8/28" was right).
  it('counts a conversation as checked when its signals were decided while the signal was on, not by its last message', async () => {
    const day = (d: number) => new Date(T0.getTime() + d * DAY)
    const added = [
      // Its last message while resolution was on, analysed while it was off: not checked.
      await conversation(other, day(5), [], [], day(7)),
      // Its last message while resolution was off, analysed once it was on again: checked.
      await conversation(other, day(10), [], [], day(21)),
      // Never analysed: checked for no signal.
      await conversation(other, day(3), [], [], null),
    ]
    try {
      const report = await read(other)
      expect(figure(report, 'resolution')).toMatchObject({ conversations: 0, conversationsChecked: 2 })
      expect(figure(report, 'frustration')).toMatchObject({ conversations: 1, conversationsChecked: 4 })
    } finally {
      await db.pool.query('DELETE FROM rm_signals_decided WHERE conversation_id = ANY($1::uuid[])', [added])
      await db.pool.query('DELETE FROM rm_conversations WHERE id = ANY($1::uuid[])', [added])
    }
  })
})
