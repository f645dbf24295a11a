import type { Interval } from '../api/types.ts'
import { endOfDay, startOfDay } from './filters.ts'

export const PRESETS = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 365 days' },
] as const

/** The analytics page's choices, kept in its URL. */
export interface AnalyticsSelection {
  readonly chatbotId: string
  /** A number of days back from now, or 'custom' for the from/to days. */
  readonly range: string
  readonly from: string
  readonly to: string
  readonly interval: Interval
}

const DAY = /^\d{4}-\d{2}-\d{2}$/
const DAY_MS = 86_400_000
const MAX_DAYS = 365

export function selectionFromSearch(search: string): AnalyticsSelection {
  const params = new URLSearchParams(search)
  const range = params.get('range') ?? '30'
  const from = params.get('from') ?? ''
  const to = params.get('to') ?? ''
  const interval = params.get('interval')
  const custom = range === 'custom' && DAY.test(from) && DAY.test(to)
  const preset = PRESETS.some((p) => String(p.days) === range) ? range : '30'
  const selection: AnalyticsSelection = {
    chatbotId: params.get('chatbotId') ?? '',
    range: custom ? 'custom' : preset,
    from: custom ? from : '',
    to: custom ? to : '',
    interval: interval === 'hour' || interval === 'week' ? interval : 'day',
  }
  return intervalsFor(selection).includes(selection.interval) ? selection : { ...selection, interval: 'day' }
}

export function selectionToSearch(s: AnalyticsSelection): URLSearchParams {
  const params = new URLSearchParams()
  if (s.chatbotId) params.set('chatbotId', s.chatbotId)
  params.set('range', s.range)
  if (s.range === 'custom') {
    params.set('from', s.from)
    params.set('to', s.to)
  }
  params.set('interval', s.interval)
  return params
}

/** Days the selection covers (a custom range counts both its first and last day). */
export function selectionDays(s: AnalyticsSelection): number {
  if (s.range !== 'custom') return Number(s.range)
  return Math.round((Date.parse(endOfDay(s.to)) + 1 - Date.parse(startOfDay(s.from))) / DAY_MS)
}

/** The bucket sizes that make sense: hours only for a week or less (the API's own limit). */
export function intervalsFor(s: AnalyticsSelection): Interval[] {
  return selectionDays(s) <= 7 ? ['hour', 'day', 'week'] : ['day', 'week']
}

export function selectionProblem(s: AnalyticsSelection): string | undefined {
  if (s.range !== 'custom') return undefined
  if (!DAY.test(s.from) || !DAY.test(s.to)) return 'Choose both a first and a last day.'
  if (s.from > s.to) return 'The first day must be on or before the last day.'
  if (selectionDays(s) > MAX_DAYS) return `A range can cover at most ${MAX_DAYS} days.`
  return undefined
}

/** Query parameters of both analytics endpoints, with the viewer's zone for day and week buckets. */
export function analyticsQuery(s: AnalyticsSelection, tz: string) {
  const scope = { chatbotId: s.chatbotId || undefined, tz }
  if (s.range !== 'custom') return { ...scope, days: Number(s.range) }
  return { ...scope, from: startOfDay(s.from), to: new Date(Date.parse(endOfDay(s.to)) + 1).toISOString() }
}

/** The viewer's IANA time zone, or UTC when the browser does not say. */
export function viewerTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
  } catch {
    return 'UTC'
  }
}
