import { UNDETERMINED_LANGUAGE } from '@cas/events'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyze, type Bot, capture, newBot, newOrg } from '../../../test/support/analytics-seed.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'

/**
 * The overview's languages: the share of the range's end-user messages detected in a language other than
 * English, and the main one (trial6: a Spanish chatbot's figures were shown as if the analysis read them).
 */
const NOW = new Date('2026-11-20T12:30:00Z')
const IN_RANGE = '2026-11-20T10:00:00.000Z'
const BEFORE_RANGE = '2026-09-01T10:00:00.000Z'

let db: TestDatabase
let app: FastifyInstance
let spanish: Bot
let english: Bot

/** Appends results saying each message's language (undefined: the result says none, as a v3 one). */
function analyzeLanguages(bot: Bot, conversation: string, languages: [string, string | undefined][]) {
  return analyze(
    db,
    bot,
    conversation,
    languages.map(([messageId, language]) => [messageId, 0, 'neutral', [], language]),
  )
}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  const org = await newOrg(app)
  spanish = await newBot(app, org)
  english = await newBot(app, org)
  // Spanish bot: five end-user messages in range (es, es, es, de, en), one "und", one assistant
  // message, and one Spanish message before the range.
  const es1 = await capture(app, spanish, 'es-1', [
    ['u1', 'user', IN_RANGE],
    ['a1', 'assistant', IN_RANGE],
    ['u2', 'user', IN_RANGE],
    ['u3', 'user', IN_RANGE],
  ])
  await analyzeLanguages(spanish, es1, [
    ['u1', 'es'],
    ['a1', undefined],
    ['u2', 'es'],
    ['u3', UNDETERMINED_LANGUAGE],
  ])
  const es2 = await capture(app, spanish, 'es-2', [
    ['u1', 'user', IN_RANGE],
    ['u2', 'user', IN_RANGE],
    ['u3', 'user', IN_RANGE],
  ])
  await analyzeLanguages(spanish, es2, [
    ['u1', 'es'],
    ['u2', 'de'],
    ['u3', 'en'],
  ])
  const old = await capture(app, spanish, 'es-old', [['u1', 'user', BEFORE_RANGE]])
  await analyzeLanguages(spanish, old, [['u1', 'es']])
  // English bot: three English messages, one not analysed for its language (recorded before v4).
  const en1 = await capture(app, english, 'en-1', [
    ['u1', 'user', IN_RANGE],
    ['u2', 'user', IN_RANGE],
    ['u3', 'user', IN_RANGE],
    ['u4', 'user', IN_RANGE],
  ])
  await analyzeLanguages(english, en1, [
    ['u1', 'en'],
    ['u2', 'en'],
    ['u3', 'en'],
    ['u4', undefined],
  ])
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

async function languages(query: string, bot: Bot) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/analytics/overview${query}`,
    headers: { cookie: bot.cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().languages
}

describe("GET /api/v1/analytics/overview's languages", () => {
  it("gives one chatbot's share of detected end-user messages not in English, and the main other language", async () => {
    // es, es, es, de, en in range: 4 of 5 not English; "und", the assistant and the older message do not count.
    expect(await languages(`?chatbotId=${spanish.chatbotId}`, spanish)).toEqual({
      detected: 5,
      notEnglish: 4,
      notEnglishShare: 0.8,
      mainOther: { language: 'es', messages: 3 },
    })
    expect(await languages(`?chatbotId=${english.chatbotId}`, english)).toEqual({
      detected: 3,
      notEnglish: 0,
      notEnglishShare: 0,
      mainOther: null,
    })
  })

  it("sums the organization's chatbots without chatbotId, and counts the older message in a range that has it", async () => {
    expect(await languages('', spanish)).toEqual({
      detected: 8,
      notEnglish: 4,
      notEnglishShare: 0.5,
      mainOther: { language: 'es', messages: 3 },
    })
    expect(
      await languages(
        `?chatbotId=${spanish.chatbotId}&from=2026-08-01T00:00:00Z&to=2026-09-30T00:00:00Z`,
        spanish,
      ),
    ).toEqual({ detected: 1, notEnglish: 1, notEnglishShare: 1, mainOther: { language: 'es', messages: 1 } })
  })

  it('says null where no message had its language detected, and shows another organization nothing of these', async () => {
    const other = await newBot(app, await newOrg(app))
    expect(await languages('', other)).toEqual({
      detected: 0,
      notEnglish: 0,
      notEnglishShare: null,
      mainOther: null,
    })
  })
})
