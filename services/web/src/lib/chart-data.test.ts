import { describe, expect, it } from 'vitest'
import {
  assistantSentimentLine,
  bucketLabel,
  keyed,
  LINE_DASHES,
  roleCounts,
  rolesSummary,
  SERIES_COLORS,
  topicBars,
  topicsSummary,
  trendSummary,
} from './chart-data.ts'
import { describeSentiment, endUserName, formatScore, plural } from './format.ts'

const point = (average: number | null, count: number) => ({
  bucket: '2026-01-01T00:00:00.000Z',
  average,
  positive: 0,
  neutral: 0,
  negative: 0,
  count,
})

describe('chart text for those who cannot see the chart', () => {
  it('summarises the sentiment trend over the periods with data', () => {
    expect(trendSummary([point(null, 0), point(null, 0)])).toBe('No analysed messages in this range.')
    expect(trendSummary([point(0.5, 2), point(null, 0), point(-0.25, 3)])).toBe(
      '5 analysed messages over 2 of 3 periods; average from +0.50 (positive) in the first period with data to \u22120.25 (negative) in the last, on a scale from \u22121 (negative) to +1 (positive).',
    )
    expect(trendSummary([point(0, 1)])).toBe(
      '1 analysed messages over 1 of 1 periods; average 0.00 (neutral), on a scale from \u22121 (negative) to +1 (positive).',
    )
  })

  it('names the top topics and the roles', () => {
    expect(topicsSummary([])).toBe('No topics found in this range.')
    expect(
      topicsSummary([
        { topic: 'refunds', id: 't-refunds', count: 7 },
        { topic: 'login', id: 't-login', count: 3 },
        { topic: 'billing', id: 't-billing', count: 2 },
        { topic: 'other', id: 't-other', count: 1 },
      ]),
    ).toBe('Most conversations: refunds (7), login (3), billing (2).')
    const other = { topic: 'Other', id: 'other', count: 4 }
    expect(topicsSummary([{ topic: 'refunds', id: 't-refunds', count: 7 }], other)).toBe(
      'Most conversations: refunds (7). 4 in no topic (Other).',
    )
    expect(topicsSummary([], other)).toBe('No topics in this range; 4 in no topic (Other).')
    const top = [{ topic: 'refunds', id: 't-refunds', count: 7 }]
    expect(topicBars({ topTopics: top, otherTopic: other })).toEqual([...top, other])
    expect(topicBars({ topTopics: top, otherTopic: null })).toEqual(top)
    const roles = roleCounts({ assistant: 4, user: 5, system: 0, tool: 1 })
    expect(roles).toEqual([
      { role: 'user', count: 5 },
      { role: 'assistant', count: 4 },
      { role: 'tool', count: 1 },
    ])
    expect(rolesSummary(roles)).toBe('user: 5, assistant: 4, tool: 1')
    expect(roleCounts({})).toEqual([
      { role: 'user', count: 0 },
      { role: 'assistant', count: 0 },
    ])
  })

  it('labels buckets by their size', () => {
    const iso = new Date(2026, 0, 5, 14).toISOString()
    expect(bucketLabel(iso, 'day', 'en-US')).toBe('Jan 5')
    expect(bucketLabel(iso, 'week', 'en-US')).toBe('Week of Jan 5')
    expect(bucketLabel(iso, 'hour', 'en-US')).toMatch(/^Jan 5,? 02:00\sPM$/)
  })
})

describe('formatting', () => {
  it('gives scores a sign and two decimals, and sentiment in words', () => {
    expect(formatScore(0.625)).toBe('+0.63')
    expect(formatScore(-0.4)).toBe('\u22120.40')
    expect(formatScore(-0.001)).toBe('0.00')
    expect(describeSentiment(null)).toBe('Not analysed yet')
    expect(describeSentiment(null, true)).toBe('No end-user message')
    expect(describeSentiment({ score: -0.5, label: 'negative' })).toBe('Negative \u22120.50')
  })

  it('names end users and counts', () => {
    expect(endUserName({ id: 'u-1', email: 'ada@example.com' })).toBe('ada@example.com')
    expect(endUserName({ id: 'u-1', name: '' })).toBe('u-1')
    expect(endUserName({})).toBeUndefined()
    expect(plural(1, 'message')).toBe('1 message')
    expect(plural(2, 'message')).toBe('2 messages')
  })
})

describe("the assistant's sentiment, apart from the end users'", () => {
  it('says it in a line of its own', () => {
    expect(assistantSentimentLine({ average: 0.4, positive: 3, neutral: 1, negative: 0, analyzed: 4 })).toBe(
      'Assistant messages: average +0.40 (positive) over 4 analysed messages (3 positive, 1 neutral, 0 negative).',
    )
    expect(assistantSentimentLine({ average: null, positive: 0, neutral: 0, negative: 0, analyzed: 0 })).toBe(
      'Assistant messages: none analysed in this range.',
    )
  })
})

describe('keyed', () => {
  it('gives columns that share a name distinct keys, in order, marking the first', () => {
    // Regression: two topics labelled alike made two table columns with one React key.
    const columns = ['day', 'question number', 'card', 'question number']
    expect(keyed(columns, [1, 2, 3, 4])).toEqual([
      { value: 1, key: 'day', first: true },
      { value: 2, key: 'question number', first: false },
      { value: 3, key: 'card', first: false },
      { value: 4, key: 'question number#2', first: false },
    ])
  })
})

describe('line styles', () => {
  it('gives up to 40 lines each its own colour and dash, and no two of the first eight one dash', () => {
    const dashes = LINE_DASHES.map((d) => d.join(','))
    expect(new Set(dashes).size).toBe(LINE_DASHES.length)
    const styles = Array.from(
      { length: 40 },
      (_, i) => `${SERIES_COLORS[i % SERIES_COLORS.length]} ${dashes[i % dashes.length]}`,
    )
    expect(new Set(styles).size).toBe(40)
  })
})
