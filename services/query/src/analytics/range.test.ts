import { AppError } from '@cas/http'
import { describe, expect, it } from 'vitest'
import { analyticsQuery, checkInterval, resolveRange, sentimentQuery } from './range.ts'

const NOW = new Date('2026-11-20T12:30:00Z')

function rejection(fn: () => unknown) {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    const e = err as AppError
    return { code: e.code, details: e.details }
  }
  throw new Error('expected a rejection')
}

describe('resolveRange', () => {
  it('defaults to the 30 days before now, widened to whole hours', () => {
    const r = resolveRange({}, NOW)
    expect(r.from.toISOString()).toBe('2026-10-21T12:00:00.000Z')
    expect(r.to.toISOString()).toBe('2026-11-20T13:00:00.000Z')
    expect(r.requestedMs).toBe(30 * 86_400_000)
  })

  it('counts days back from to, and keeps range ends already on the hour', () => {
    const r = resolveRange({ to: '2026-11-19T09:00:00+02:00', days: 2 }, NOW)
    expect(r.from.toISOString()).toBe('2026-11-17T07:00:00.000Z')
    expect(r.to.toISOString()).toBe('2026-11-19T07:00:00.000Z')
  })

  it('rounds from down and to up to the UTC hour', () => {
    const r = resolveRange({ from: '2026-11-18T10:59:59.999Z', to: '2026-11-18T11:00:00.001Z' }, NOW)
    expect([r.from.toISOString(), r.to.toISOString()]).toEqual([
      '2026-11-18T10:00:00.000Z',
      '2026-11-18T12:00:00.000Z',
    ])
  })

  it('lets to default to now when only from is given', () => {
    const r = resolveRange({ from: '2026-11-20T01:15:00Z' }, NOW)
    expect(r.to.toISOString()).toBe('2026-11-20T13:00:00.000Z')
  })

  // Regression: a custom range in Asia/Kolkata (local midnights at :30 UTC) ended at 00:30 the day after its
  // last day, half an hour into a day bucket the range did not show.
  it.each([
    [
      'Asia/Kolkata',
      '2026-11-19T18:30:00Z',
      '2026-11-21T18:30:00Z',
      '2026-11-19T18:00:00.000Z',
      '2026-11-21T18:00:00.000Z',
    ],
    [
      'Asia/Kathmandu',
      '2026-11-19T18:15:00Z',
      '2026-11-21T18:15:00Z',
      '2026-11-19T18:00:00.000Z',
      '2026-11-21T18:00:00.000Z',
    ],
    [
      'America/St_Johns',
      '2026-11-20T03:30:00Z',
      '2026-11-22T03:30:00Z',
      '2026-11-20T03:00:00.000Z',
      '2026-11-22T03:00:00.000Z',
    ],
    [
      'Australia/Adelaide',
      '2026-11-19T13:30:00Z',
      '2026-11-21T13:30:00Z',
      '2026-11-19T13:00:00.000Z',
      '2026-11-21T13:00:00.000Z',
    ],
  ])(
    'in %s, rounds both ends of a range of whole local days down to the hour of their midnight',
    (tz, from, to, f, t) => {
      const r = resolveRange({ from, to }, NOW, tz)
      expect([r.from.toISOString(), r.to.toISOString()]).toEqual([f, t])
    },
  )

  it('rounds a to that is not a local midnight up, and never down to an empty range', () => {
    const kolkata = (q: { from?: string; to?: string; days?: number }) => {
      const r = resolveRange(q, NOW, 'Asia/Kolkata')
      return [r.from.toISOString(), r.to.toISOString()]
    }
    expect(kolkata({ from: '2026-11-19T18:30:00Z', to: '2026-11-20T18:29:00Z' })).toEqual([
      '2026-11-19T18:00:00.000Z',
      '2026-11-20T19:00:00.000Z',
    ])
    expect(kolkata({ from: '2026-11-19T18:10:00Z', to: '2026-11-19T18:30:00Z' })).toEqual([
      '2026-11-19T18:00:00.000Z',
      '2026-11-19T19:00:00.000Z',
    ])
    // A range up to now keeps the current hour, whatever the zone.
    expect(kolkata({ days: 7 })).toEqual(['2026-11-13T12:00:00.000Z', '2026-11-20T13:00:00.000Z'])
    // The same instant is no midnight in UTC.
    const utc = resolveRange({ from: '2026-11-19T18:30:00Z', to: '2026-11-20T18:30:00Z' }, NOW)
    expect(utc.to.toISOString()).toBe('2026-11-20T19:00:00.000Z')
  })

  it('accepts exactly 365 days and refuses one millisecond more', () => {
    expect(resolveRange({ days: 365 }, NOW).requestedMs).toBe(365 * 86_400_000)
    expect(
      resolveRange({ from: '2025-11-20T12:30:00Z', to: '2026-11-20T12:30:00Z' }, NOW).from.toISOString(),
    ).toBe('2025-11-20T12:00:00.000Z')
    expect(
      rejection(() => resolveRange({ from: '2025-11-20T12:29:59.999Z', to: '2026-11-20T12:30:00Z' }, NOW)),
    ).toEqual({
      code: 'invalid_request',
      details: [{ path: '/from', message: 'the range is longer than 365 days', in: 'querystring' }],
    })
  })

  it('counts 365 local days across a change of clocks as 365 days, and days=365 as 365 days in any zone', () => {
    // 2025-11-02 00:00 EDT to 2026-11-02 00:00 EST: 365 days and an hour pass, the clocks show 365 days.
    const range = { from: '2025-11-02T00:00:00-04:00', to: '2026-11-02T00:00:00-05:00' }
    expect(resolveRange(range, NOW, 'America/New_York').requestedMs).toBe(365 * 86_400_000)
    expect(rejection(() => resolveRange(range, NOW, 'UTC')).details).toEqual([
      { path: '/from', message: 'the range is longer than 365 days', in: 'querystring' },
    ])
    // A year back from a summer day to a winter one: 365 days pass, the clocks show 365 days and an hour.
    const summer = new Date('2026-07-01T12:00:00Z')
    expect(resolveRange({ days: 365 }, summer, 'America/New_York').requestedMs).toBe(365 * 86_400_000)
  })

  it.each([
    [{ from: '2026-11-18T10:00:00Z', to: '2026-11-18T10:00:00Z' }, '/from', 'must be before to'],
    [{ from: '2026-11-18T11:00:00Z', to: '2026-11-18T10:00:00Z' }, '/from', 'must be before to'],
    [{ from: '2026-11-21T00:00:00Z' }, '/from', 'must be before to'],
    [{ from: '2026-11-18T10:00:00Z', days: 3 }, '/days', 'days cannot be combined with from'],
    [{ from: '1969-12-31T23:00:00Z', to: '1970-01-02T00:00:00Z' }, '/from', 'must be between 1970 and 9999'],
    [{ to: '9999-06-01T00:00:00Z' }, '/to', 'must be between 1970 and 9999'],
  ])('refuses %j', (query, path, message) => {
    expect(rejection(() => resolveRange(query, NOW))).toEqual({
      code: 'invalid_request',
      details: [{ path, message, in: 'querystring' }],
    })
  })
})

