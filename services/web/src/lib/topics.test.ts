import { describe, expect, it } from 'vitest'
import type { Topic, TopicFigures, TopicsReport } from '../api/types.ts'
import { selectionFromSearch } from './analytics-range.ts'
import { formatShare, sentimentOf } from './format.ts'
import { paths } from './routes.ts'
import {
  chartLabel,
  examplesToSend,
  labelToSend,
  mergeTargets,
  rankingRows,
  rankingSummary,
  topicFilterLabel,
  topicForInput,
  topicsQuery,
  topicToApply,
  trendChartSummary,
  trendRows,
  trendSeries,
} from './topics.ts'

const DAYS = ['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z', '2026-03-03T00:00:00.000Z']
const BOT = '6f1c1d7e-0000-4000-8000-000000000001'

function topic(
  id: string,
  label: string,
  conversations: number,
  trend: number[],
  extra: Partial<Topic> = {},
) {
  return {
    id,
    chatbotId: BOT,
    label,
    keywords: [],
    configured: false,
    theme: null,
    conversations,
    messages: trend.reduce((n, m) => n + m, 0),
    share: conversations / 10,
    averageSentiment: null,
    trend: trend.map((messages, i) => ({ bucket: DAYS[i]!, messages })),
    examples: [],
    ...extra,
  } satisfies Topic
}

const other: TopicFigures = {
  conversations: 2,
  messages: 2,
  share: 0.2,
  averageSentiment: -0.5,
  trend: [0, 0, 2].map((messages, i) => ({ bucket: DAYS[i]!, messages })),
}

const report: TopicsReport = {
  interval: 'day',
  range: { from: DAYS[0]!, to: '2026-03-04T00:00:00.000Z' },
  conversationsWithTopics: 10,
  themes: [],
  topics: [
    topic('t-password', 'password reset', 5, [1, 3, 1], { averageSentiment: -0.25 }),
    topic('t-delivery', 'order delivery', 3, [0, 0, 3]),
  ],
  other,
  reclustering: { settling: false, lastReclusteredAt: null, retrying: null },
  hiddenTopics: [],
  quietTopics: [],
}

describe('the Topics page', () => {
  it('asks for the selection, its buckets and at most the API maximum of topics', () => {
    const selection = selectionFromSearch(`?chatbotId=${BOT}&range=7&interval=hour`)
    expect(topicsQuery(selection, 'Europe/Paris', 20)).toEqual({
      chatbotId: BOT,
      tz: 'Europe/Paris',
      days: 7,
      interval: 'hour',
      limit: 20,
    })
    expect(topicsQuery(selection, 'UTC', 5_000).limit).toBe(1_000)
  })

  it('ranks the numbers in a table, with "other" apart at the end', () => {
    expect(rankingRows(report)).toEqual([
      // The average with its word, as everywhere an average sentiment is shown.
      { key: 't-password', cells: ['password reset', 5, '50%', 5, '\u22120.25 (negative)'] },
      { key: 't-delivery', cells: ['order delivery', 3, '30%', 3, '—'] },
      { key: 'other', cells: ['Other', 2, '20%', 2, '\u22120.50 (negative)'] },
    ])
    expect(rankingRows({ ...report, other: null }).map((r) => r.key)).toEqual(['t-password', 't-delivery'])
  })

  it('names the chatbot of each topic when several are shown', () => {
    const names = new Map([[BOT, 'Support bot']])
    expect(rankingRows(report, names)[0]!.cells[0]).toBe('password reset (Support bot)')
    expect(rankingSummary(report, names)).toContain('password reset (Support bot) leads')
  })

  it('says in one sentence what the ranking chart shows', () => {
    expect(rankingSummary(report)).toBe(
      'password reset leads with 5 of 10 conversations with a topic or in Other (50%), then order delivery (3); 2 in no topic close enough.',
    )
    expect(rankingSummary({ ...report, topics: [], other: null })).toBe('No topics in this range yet.')
  })

  it('draws the top topics and "other" over time, with the same numbers as a table', () => {
    const { buckets, series } = trendSeries(report, undefined, 1)
    expect(buckets).toEqual(DAYS)
    expect(series).toEqual([
      { key: 't-password', name: 'password reset', messages: [1, 3, 1] },
      { key: 'other', name: 'Other', messages: [0, 0, 2] },
    ])
    const table = trendRows(buckets, series, 'day')
    expect(table.columns).toEqual(['Period', 'password reset', 'Other'])
    expect(table.rows.map((r) => r.cells.slice(1))).toEqual([
      [1, 0],
      [3, 0],
      [1, 2],
    ])
    expect(trendChartSummary(buckets, series, 'week')).toMatch(
      /^End-user messages per week: password reset 5, most in Week of .+; Other 2, most in Week of .+\.$/,
    )
    expect(trendChartSummary([], [], 'day')).toBe('No topics in this range yet.')
  })

  it("shortens long names on a chart's axis only", () => {
    expect(chartLabel('password reset')).toBe('password reset')
    expect(chartLabel('question number, question asked', 16)).toBe('question number…')
    expect(chartLabel('exactly sixteen!', 16)).toBe('exactly sixteen!')
  })

  it('links a topic to the conversation list filtered by it', () => {
    expect(paths.topicConversations('t-password', BOT)).toBe(
      `/conversations?chatbotId=${BOT}&topic=t-password`,
    )
    expect(paths.topicConversations('other')).toBe('/conversations?topic=other')
  })
})

