import type { Sentiment, SentimentLabel } from '../api/types.ts'
import { describeSentiment, SENTIMENT_LABELS } from '../lib/format.ts'
import { Link } from '../lib/router.tsx'
import { paths } from '../lib/routes.ts'

/** The label in words and the score; the colour only repeats what the words say. */
export function SentimentBadge({ sentiment }: { sentiment: Sentiment | null }) {
  return (
    <span className={`badge sentiment-${sentiment?.label ?? 'pending'}`}>{describeSentiment(sentiment)}</span>
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
