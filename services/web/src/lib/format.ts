import type { Sentiment, SentimentLabel } from '../api/types.ts'

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 })
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 })

export function formatDateTime(iso: string): string {
  return dateTime.format(new Date(iso))
}

export function formatDate(iso: string): string {
  return dateOnly.format(new Date(iso))
}

export function formatNumber(n: number): string {
  return number.format(n)
}

/** A share of 0..1 as a percentage, one decimal at most: "62.5%". */
export function formatShare(share: number): string {
  return percent.format(share)
}

/** A score of −1..1 with its sign, two decimals: "+0.62", "−0.40", "0.00". */
export function formatScore(score: number): string {
  const rounded = Math.round(score * 100) / 100
  if (rounded === 0) return '0.00'
  return `${rounded > 0 ? '+' : '\u2212'}${Math.abs(rounded).toFixed(2)}`
}

export const SENTIMENT_LABELS: Record<SentimentLabel, string> = {
  positive: 'Positive',
  neutral: 'Neutral',
  negative: 'Negative',
}

/** What a sentiment badge says: the label in words (never colour alone) and the score. */
export function describeSentiment(sentiment: Sentiment | null, noEndUserMessage = false): string {
  // A conversation of system, tool and assistant messages only has no end-user sentiment to wait for.
  if (!sentiment) return noEndUserMessage ? 'No end-user message' : 'Not analysed yet'
  return `${SENTIMENT_LABELS[sentiment.label]} ${formatScore(sentiment.score)}`
}

/**
 * A mean score with the label the service would give it (VADER's convention, as
 * services/analysis/src/analyzer.ts: ≥ 0.05 positive, ≤ −0.05 negative), for a sentiment badge.
 */
export function sentimentOf(score: number | null): Sentiment | null {
  if (score === null) return null
  const label: SentimentLabel = score >= 0.05 ? 'positive' : score <= -0.05 ? 'negative' : 'neutral'
  return { score, label }
}

/** The scale every sentiment score is on, in words: said wherever an average is shown. */
export const SENTIMENT_SCALE = 'on a scale from \u22121 (negative) to +1 (positive)'

/**
 * An average score with its word, by the service's thresholds (sentimentOf): "0.00 (neutral)",
 * "+0.62 (positive)", "−0.40 (negative)"; "—" when nothing was analysed.
 */
export function formatAverageSentiment(average: number | null): string {
  const sentiment = sentimentOf(average)
  if (!sentiment) return '\u2014'
  return `${formatScore(sentiment.score)} (${sentiment.label})`
}

/** "3 messages", "1 message". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`
}

/** What stands for a conversation's first end-user words (its preview) when the end user has said nothing. */
export const NO_END_USER_MESSAGE = 'No message from the end user yet'

/** A short, human description of the end user of a conversation: name, email or id. */
export function endUserName(user: Record<string, unknown>): string | undefined {
  for (const key of ['name', 'email', 'id']) {
    const value = user[key]
    if (typeof value === 'string' && value !== '') return value
  }
  return undefined
}