describe('the conversation list filtered by a topic', () => {
  const listed = [
    { topics: ['order delivery', 'password reset'], topicIds: ['t-delivery', 't-password'] },
    { topics: ['password reset'], topicIds: ['t-password'] },
  ]
  const known = [{ id: 't-refunds', topic: 'refunds' }]

  it("names the topic by its label, from the listed conversations or the page's top topics", () => {
    expect(topicFilterLabel('t-password', listed, known)).toBe('password reset')
    expect(topicFilterLabel('t-refunds', [], known)).toBe('refunds')
    expect(topicFilterLabel('PASSWORD reset', listed, [])).toBe('password reset')
    expect(topicFilterLabel('Refunds', [], known)).toBe('refunds')
    expect(topicFilterLabel('other', [], [])).toBe('Other')
    expect(topicFilterLabel('t-unknown', listed, known)).toBeUndefined()
    expect(topicFilterLabel(' ', listed, known)).toBeUndefined()
  })

  it('shows the label in the Topic box and applies the id again while the box still shows it', () => {
    expect(topicForInput('t-password', 'password reset')).toBe('password reset')
    expect(topicForInput('t-unknown', undefined)).toBe('t-unknown')
    expect(topicToApply('password reset', 't-password', 'password reset')).toBe('t-password')
    expect(topicToApply('refunds', 't-password', 'password reset')).toBe('refunds')
    expect(topicToApply('', 't-password', 'password reset')).toBe('')
    expect(topicToApply('billing', '', undefined)).toBe('billing')
  })
})

describe('figures of a topic', () => {
  it('reads a share as a percentage', () => {
    expect(formatShare(0.625)).toBe('62.5%')
    expect(formatShare(1)).toBe('100%')
    expect(formatShare(0)).toBe('0%')
  })

  it("labels a mean score as the service labels one (VADER's thresholds)", () => {
    expect(sentimentOf(null)).toBeNull()
    expect(sentimentOf(0.05)).toEqual({ score: 0.05, label: 'positive' })
    expect(sentimentOf(0.0499)).toEqual({ score: 0.0499, label: 'neutral' })
    expect(sentimentOf(-0.05)).toEqual({ score: -0.05, label: 'negative' })
  })
})

describe('managing topics (owners and admins)', () => {
  const OTHER_BOT = '6f1c1d7e-0000-4000-8000-000000000002'
  const all = [
    topic('a', 'Refunds', 5, [1, 2, 2]),
    topic('b', 'Card delivery', 3, [1, 1, 1]),
    topic('c', 'Billing', 2, [0, 1, 1], { configured: true }),
    topic('d', 'Login', 1, [0, 0, 1], { chatbotId: OTHER_BOT }),
  ] as Topic[]

  it("offers the same chatbot's other topics as merge targets, configured ones too", () => {
    expect(mergeTargets(all, all[0]!)).toEqual([
      { id: 'b', label: 'Card delivery' },
      { id: 'c', label: 'Billing' },
    ])
  })

  it('offers none for a configured topic, which is never merged away', () => {
    expect(mergeTargets(all, all[2]!)).toEqual([])
  })

  it('sends a tidied label, and nothing for an empty, too long or unchanged one', () => {
    expect(labelToSend('  Card   refunds ', 'Refunds')).toBe('Card refunds')
    expect(labelToSend('   ', 'Refunds')).toBeUndefined()
    expect(labelToSend('x'.repeat(81), 'Refunds')).toBeUndefined()
    expect(labelToSend('Refunds', 'Refunds')).toBeUndefined()
  })
})

describe('examplesToSend', () => {
  it('takes 2 to 20 non-empty lines of at most 500 characters, trimmed', () => {
    expect(examplesToSend(' tow my car \n\n  jump start my battery ')).toEqual([
      'tow my car',
      'jump start my battery',
    ])
    expect(examplesToSend('only one')).toBeUndefined()
    expect(examplesToSend(Array.from({ length: 21 }, (_, i) => `tow ${i}`).join('\n'))).toBeUndefined()
    expect(examplesToSend(`tow my car\n${'x'.repeat(501)}`)).toBeUndefined()
  })
})
