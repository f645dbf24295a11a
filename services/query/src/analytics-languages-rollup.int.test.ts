import { UNDETERMINED_LANGUAGE } from '@cas/events'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyze, type Bot, capture, newBot, newOrg } from '../../../test/support/analytics-seed.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { LANGUAGES_FROM_MESSAGES } from '../../../test/support/derived-rollups.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'
import { resolveRange } from './analytics/range.ts'
import { languageFigures } from './repositories/languages.ts'

/**
 * The overview's languages come from the hourly rollup the projector keeps (rm_hourly_languages), no
 * longer from a read of the range's end-user messages (rm_messages): the answer must stay what that read
 * gave, for every filter (chatbot or organization, from/to off the hour, days, a time zone whose local
 * midnight is not on a UTC hour), across hour boundaries, and after a re-analysis and an erasure.
 */
const NOW = new Date('2026-11-20T20:30:00Z')

/** Each filter, as the query string (without chatbotId). */
const FILTERS = [
  '',
  '?days=1',
  '?from=2026-11-20T00:00:00.000Z&to=2026-11-20T11:00:00.000Z',
  '?from=2026-11-19T23:59:59.999Z&to=2026-11-20T10:59:59.999Z',
  '?from=2026-11-20T10:30:00Z&to=2026-11-20T10:45:00Z',
  '?from=2026-11-20T11:00:00Z&to=2026-11-20T18:30:00Z',
  '?from=2026-11-20T00:00:00%2B05:30&to=2026-11-21T00:00:00%2B05:30&tz=Asia/Kolkata',
  '?days=3&tz=America/St_Johns',
  '?from=2026-11-01T00:00:00Z&to=2026-11-15T00:00:00Z',
]

let db: TestDatabase
let app: FastifyInstance
let x: Bot
let y: Bot
let x2: string

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  const org = await newOrg(app)
  x = await newBot(app, org)
  y = await newBot(app, org)
  const speak = (bot: Bot, conversation: string, languages: [string, string | undefined][]) =>
    analyze(
      db,
      bot,
      conversation,
      languages.map(([messageId, language]) => [messageId, 0, 'neutral', [], language]),
    )
  // x1 (end user "gone", erased below): either side of midnight; the assistant's reply has a language too.
  const x1 = await capture(
    app,
    x,
    'x1',
    [
      ['u1', 'user', '2026-11-19T23:59:59.999Z'],
      ['u2', 'user', '2026-11-20T00:00:00.000Z'],
      ['a1', 'assistant', '2026-11-20T00:00:01.000Z'],
    ],
    'gone',
  )
  await speak(x, x1, [
    ['u1', 'es'],
    ['u2', 'fr'],
    ['a1', 'de'],
  ])
  // x2: the last and first instants of hours, "und", a result without a language, either side of 18:30
  // (local midnight in Asia/Kolkata).
  x2 = await capture(app, x, 'x2', [
    ['u1', 'user', '2026-11-20T10:00:00.000Z'],
    ['u2', 'user', '2026-11-20T10:59:59.999Z'],
    ['u3', 'user', '2026-11-20T11:00:00.000Z'],
    ['u4', 'user', '2026-11-20T11:30:00.000Z'],
    ['u5', 'user', '2026-11-20T18:29:59.999Z'],
    ['u6', 'user', '2026-11-20T18:30:00.000Z'],
  ])
  await speak(x, x2, [
    ['u1', 'en'],
    ['u2', 'es'],
    ['u3', UNDETERMINED_LANGUAGE],
    ['u4', undefined],
    ['u5', 'pt'],
    ['u6', 'pt'],
  ])
  // x3: the erased end user's other conversation, at noon.
  const x3 = await capture(app, x, 'x3', [['u1', 'user', '2026-11-20T12:00:00.000Z']], 'gone')
  await speak(x, x3, [['u1', 'it']])
  // y: its own chatbot, and a message two weeks back.
  const y1 = await capture(app, y, 'y1', [
    ['u1', 'user', '2026-11-20T10:20:00.000Z'],
    ['u2', 'user', '2026-11-20T11:40:00.000Z'],
    ['u3', 'user', '2026-11-10T05:00:00.000Z'],
  ])
  await speak(y, y1, [
    ['u1', 'es'],
    ['u2', 'en'],
    ['u3', 'de'],
  ])
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

