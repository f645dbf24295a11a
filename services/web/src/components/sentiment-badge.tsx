import type { Sentiment } from '../api/types.ts'
import { describeSentiment } from '../lib/format.ts'

/** The label in words and the score; the colour only repeats what the words say. */
export function SentimentBadge({ sentiment }: { sentiment: Sentiment | null }) {
  return (
    <span className={`badge sentiment-${sentiment?.label ?? 'pending'}`}>{describeSentiment(sentiment)}</span>
  )
}

export function TopicList({ topics }: { topics: readonly string[] }) {
  if (topics.length === 0) return null
  return (
    <ul className="chips" aria-label="Topics">
      {topics.map((t) => (
        <li key={t} className="chip">
          {t}
        </li>
      ))}
    </ul>
  )
}
