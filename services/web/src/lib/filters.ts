import type { SentimentLabel } from '../api/types.ts'
import { isThemeId } from './themes.ts'

/** The conversation list's filters as the form holds them: '' means "any". Kept in the page's URL. */
export interface ConversationFilters {
  readonly chatbotId: string
  /** yyyy-mm-dd, a day in the viewer's time zone: last message on or after its start. */
  readonly from: string
  /** yyyy-mm-dd: last message on or before the end of that day. */
  readonly to: string
  readonly sentiment: '' | SentimentLabel
  readonly topic: string
  /** A theme id (a UUID; the Topics page links to it). */
  readonly theme: string
  readonly userId: string
  readonly q: string
  /** A signal (escalation, bot_failure, …, custom:<slug>): the Analytics page links to it. */
  readonly signal: string
  /**
   * The exact range a figure of the Analytics or Topics page was counted over (ISO instants: last message
   * at or after `since`, before `until`), which their links carry so that the list holds the conversations
   * the figure counted. A preset range ("Last 7 days") starts at an hour, not at a day's start.
   */
  readonly since: string
  readonly until: string
}

export const NO_FILTERS: ConversationFilters = {
  chatbotId: '',
  from: '',
  to: '',
  sentiment: '',
  topic: '',
  theme: '',
  userId: '',
  q: '',
  signal: '',
  since: '',
  until: '',
}

const KEYS = Object.keys(NO_FILTERS) as (keyof ConversationFilters)[]
const DAY = /^\d{4}-\d{2}-\d{2}$/
const SIGNAL =
  /^(escalation|bot_failure|repetition|frustration|resolution|abandonment|custom:[a-z0-9-]{1,64})$/
const SENTIMENTS = new Set(['positive', 'neutral', 'negative'])
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/
const instant = (value: string) => (INSTANT.test(value) && !Number.isNaN(Date.parse(value)) ? value : '')

/** Reads filters from a URL query string; values that make no sense are dropped rather than sent. */
export function filtersFromSearch(search: string): ConversationFilters {
  const params = new URLSearchParams(search)
  const get = (key: string) => params.get(key)?.trim() ?? ''
  const sentiment = get('sentiment')
  return {
    chatbotId: get('chatbotId'),
    from: DAY.test(get('from')) ? get('from') : '',
    to: DAY.test(get('to')) ? get('to') : '',
    sentiment: SENTIMENTS.has(sentiment) ? (sentiment as SentimentLabel) : '',
    topic: get('topic'),
    theme: isThemeId(get('theme')) ? get('theme') : '',
    userId: get('userId'),
    q: get('q'),
    signal: SIGNAL.test(get('signal')) ? get('signal') : '',
    since: instant(get('since')),
    until: instant(get('until')),
  }
}

/** The query string for the page URL: only the filters that are set, in a stable order. */
export function filtersToSearch(filters: ConversationFilters): URLSearchParams {
  const params = new URLSearchParams()
  for (const key of KEYS) {
    const value = filters[key].trim()
    if (value) params.set(key, value)
  }
  return params
}

export function hasFilters(filters: ConversationFilters): boolean {
  return activeFilterCount(filters) > 0
}

/** How many filters are set: the days from and to count as one each, an exact range (since, until) as one. */
export function activeFilterCount(filters: ConversationFilters): number {
  const set = KEYS.filter((key) => filters[key].trim() !== '')
  return set.length - (set.includes('since') && set.includes('until') ? 1 : 0)
}

/** The label of the button that shows the filters on a phone, with how many are in force. */
export function filtersToggleLabel(filters: ConversationFilters): string {
  const count = activeFilterCount(filters)
  return count === 0 ? 'Filters' : `Filters (${count} active)`
}

/** Midnight at the start of a yyyy-mm-dd day in the viewer's zone, as an ISO instant. */
export function startOfDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number]
  return new Date(y, m - 1, d).toISOString()
}

/** The last millisecond of a yyyy-mm-dd day in the viewer's zone, as an ISO instant. */
export function endOfDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number]
  return new Date(new Date(y, m - 1, d + 1).getTime() - 1).toISOString()
}

/** A problem with the filters the user should fix before anything is sent, or undefined. */
export function filtersProblem(filters: ConversationFilters): string | undefined {
  if (filters.from && filters.to && filters.from > filters.to) {
    return 'The "from" day must be on or before the "to" day.'
  }
  return undefined
}

/** GET /api/v1/conversations query parameters for the filters, a page size and a cursor. */
export function conversationQuery(
  filters: ConversationFilters,
  limit: number,
  cursor?: string,
): Record<string, string | number | undefined> {
  const text = (s: string) => s.trim() || undefined
  // Days and an exact range together: the narrower bound of each end (ISO instants in UTC sort as text).
  const froms = [filters.from ? startOfDay(filters.from) : '', filters.since].filter(Boolean).sort()
  // The list's `to` is inclusive, an exact range's `until` exclusive (as the analytics' `to`).
  const untilInclusive = filters.until ? new Date(Date.parse(filters.until) - 1).toISOString() : ''
  const tos = [filters.to ? endOfDay(filters.to) : '', untilInclusive].filter(Boolean).sort()
  return {
    chatbotId: text(filters.chatbotId),
    from: froms.at(-1),
    to: tos[0],
    sentiment: filters.sentiment || undefined,
    topic: text(filters.topic),
    theme: text(filters.theme),
    userId: text(filters.userId),
    q: text(filters.q),
    signal: text(filters.signal),
    limit,
    cursor,
  }
}
