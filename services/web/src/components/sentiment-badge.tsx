import type { Sentiment, SentimentLabel } from '../api/types.ts'
import {
  describeSentiment,
  formatAverageSentiment,
  SENTIMENT_LABELS,
  SENTIMENT_SCALE,
} from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'

/**
 * The label in words and the score; the colour only repeats what the words say. `noEndUserMessage`: the
 * sentiment is the end user's and the conversation has no end-user message (it never gets one then).
 */
export function SentimentBadge({
  sentiment,
  noEndUserMessage = false,
}: {
  sentiment: Sentiment | null
  noEndUserMessage?: boolean
}) {
  return (
    <span className={`badge sentiment-${sentiment?.label ?? 'pending'}`}>
      {describeSentiment(sentiment, noEndUserMessage)}
    </span>
  )
}

/**
 * An average sentiment as a figure's value: the score with its word ("0.00 (neutral)") and, under it,
 * the scale it is on, so that a lone "0.00" is never left to guess.
 */
export function AverageSentiment({ average }: { average: number | null }) {
  return (
    <>
      {formatAverageSentiment(average)}
      <span className="figure-note">{average === null ? 'nothing analysed yet' : SENTIMENT_SCALE}</span>
    </>
  )
}

/** A sentiment known by its label only (a topic's example conversations). */
export function SentimentLabelBadge({ label }: { label: SentimentLabel | null }) {
  return (
    <span className={`badge sentiment-${label ?? 'pending'}`}>
      {label ? SENTIMENT_LABELS[label] : 'Not analysed yet'}
    </span>
  )
}

/** A conversation's topics, each a link to the conversations of that topic (of the same chatbot). */
export function TopicList({
  topics,
  topicIds,
  chatbotId,
}: {
  topics: readonly string[]
  topicIds: readonly string[]
  chatbotId: string
}) {
  if (topics.length === 0) return null
  return (
    <ul className="chips" aria-label="Topics">
      {topics.map((label, i) => (
        <li key={topicIds[i] ?? label}>
          <Link className="chip" to={paths.topicConversations(topicIds[i] ?? label, chatbotId)}>
            {label}
          </Link>
        </li>
      ))}
    </ul>
  )
}
