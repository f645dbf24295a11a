import { AppError } from '@cas/http'
import { z } from 'zod'

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS
export const DEFAULT_DAYS = 30
/** spec.md: analytics look back at most 365 days. */
export const MAX_RANGE_DAYS = 365
/** Hour buckets only for short ranges: at most 7 × 24 (+1 for rounding) points. */
export const MAX_HOURLY_RANGE_DAYS = 7
// Timestamps outside these years would not survive the round trip through Postgres and toISOString.
const EARLIEST_MS = Date.UTC(1970, 0, 1)
const LATEST_MS = Date.UTC(9999, 0, 1)

/**
 * An IANA zone name Node knows. Names only: offsets and POSIX strings ("UTC+5", which Postgres reads as
 * five hours *west*) are refused here. Postgres has its own zone database, so the repository also checks
 * that AT TIME ZONE accepts the name (see checkTimeZone).
 */
function isZoneName(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz)) return false
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

const timestamp = z.iso.datetime({ offset: true })

/** Query parameters both analytics endpoints take (API.md "Analytics"). Unknown parameters are refused. */
export const analyticsQuery = z.strictObject({
  chatbotId: z.uuid().optional().describe("One of the organization's chatbots; else the whole organization."),
  from: timestamp.optional().describe('Range start, ISO 8601 with a zone; rounded down to the UTC hour.'),
  to: timestamp
    .optional()
    .describe(
      'Range end (exclusive), ISO 8601 with a zone; rounded up to the UTC hour, but a local midnight of `tz` ' +
        'rounds down, as a day bucket starts there. Default: now.',
    ),
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_RANGE_DAYS)
    .optional()
    .describe(
      `Range length before \`to\` in days of 24 hours, when \`from\` is not given (default ${DEFAULT_DAYS}). ` +
        'Across a change of clocks that is an hour more or less than as many local days: give `from` and ' +
        '`to` at local midnights for whole days of `tz`.',
    ),
  tz: z
    .string()
    .max(64)
    .refine(isZoneName, 'unknown time zone')
    .default('UTC')
    .describe('IANA time zone of day and week buckets (default UTC).'),
})

export const sentimentQuery = analyticsQuery.extend({
  interval: z
    .enum(['hour', 'day', 'week'])
    .default('day')
    .describe(
      `Bucket size; \`hour\` only for ranges of at most ${MAX_HOURLY_RANGE_DAYS} days (as \`tz\`'s clocks count ` +
        'them, so 7 local days are 169 hours when the clocks go back). Weeks start on Monday.',
    ),
})

export type Interval = z.output<typeof sentimentQuery>['interval']

export const sentimentRoleQuery = sentimentQuery.extend({
  role: z
    .enum(['user', 'assistant'])
    .default('user')
    .describe("Whose messages: the end users' (default) or the assistant's."),
})

export const topicsQuery = sentimentQuery.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(20)
    .describe('Topics returned at most (default 20).'),
})

export interface ResolvedRange {
  /** Inclusive, on a whole UTC hour. */
  readonly from: Date
  /** Exclusive, on a whole UTC hour. */
  readonly to: Date
  /**
   * The length of the range as asked for, before rounding: the limits apply to it. It is the shorter of the
   * time that passes and the time `tz`'s clocks show, so that 7 local days across a change of clocks (169
   * hours when they go back) count as 7 days, as the dashboard's day picker offers them.
   */
  readonly requestedMs: number
}

/** A 400 naming one query parameter, shaped like the ones the schema validation produces. */
export function invalidQuery(param: string, message: string): AppError {
  return new AppError('invalid_request', 'The request querystring is invalid.', [
    { path: `/${param}`, message, in: 'querystring' },
  ])
}

/**
 * Whether an instant is a local midnight in `tz`. In zones whose offset is not whole hours (Asia/Kolkata,
 * +05:30; Asia/Kathmandu, +05:45; America/St_Johns, −03:30) a local midnight is not on a UTC hour.
 */
function isLocalMidnight(ms: number, tz: string): boolean {
  return ms % 1000 === 0 && localClockMs(ms, tz) % 86_400_000 === 0
}

/** What `tz`'s clocks show at an instant, as milliseconds since 1970 of that wall-clock time read as UTC. */
function localClockMs(ms: number, tz: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms))
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value)
  const clock = Date.UTC(
    part('year'),
    part('month') - 1,
    part('day'),
    part('hour'),
    part('minute'),
    part('second'),
  )
  return clock + (ms % 1000)
}

/**
 * The range a request covers. `to` defaults to now, `from` to `days` (default 30) before `to`; `days`
 * together with `from` is ambiguous and refused. The rollups are per UTC hour, so the range widens to
 * whole hours: `from` rounds down, `to` rounds up (the current hour counts). One exception keeps ranges of
 * whole local days whole: a day (week) bucket of `tz` starts at the hour its local midnight falls in
 * (repositories/analytics.ts, BUCKETS), so a `to` on a local midnight rounds down to that hour too, and a
 * custom range in Asia/Kolkata ends where its last day's bucket does (23:30 local), not half an hour into
 * a day it does not show. The 365-day limit applies to the range as asked, so `days=365` stays valid
 * whatever the time of day.
 */
export function resolveRange(
  query: { from?: string | undefined; to?: string | undefined; days?: number | undefined },
  now: Date,
  tz = 'UTC',
): ResolvedRange {
  if (query.days !== undefined && query.from !== undefined) {
    throw invalidQuery('days', 'days cannot be combined with from')
  }
  const to = query.to === undefined ? now.getTime() : Date.parse(query.to)
  const from = query.from === undefined ? to - (query.days ?? DEFAULT_DAYS) * DAY_MS : Date.parse(query.from)
  // `to` first: a `from` derived from a bad `to` is not the caller's mistake.
  for (const [param, ms] of [
    ['to', to],
    ['from', from],
  ] as const) {
    if (!(ms >= EARLIEST_MS && ms < LATEST_MS)) throw invalidQuery(param, 'must be between 1970 and 9999')
  }
  if (from >= to) throw invalidQuery('from', 'must be before to')
  const requestedMs = Math.min(to - from, localClockMs(to, tz) - localClockMs(from, tz))
  if (requestedMs > MAX_RANGE_DAYS * DAY_MS) {
    throw invalidQuery('from', `the range is longer than ${MAX_RANGE_DAYS} days`)
  }
  const fromHour = Math.floor(from / HOUR_MS) * HOUR_MS
  let toHour = Math.ceil(to / HOUR_MS) * HOUR_MS
  const midnightHour = Math.floor(to / HOUR_MS) * HOUR_MS
  // Never down to an empty range (a range asked within the hour before a local midnight).
  if (query.to !== undefined && midnightHour > fromHour && isLocalMidnight(to, tz)) toHour = midnightHour
  return { from: new Date(fromHour), to: new Date(toHour), requestedMs }
}

/** Hour buckets over a long range would be thousands of points: refused beyond 7 days. */
export function checkInterval(interval: Interval, range: ResolvedRange): void {
  if (interval === 'hour' && range.requestedMs > MAX_HOURLY_RANGE_DAYS * DAY_MS) {
    throw invalidQuery('interval', `hour buckets need a range of at most ${MAX_HOURLY_RANGE_DAYS} days`)
  }
}
