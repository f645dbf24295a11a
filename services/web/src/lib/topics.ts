import type { Conversation, Interval, Topic, TopicFigures, TopicsReport } from '../api/types.ts'
import { type AnalyticsSelection, analyticsQuery } from './analytics-range.ts'
import { bucketLabel } from './chart-data.ts'
import { formatAverageSentiment, formatNumber, formatShare } from './format.ts'

/** The long tail's id in the API: `?topic=other` lists its conversations. */
export const OTHER_TOPIC_ID = 'other'
export const OTHER_TOPIC_LABEL = 'Other'

/** Topics asked for at first, and how many more "Show more topics" adds. */
export const TOPICS_PAGE = 20
/** The API's own maximum. */
export const MAX_TOPICS = 1_000
/** Topics drawn in the trend chart, "other" aside: more lines than this cannot be told apart. */
export const TREND_TOPICS = 5

/** GET /api/v1/analytics/topics parameters for the page's selection. */
export function topicsQuery(s: AnalyticsSelection, tz: string, limit: number) {
  return { ...analyticsQuery(s, tz), interval: s.interval, limit: Math.min(limit, MAX_TOPICS) }
}

/** A topic's name on the page: its label, and its chatbot's name when several chatbots are shown. */
export function topicName(topic: Pick<Topic, 'label' | 'chatbotId'>, chatbotNames?: Map<string, string>) {
  const chatbot = chatbotNames?.get(topic.chatbotId)
  return chatbot ? `${topic.label} (${chatbot})` : topic.label
}

/** A name short enough for a chart's axis or legend (a phone is narrow); tables and lists have it whole. */
export function chartLabel(name: string, max = 22): string {
  return name.length <= max ? name : `${name.slice(0, max - 1).trimEnd()}…`
}

/** The average with its word ("−0.25 (negative)"); the column names the scale. */
const averageText = (figures: TopicFigures) => formatAverageSentiment(figures.averageSentiment)

export const RANKING_COLUMNS = [
  'Topic',
  'Conversations',
  'Share',
  'Messages',
  'Average sentiment (\u22121 to +1)',
] as const

/** The ranking's numbers, a row per topic in rank order and "other" last: the table beside the chart. */
export function rankingRows(report: TopicsReport, chatbotNames?: Map<string, string>) {
  const row = (key: string, name: string, f: TopicFigures) => ({
    key,
    cells: [name, f.conversations, formatShare(f.share), f.messages, averageText(f)],
  })
  const rows = report.topics.map((t) => row(t.id, topicName(t, chatbotNames), t))
  return report.other ? [...rows, row(OTHER_TOPIC_ID, OTHER_TOPIC_LABEL, report.other)] : rows
}

/** One sentence on the ranking, for those who cannot see the chart. */
export function rankingSummary(report: TopicsReport, chatbotNames?: Map<string, string>): string {
  const [first, ...rest] = report.topics
  if (!first) return 'No topics in this range yet.'
  const lead = `${topicName(first, chatbotNames)} leads with ${formatNumber(first.conversations)} of ${formatNumber(report.conversationsWithTopics)} conversations with a topic or in Other (${formatShare(first.share)})`
  const next = rest
    .slice(0, 2)
    .map((t) => `${topicName(t, chatbotNames)} (${formatNumber(t.conversations)})`)
    .join(', ')
  const other = report.other ? `; ${formatNumber(report.other.conversations)} in no topic close enough` : ''
  return `${lead}${next ? `, then ${next}` : ''}${other}.`
}

export interface TrendSeries {
  readonly key: string
  readonly name: string
  readonly messages: number[]
}

/** The top topics' messages per bucket, and "other"'s: the lines of the trend chart. */
export function trendSeries(
  report: TopicsReport,
  chatbotNames?: Map<string, string>,
  top = TREND_TOPICS,
): { buckets: string[]; series: TrendSeries[] } {
  const shown: { key: string; name: string; figures: TopicFigures }[] = report.topics
    .slice(0, top)
    .map((t) => ({ key: t.id, name: topicName(t, chatbotNames), figures: t }))
  if (report.other) shown.push({ key: OTHER_TOPIC_ID, name: OTHER_TOPIC_LABEL, figures: report.other })
  const buckets = (shown[0]?.figures.trend ?? []).map((p) => p.bucket)
  const series = shown.map(({ key, name, figures }) => {
    // Every trend has a point per bucket of the range; matched by bucket all the same.
    const byBucket = new Map(figures.trend.map((p) => [p.bucket, p.messages]))
    return { key, name, messages: buckets.map((b) => byBucket.get(b) ?? 0) }
  })
  return { buckets, series }
}

