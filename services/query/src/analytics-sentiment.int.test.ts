import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  analyze,
  type Bot,
  capture,
  newBot,
  newOrg,
  type Seeded,
  seedAnalytics,
} from '../../../test/support/analytics-seed.ts'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { buildTestGateway } from '../../../test/support/gateway.ts'
import { projectAll } from '../../../test/support/projector.ts'
import { checkTimeZone } from './repositories/analytics.ts'

const NOW = new Date('2026-11-20T12:30:00Z')

let db: TestDatabase
let app: FastifyInstance
let seed: Seeded
/** A chatbot of its own organization, with messages around DST changes and local midnights. */
let zoned: Bot

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ app } = await buildTestGateway(db, {}, () => NOW))
  seed = await seedAnalytics(app, db)
  zoned = await newBot(app, await newOrg(app))
  const times = [
    // Europe/Berlin leaves summer time on 2026-10-25 (a 25-hour day) and enters it on 2026-03-29 (23 hours).
    '2026-10-24T21:30:00Z', // 24th 23:30 CEST
    '2026-10-24T22:30:00Z', // 25th 00:30 CEST
    '2026-10-25T22:30:00Z', // 25th 23:30 CET
    '2026-10-25T23:30:00Z', // 26th 00:30 CET
    '2026-03-28T22:30:00Z', // 28th 23:30 CET
    '2026-03-28T23:30:00Z', // 29th 00:30 CET
    '2026-03-29T21:30:00Z', // 29th 23:30 CEST
    '2026-03-29T22:30:00Z', // 30th 00:30 CEST
    '2026-11-18T18:45:00Z', // Asia/Kolkata: 19th 00:15, in the hour row of 18:00Z = 18th 23:30 local
  ]
  const id = await capture(
    app,
    zoned,
    'dst',
    times.map((at, i) => [`m${i}`, 'user', at]),
  )
  await analyze(
    db,
    zoned,
    id,
    times.map((_, i) => [`m${i}`, 0.5, 'positive', []]),
  )
  await projectAll(db.pool)
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

function sentiment(query: string, cookie = seed.a1.cookie) {
  return app.inject({ method: 'GET', url: `/api/v1/analytics/sentiment${query}`, headers: { cookie } })
}

async function points(query: string, cookie?: string) {
  const res = await sentiment(query, cookie)
  expect(res.statusCode, res.body).toBe(200)
  return res.json().points as { bucket: string; count: number; average: number | null }[]
}

const empty = (bucket: string) => ({ bucket, average: null, positive: 0, neutral: 0, negative: 0, count: 0 })

