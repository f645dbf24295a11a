// Regression: in zones whose midnight is not on a UTC hour (Asia/Kolkata +05:30, Asia/Kathmandu +05:45) a
// range of whole local days ended half an hour into the day after, and its day buckets began with a stray
// partial day before the first one (a one-conversation "Nov 17"), so the figures, their buckets and the
// conversation list a figure links to disagreed with the days asked for.
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { analyze, type Bot, capture, newBot, newOrg } from '../../../test/support/analytics-seed.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'

// 00:10 on the 21st in Kolkata, 00:25 in Kathmandu: the current hour straddles local midnight.
const NOW = new Date('2026-11-20T18:40:00Z')

/** One end-user message per conversation, at these instants (local times: Kolkata / Kathmandu). */
const AT: Record<string, string> = {
  early: '2026-11-17T17:50:00Z', // 17th 23:20 / 23:35: before either range
  edge: '2026-11-17T18:10:00Z', // 17th 23:40 / 23:55: in the hour row (18:00Z) where the 18th's bucket starts
  kathmanduMidnight: '2026-11-17T18:15:00Z', // 17th 23:45 / 18th 00:00
  kolkataMidnight: '2026-11-17T18:30:00Z', // 18th 00:00 / 00:15
  last: '2026-11-19T17:59:00Z', // 19th 23:29 / 23:44
  late: '2026-11-19T18:20:00Z', // 19th 23:50 / 20th 00:05: in the hour row the 20th's bucket starts with
  after: '2026-11-19T18:30:00Z', // 20th 00:00 / 00:15
}

let db: TestDatabase
let app: FastifyInstance
let bot: Bot
const ids: Record<string, string> = {}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  bot = await newBot(app, await newOrg(app))
  for (const [name, at] of Object.entries(AT)) {
    ids[name] = await capture(app, bot, name, [['m0', 'user', at]])
    await analyze(db, bot, ids[name]!, [['m0', 0.5, 'positive', []]])
  }
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

async function get(url: string) {
  const res = await app.inject({ method: 'GET', url, headers: { cookie: bot.cookie } })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/**
 * What the dashboard shows for a range: the overview's range and count, the day buckets, and the
 * conversations of the list over the range its links carry (since/until; the list's `to` is inclusive).
 */
async function report(range: string, tz: string) {
  const query = `chatbotId=${bot.chatbotId}&${range}&tz=${encodeURIComponent(tz)}`
  const overview = await get(`/api/v1/analytics/overview?${query}`)
  const { points } = await get(`/api/v1/analytics/sentiment?${query}&interval=day`)
  const since = encodeURIComponent(overview.range.from)
  const until = encodeURIComponent(new Date(Date.parse(overview.range.to) - 1).toISOString())
  const list = await get(
    `/api/v1/conversations?chatbotId=${bot.chatbotId}&limit=100&from=${since}&to=${until}`,
  )
  const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]))
  return {
    range: overview.range,
    conversations: overview.totalConversations,
    days: (points as { bucket: string; count: number }[]).map((p) => [p.bucket, p.count]),
    listed: (list.conversations as { id: string }[]).map((c) => byId.get(c.id)).sort(),
  }
}

describe('ranges of whole local days in zones with half-hour and quarter-hour offsets', () => {
  it('in Asia/Kolkata, counts the 18th and 19th from 23:30 to 23:30, in two day buckets, as the list does', async () => {
    const r = await report('from=2026-11-17T18:30:00Z&to=2026-11-19T18:30:00Z', 'Asia/Kolkata')
    expect(r).toEqual({
      range: { from: '2026-11-17T18:00:00.000Z', to: '2026-11-19T18:00:00.000Z' },
      conversations: 4,
      days: [
        ['2026-11-17T18:30:00.000Z', 3],
        ['2026-11-18T18:30:00.000Z', 1],
      ],
      listed: ['edge', 'kathmanduMidnight', 'kolkataMidnight', 'last'],
    })
  })

  it('in Asia/Kathmandu, counts the 18th and 19th from 23:45 to 23:45, in two day buckets, as the list does', async () => {
    const r = await report('from=2026-11-17T18:15:00Z&to=2026-11-19T18:15:00Z', 'Asia/Kathmandu')
    expect(r).toEqual({
      range: { from: '2026-11-17T18:00:00.000Z', to: '2026-11-19T18:00:00.000Z' },
      conversations: 4,
      days: [
        ['2026-11-17T18:15:00.000Z', 3],
        ['2026-11-18T18:15:00.000Z', 1],
      ],
      listed: ['edge', 'kathmanduMidnight', 'kolkataMidnight', 'last'],
    })
  })

  it.each([
    ['Asia/Kolkata', '2026-11-13T18:30:00.000Z', '2026-11-20T18:30:00.000Z'],
    ['Asia/Kathmandu', '2026-11-13T18:15:00.000Z', '2026-11-20T18:15:00.000Z'],
  ])('over the last 7 days in %s, has no partial bucket before the first day', async (tz, first, today) => {
    const r = await report('days=7', tz)
    expect(r.range).toEqual({ from: '2026-11-13T18:00:00.000Z', to: '2026-11-20T19:00:00.000Z' })
    // The first bucket is the day the range starts in (its first hour ends after midnight), the last the
    // day it is now, eight in all; every conversation counts, and the list holds them.
    expect(r.days.map(([bucket]) => bucket)).toHaveLength(8)
    expect([r.days[0]![0], r.days.at(-1)![0]]).toEqual([first, today])
    expect(r.days.reduce((n, [, count]) => n + Number(count), 0)).toBe(7)
    expect(r.conversations).toBe(7)
    expect(r.listed).toHaveLength(7)
  })
})
