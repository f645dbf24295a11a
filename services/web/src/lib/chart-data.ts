import type { Interval, Overview, SentimentCounts, SentimentPoint } from '../api/types.ts'
import { formatAverageSentiment, formatNumber, plural, SENTIMENT_SCALE } from './format.ts'

export const COLORS = {
  positive: '#1e7d3a',
  neutral: '#6b7280',
  negative: '#c5221f',
  primary: '#0b57d0',
} as const

/** Lines of several series, each at least 3:1 against white (WCAG non-text contrast). */
export const SERIES_COLORS = ['#0b57d0', '#b3261e', '#1e7d3a', '#8a5a00', '#6f42c1'] as const

/**
 * A dash pattern per line of a chart, by its index: with the colours, lines differ by dash too, so that
 * colour is never the only way to tell them apart (WCAG 1.4.1; trial12 found five signal lines told apart
 * by colour alone). Eight patterns: a chart with more lines repeats one, in another colour.
 */
export const LINE_DASHES: readonly (readonly number[])[] = [
  [],
  [8, 3],
  [2, 3],
  [12, 3, 2, 3],
  [4, 4],
  [1, 2],
  [10, 2, 2, 2, 2, 2],
  [6, 6],
]

/** A bucket's start as people name it: "Jan 5, 02:00 PM" for an hour, "Jan 5" for a day, "Week of Jan 5". */
export function bucketLabel(iso: string, interval: Interval, locale?: string): string {
  const date = new Date(iso)
  if (interval === 'hour') {
    return new Intl.DateTimeFormat(locale, {
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
    }).format(date)
  }
  const day = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric' }).format(date)
  return interval === 'week' ? `Week of ${day}` : day
}

/** One sentence on the sentiment trend, for those who cannot see the chart. */
export function trendSummary(points: readonly SentimentPoint[]): string {
  const analyzed = points.filter((p) => p.count > 0 && p.average !== null)
  if (analyzed.length === 0) return 'No analysed messages in this range.'
  const total = analyzed.reduce((n, p) => n + p.count, 0)
  const first = analyzed[0]!
  const last = analyzed.at(-1)!
  const span =
    analyzed.length === 1
      ? `average ${formatAverageSentiment(first.average)}`
      : `average from ${formatAverageSentiment(first.average)} in the first period with data to ${formatAverageSentiment(last.average)} in the last`
  return `${formatNumber(total)} analysed messages over ${analyzed.length} of ${points.length} periods; ${span}, ${SENTIMENT_SCALE}.`
}

export function topicsSummary(topics: Overview['topTopics'], other?: Overview['otherTopic']): string {
  const tail = other ? ` ${formatNumber(other.count)} in no topic (Other).` : ''
  if (topics.length === 0) return other ? `No topics in this range;${tail}` : 'No topics found in this range.'
  return `Most conversations: ${topics
    .slice(0, 3)
    .map((t) => `${t.topic} (${formatNumber(t.count)})`)
    .join(', ')}.${tail}`
}

/** The top topics, then "other" (labelled Other by the API) last, as the Topics page ranks them. */
export function topicBars(overview: Pick<Overview, 'topTopics' | 'otherTopic'>): Overview['topTopics'] {
  return overview.otherTopic ? [...overview.topTopics, overview.otherTopic] : overview.topTopics
}

/** Roles with their counts, the usual ones first, the ones never seen left out. */
export function roleCounts(byRole: Readonly<Record<string, number>>): { role: string; count: number }[] {
  const order = ['user', 'assistant', 'system', 'tool']
  const roles = [...order, ...Object.keys(byRole).filter((r) => !order.includes(r))]
  return roles.map((role) => ({ role, count: byRole[role] ?? 0 })).filter((r, i) => r.count > 0 || i < 2)
}

export function rolesSummary(counts: readonly { role: string; count: number }[]): string {
  return counts.map((r) => `${r.role}: ${formatNumber(r.count)}`).join(', ')
}

/** The assistant's sentiment, told apart from the end users' that the figures describe. */
export function assistantSentimentLine(s: SentimentCounts): string {
  if (s.analyzed === 0 || s.average === null) return 'Assistant messages: none analysed in this range.'
  return `Assistant messages: average ${formatAverageSentiment(s.average)} over ${plural(s.analyzed, 'analysed message')} (${formatNumber(s.positive)} positive, ${formatNumber(s.neutral)} neutral, ${formatNumber(s.negative)} negative).`
}

/**
 * Each value with a key made from its column's name, unique even when two columns share one (two topics
 * may have the same label), and whether it is the row's first.
 */
export function keyed<T>(
  columns: readonly string[],
  values: readonly T[],
): { value: T; key: string; first: boolean }[] {
  const seen = new Map<string, number>()
  return values.map((value, i) => {
    const name = columns[i] ?? ''
    const n = (seen.get(name) ?? 0) + 1
    seen.set(name, n)
    return { value, key: n === 1 ? name : `${name}#${n}`, first: i === 0 }
  })
}