describe('checkInterval', () => {
  const week = resolveRange({ days: 7 }, NOW)
  const longer = resolveRange({ from: '2026-11-13T12:29:00Z' }, NOW)

  it('allows hour buckets up to 7 days, and day and week buckets for any range', () => {
    expect(() => checkInterval('hour', week)).not.toThrow()
    expect(() => checkInterval('day', longer)).not.toThrow()
    expect(() => checkInterval('week', resolveRange({ days: 365 }, NOW))).not.toThrow()
  })

  it('refuses hour buckets beyond 7 days', () => {
    expect(rejection(() => checkInterval('hour', longer)).details).toEqual([
      { path: '/interval', message: 'hour buckets need a range of at most 7 days', in: 'querystring' },
    ])
  })

  // Seven local days across a change of clocks are 169 hours when the clocks go back (168 in UTC would
  // be refused at 169): the dashboard offers hours for them, so the API must take them.
  it.each([
    ['America/New_York', '2026-10-29T00:00:00-04:00', '2026-11-05T00:00:00-05:00'],
    ['Australia/Sydney', '2026-04-01T00:00:00+11:00', '2026-04-08T00:00:00+10:00'],
    ['Australia/Sydney', '2026-10-01T00:00:00+10:00', '2026-10-08T00:00:00+11:00'],
  ])('allows hour buckets over 7 local days of %s across a change of clocks (%s – %s)', (tz, from, to) => {
    expect(() => checkInterval('hour', resolveRange({ from, to }, NOW, tz))).not.toThrow()
    // The same instants are 169 (or 167) hours apart: in UTC, 169 are more than 7 days.
    const utc = () => checkInterval('hour', resolveRange({ from, to }, NOW, 'UTC'))
    if (Date.parse(to) - Date.parse(from) > 7 * 86_400_000) expect(utc).toThrow()
    else expect(utc).not.toThrow()
  })

  it('refuses 7 local days and an hour across a change of clocks', () => {
    const range = resolveRange(
      { from: '2026-10-29T00:00:00-04:00', to: '2026-11-05T01:00:00-05:00' },
      NOW,
      'America/New_York',
    )
    expect(() => checkInterval('hour', range)).toThrow()
  })
})

describe('query schemas', () => {
  it('defaults tz to UTC and interval to day', () => {
    expect(sentimentQuery.parse({})).toEqual({ tz: 'UTC', interval: 'day' })
  })

  it.each(['UTC', 'America/New_York', 'europe/berlin', 'Asia/Kolkata', 'Etc/GMT+5'])(
    'accepts the zone %s',
    (tz) => {
      expect(analyticsQuery.safeParse({ tz }).success).toBe(true)
    },
  )

  it.each(['Mars/Olympus', '+05:00', 'UTC+5', '', 'America/New_York; DROP TABLE x'])(
    'refuses the zone %j',
    (tz) => {
      const result = analyticsQuery.safeParse({ tz })
      expect(result.error?.issues.map((i) => i.path)).toEqual([['tz']])
    },
  )

  it('coerces days from the query string and bounds it to 1..365', () => {
    expect(analyticsQuery.parse({ days: '7' }).days).toBe(7)
    for (const days of ['0', '366', '1.5', 'x'])
      expect(analyticsQuery.safeParse({ days }).success).toBe(false)
  })

  it('refuses unknown parameters, and interval on the overview', () => {
    expect(analyticsQuery.safeParse({ interval: 'day' }).success).toBe(false)
    expect(sentimentQuery.safeParse({ bucket: 'day' }).success).toBe(false)
  })
})