/** The trend chart's numbers: a row per period, a column per line. */
export function trendRows(buckets: readonly string[], series: readonly TrendSeries[], interval: Interval) {
  return {
    columns: ['Period', ...series.map((s) => s.name)],
    rows: buckets.map((bucket, i) => ({
      key: bucket,
      cells: [bucketLabel(bucket, interval), ...series.map((s) => s.messages[i] ?? 0)],
    })),
  }
}

/** One sentence on the trend chart: each line's total and its busiest period. */
export function trendChartSummary(
  buckets: readonly string[],
  series: readonly TrendSeries[],
  interval: Interval,
): string {
  if (series.length === 0) return 'No topics in this range yet.'
  return `End-user messages per ${interval}: ${series
    .map((s) => {
      const total = s.messages.reduce((n, m) => n + m, 0)
      if (total === 0) return `${s.name} none`
      const peak = s.messages.indexOf(Math.max(...s.messages))
      return `${s.name} ${formatNumber(total)}, most in ${bucketLabel(buckets[peak]!, interval)}`
    })
    .join('; ')}.`
}

/**
 * The label of the conversation list's topic filter, which holds a topic id (from a link) or what was
 * typed: known from the listed conversations (each is in the topic), else from the topics the page
 * knows; undefined when neither says.
 */
export function topicFilterLabel(
  topic: string,
  conversations: readonly Pick<Conversation, 'topics' | 'topicIds'>[],
  known: readonly { readonly id: string; readonly topic: string }[],
): string | undefined {
  const value = topic.trim()
  if (!value) return undefined
  if (value.toLowerCase() === OTHER_TOPIC_ID) return OTHER_TOPIC_LABEL
  for (const c of conversations) {
    const i = c.topicIds.indexOf(value)
    if (i >= 0 && c.topics[i] !== undefined) return c.topics[i]
  }
  const byId = known.find((k) => k.id === value)
  if (byId) return byId.topic
  const lower = value.toLowerCase()
  for (const c of conversations) {
    const label = c.topics.find((t) => t.toLowerCase() === lower)
    if (label !== undefined) return label
  }
  return known.find((k) => k.topic.toLowerCase() === lower)?.topic
}

/**
 * What the Topic box shows for the filter in force: its label rather than an id nobody can read. The
 * filter box also holds free text, so `topicToApply` turns that label back into the id on the next apply.
 */
export function topicForInput(applied: string, label: string | undefined): string {
  return label ?? applied
}

/** The topic filter to apply: the applied id while the box still shows its label, else what was typed. */
export function topicToApply(typed: string, applied: string, label: string | undefined): string {
  return label !== undefined && typed.trim() === label ? applied : typed
}

/**
 * The topics another may be merged into on the Topics page: the same chatbot's other shown topics,
 * labelled, in the page's order. A chatbot's own topic (settings.topics) is never merged away, so it
 * has none.
 */
export function mergeTargets(
  topics: readonly Topic[],
  topic: Pick<Topic, 'id' | 'chatbotId' | 'configured'>,
) {
  if (topic.configured) return []
  return topics
    .filter((t) => t.chatbotId === topic.chatbotId && t.id !== topic.id)
    .map((t) => ({ id: t.id, label: t.label }))
}

/** A new label to send: tidied, and undefined when empty, over 80 characters, or unchanged. */
export function labelToSend(typed: string, current: string): string | undefined {
  const label = typed.trim().replace(/\s+/g, ' ')
  if (label.length === 0 || label.length > 80 || label === current) return undefined
  return label
}

/**
 * The example requests typed one a line, as the create-topic command takes them (2 to 20, each 1 to 500
 * characters); undefined while they are not that.
 */
export function examplesToSend(typed: string): string[] | undefined {
  const examples = typed
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
  if (examples.length < 2 || examples.length > 20 || examples.some((e) => e.length > 500)) return undefined
  return examples
}