async function overviewLanguages(query: string) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v1/analytics/overview${query}`,
    headers: { cookie: x.cookie },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().languages
}

/** The old read's figures for the same request: its range resolved as the route resolves it. */
async function readFromMessages(query: string, chatbotId: string | null) {
  const params = new URLSearchParams(query)
  const days = params.get('days')
  const range = resolveRange(
    {
      from: params.get('from') ?? undefined,
      to: params.get('to') ?? undefined,
      days: days === null ? undefined : Number(days),
    },
    NOW,
    params.get('tz') ?? 'UTC',
  )
  const { rows } = await db.pool.query<{ language: string; messages: number }>(LANGUAGES_FROM_MESSAGES, [
    x.orgId,
    range.from,
    range.to,
    chatbotId,
  ])
  return languageFigures(rows)
}

/** Every filter, of the organization and of each chatbot: the API's answer beside the old read's. */
async function bothReads() {
  const answers: { query: string; api: unknown; messages: unknown }[] = []
  for (const chatbotId of [null, x.chatbotId, y.chatbotId]) {
    for (const filter of FILTERS) {
      const query = chatbotId === null ? filter : `${filter || '?'}${filter ? '&' : ''}chatbotId=${chatbotId}`
      answers.push({
        query,
        api: await overviewLanguages(query),
        messages: await readFromMessages(query, chatbotId),
      })
    }
  }
  return answers
}

describe("the overview's languages from the hourly rollup", () => {
  it('answers what the read of the messages answered, for every filter and hour boundary', async () => {
    const answers = await bothReads()
    for (const a of answers) expect(a.api, a.query).toEqual(a.messages)
    // Not an empty comparison: the organization's 30 days count es 3, en 2, pt 2, fr, it, de (y's, two
    // weeks back); the 23:59:59.999 message is in a range from 23:59:59.999 (rounded down), not from midnight.
    expect(await overviewLanguages('')).toEqual({
      detected: 10,
      notEnglish: 8,
      notEnglishShare: 0.8,
      mainOther: { language: 'es', messages: 3 },
    })
    expect((await overviewLanguages(FILTERS[2]!)).detected).toBe(4)
    expect((await overviewLanguages(FILTERS[3]!)).detected).toBe(5)
    expect(answers.filter((a) => (a.api as { detected: number }).detected > 0).length).toBeGreaterThan(20)
  })

  it('follows a re-analysis that detects another language, and one whose result says none', async () => {
    // When x2's English message is read as Spanish, and its Spanish one re-analysed without a language
    await analyze(db, x, x2, [
      ['u1', 0, 'neutral', [], 'es'],
      ['u2', 0, 'neutral', []],
    ])
    await projectAll(db.pool)
    // Then the English one counts as Spanish, the other stays Spanish; both reads agree everywhere
    expect(await overviewLanguages(`?chatbotId=${x.chatbotId}`)).toEqual({
      detected: 7,
      notEnglish: 7,
      notEnglishShare: 1,
      mainOther: { language: 'es', messages: 3 },
    })
    for (const a of await bothReads()) expect(a.api, a.query).toEqual(a.messages)
  })

  it("takes an erased end user's messages out, as the rest of the overview", async () => {
    // When the end user "gone" is erased (x1: es, fr; x3: it)
    const res = await app.inject({
      method: 'DELETE',
      url: `/api/v1/chatbots/${x.chatbotId}/users/gone`,
      headers: { cookie: x.cookie },
    })
    expect(res.statusCode, res.body).toBe(200)
    await projectAll(db.pool)
    // Then x2's es 2 and pt 2 are left, and no hour of the rollup keeps a count of theirs
    expect(await overviewLanguages(`?chatbotId=${x.chatbotId}`)).toEqual({
      detected: 4,
      notEnglish: 4,
      notEnglishShare: 1,
      mainOther: { language: 'es', messages: 2 },
    })
    const { rows } = await db.pool.query(
      `SELECT language FROM rm_hourly_languages WHERE chatbot_id = $1 AND language IN ('fr', 'it')`,
      [x.chatbotId],
    )
    expect(rows).toEqual([])
    for (const a of await bothReads()) expect(a.api, a.query).toEqual(a.messages)
  })
})