describe('GET /api/v1/analytics/sentiment', () => {
  it("answers a point per UTC day of the end users' messages, empty days included", async () => {
    // Hand computation from the seed (test/support/analytics-seed.ts); organization B's -1 on the 18th never counts, nor
    // does the assistant's message c1 m2 (0, neutral).
    const res = await sentiment('?from=2026-11-17T00:00:00Z&to=2026-11-21T00:00:00Z')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({
      ok: true,
      interval: 'day',
      role: 'user',
      range: { from: '2026-11-17T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z' },
      points: [
        empty('2026-11-17T00:00:00.000Z'),
        // (0.5 - 0.75 + 0.25 + 0.75) / 4
        {
          bucket: '2026-11-18T00:00:00.000Z',
          average: 0.1875,
          positive: 3,
          neutral: 0,
          negative: 1,
          count: 4,
        },
        // c3 at 03:00 (0) and c5 (1)
        { bucket: '2026-11-19T00:00:00.000Z', average: 0.5, positive: 1, neutral: 1, negative: 0, count: 2 },
        empty('2026-11-20T00:00:00.000Z'),
      ],
    })
  })

  it('buckets by local day in the given zone, each bucket starting at local midnight', async () => {
    // New York is UTC-5 in November: c3 at 03:00Z is 22:00 on the 18th there.
    expect(await points('?from=2026-11-17T00:00:00Z&to=2026-11-21T00:00:00Z&tz=America/New_York')).toEqual([
      empty('2026-11-16T05:00:00.000Z'),
      empty('2026-11-17T05:00:00.000Z'),
      { bucket: '2026-11-18T05:00:00.000Z', average: 0.15, positive: 3, neutral: 1, negative: 1, count: 5 },
      { bucket: '2026-11-19T05:00:00.000Z', average: 1, positive: 1, neutral: 0, negative: 0, count: 1 },
      empty('2026-11-20T05:00:00.000Z'),
    ])
  })

  it('covers the default 30 days with 31 consecutive days', async () => {
    const list = await points('')
    expect(list).toHaveLength(31)
    expect(list[0]?.bucket).toBe('2026-10-21T00:00:00.000Z')
    expect(list.at(-1)?.bucket).toBe('2026-11-20T00:00:00.000Z')
    list.forEach((p, i) => {
      expect(Date.parse(p.bucket)).toBe(Date.parse('2026-10-21T00:00:00Z') + i * 86_400_000)
    })
    expect(list.filter((p) => p.count > 0).map((p) => [p.bucket.slice(0, 10), p.count])).toEqual([
      ['2026-11-18', 4],
      ['2026-11-19', 2],
    ])
    expect(list.filter((p) => p.count === 0).every((p) => p.average === null)).toBe(true)
  })

  it("answers the assistant's messages apart with role=assistant", async () => {
    const res = await sentiment('?from=2026-11-18T00:00:00Z&to=2026-11-20T00:00:00Z&role=assistant')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      role: 'assistant',
      points: [
        { bucket: '2026-11-18T00:00:00.000Z', average: 0, positive: 0, neutral: 1, negative: 0, count: 1 },
        empty('2026-11-19T00:00:00.000Z'),
      ],
    })
  })

  it('narrows to one chatbot', async () => {
    expect(
      await points(`?chatbotId=${seed.a2.chatbotId}&from=2026-11-18T00:00:00Z&to=2026-11-20T00:00:00Z`),
    ).toEqual([
      { bucket: '2026-11-18T00:00:00.000Z', average: 0.75, positive: 1, neutral: 0, negative: 0, count: 1 },
      { bucket: '2026-11-19T00:00:00.000Z', average: 1, positive: 1, neutral: 0, negative: 0, count: 1 },
    ])
  })

  it('starts weeks on Monday', async () => {
    const list = await points('?from=2026-11-01T00:00:00Z&to=2026-11-30T00:00:00Z&interval=week')
    // 2026-11-01 is a Sunday: its week started on Monday 26 October.
    expect(list.map((p) => [p.bucket, p.count])).toEqual([
      ['2026-10-26T00:00:00.000Z', 0],
      ['2026-11-02T00:00:00.000Z', 0],
      ['2026-11-09T00:00:00.000Z', 0],
      ['2026-11-16T00:00:00.000Z', 6],
      ['2026-11-23T00:00:00.000Z', 0],
    ])
    // (0.5 - 0.75 + 0.25 + 0.75 + 0 + 1) / 6, to 4 decimals
    expect(list[3]?.average).toBe(0.2917)
  })

  it('answers UTC hour buckets for ranges up to 7 days, whatever the zone', async () => {
    const query = '?from=2026-11-18T09:00:00Z&to=2026-11-18T14:00:00Z&interval=hour'
    const expected = [
      empty('2026-11-18T09:00:00.000Z'),
      // (0.5 + 0.75) / 2: the assistant's 0 at 10:06 is not the end users'
      { bucket: '2026-11-18T10:00:00.000Z', average: 0.625, positive: 2, neutral: 0, negative: 0, count: 2 },
      { bucket: '2026-11-18T11:00:00.000Z', average: -0.25, positive: 1, neutral: 0, negative: 1, count: 2 },
      empty('2026-11-18T12:00:00.000Z'),
      // c1's 13:00 messages were never analyzed.
      empty('2026-11-18T13:00:00.000Z'),
    ]
    expect(await points(query)).toEqual(expected)
    expect(await points(`${query}&tz=America/New_York`)).toEqual(expected)
    // 7 days before 12:30 widen to 169 whole hours.
    const week = await points('?days=7&interval=hour')
    expect(week).toHaveLength(169)
    expect([week[0]?.bucket, week.at(-1)?.bucket]).toEqual([
      '2026-11-13T12:00:00.000Z',
      '2026-11-20T12:00:00.000Z',
    ])
  })

  it('follows daylight saving time: a 25-hour day in October, a 23-hour one in March', async () => {
    const counts = async (query: string) =>
      (await points(`${query}&tz=Europe/Berlin`, zoned.cookie)).map((p) => [p.bucket, p.count])
    expect(await counts('?from=2026-10-24T00:00:00%2B02:00&to=2026-10-27T00:00:00%2B01:00')).toEqual([
      ['2026-10-23T22:00:00.000Z', 1],
      ['2026-10-24T22:00:00.000Z', 2],
      ['2026-10-25T23:00:00.000Z', 1],
    ])
    expect(await counts('?from=2026-03-28T00:00:00%2B01:00&to=2026-03-31T00:00:00%2B02:00')).toEqual([
      ['2026-03-27T23:00:00.000Z', 1],
      ['2026-03-28T23:00:00.000Z', 2],
      ['2026-03-29T22:00:00.000Z', 1],
    ])
  })

  it('puts an hour row in the local day its last instant falls in, in zones with half-hour offsets', async () => {
    // The documented approximation: the hour row of 18:45Z (00:15 on the 19th in Kolkata) runs from 23:30 on
    // the 18th to 00:30 on the 19th, and counts in the 19th, whose day began at 18:30Z on the 18th.
    const list = await points(
      '?from=2026-11-18T00:00:00Z&to=2026-11-20T00:00:00Z&tz=Asia/Kolkata',
      zoned.cookie,
    )
    expect(list.map((p) => [p.bucket, p.count])).toEqual([
      ['2026-11-17T18:30:00.000Z', 0],
      ['2026-11-18T18:30:00.000Z', 1],
      ['2026-11-19T18:30:00.000Z', 0],
    ])
  })

  it('answers 401 without a session, and 404 for a chatbot not in the organization', async () => {
    const anonymous = await app.inject({ method: 'GET', url: '/api/v1/analytics/sentiment' })
    expect([anonymous.statusCode, anonymous.json().error.code]).toEqual([401, 'unauthorized'])
    for (const id of [seed.b1.chatbotId, randomUUID()]) {
      const res = await sentiment(`?chatbotId=${id}`)
      expect([res.statusCode, res.json().error.code]).toEqual([404, 'not_found'])
    }
  })

  it.each([
    ['?interval=month', '/interval'],
    ['?interval=hour', '/interval'],
    ['?interval=hour&days=8', '/interval'],
    ['?interval=hour&from=2026-11-01T00:00:00Z&to=2026-11-08T00:00:01Z', '/interval'],
    ['?days=400', '/days'],
    ['?tz=Nowhere/Special', '/tz'],
    ['?role=bot', '/role'],
  ])('answers 400 for %s', async (query, path) => {
    const res = await sentiment(query)
    expect(res.statusCode, res.body).toBe(400)
    const { error } = res.json()
    expect(error.code).toBe('invalid_request')
    expect(error.details).toEqual([expect.objectContaining({ path })])
    expect(error.details[0].in ?? 'querystring').toBe('querystring')
  })

  it('refuses a zone Postgres does not know even when Node does', async () => {
    const client = await db.readerPool.connect()
    try {
      await expect(checkTimeZone(client, 'Europe/Berlin')).resolves.toBeUndefined()
      await expect(checkTimeZone(client, 'Mars/Olympus')).rejects.toMatchObject({
        code: 'invalid_request',
        details: [{ path: '/tz', message: 'unknown time zone', in: 'querystring' }],
      })
    } finally {
      client.release()
    }
  })

  it('documents both endpoints in the OpenAPI document', async () => {
    const doc = (await app.inject('/api/v1/openapi.json')).json()
    for (const path of ['/api/v1/analytics/overview', '/api/v1/analytics/sentiment']) {
      const op = doc.paths[path].get
      expect(op.tags).toEqual(['analytics'])
      expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '500', '503'])
      const params = op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)
      expect(params).toEqual(
        expect.arrayContaining(['query:chatbotId', 'query:from', 'query:to', 'query:days', 'query:tz']),
      )
    }
    const interval = doc.paths['/api/v1/analytics/sentiment'].get.parameters.find(
      (p: { name: string }) => p.name === 'interval',
    )
    expect(interval.schema.enum).toEqual(['hour', 'day', 'week'])
  })
})
