import { labelFor, type MessageRole, type Sentiment } from './analyzer.ts'

export interface StoredResult {
  readonly role: MessageRole
  readonly score: number
  readonly topics: readonly string[]
}

const MAX_TOPICS = 5

/**
 * A conversation's overall sentiment and topics from its messages' latest results: the mean score of the
 * end user's messages (of all messages when there are none; the end user's mood is what a dashboard
 * asks about), and the topics most messages mention, ties in order of first mention.
 */
export function summarizeConversation(results: readonly StoredResult[]): {
  sentiment: Sentiment
  topics: string[]
} {
  const fromUser = results.filter((r) => r.role === 'user')
  const scored = fromUser.length > 0 ? fromUser : results
  const score = scored.length > 0 ? scored.reduce((sum, r) => sum + r.score, 0) / scored.length : 0
  const rounded = Math.round(score * 10_000) / 10_000
  const counts = new Map<string, number>()
  for (const r of results) for (const t of new Set(r.topics)) counts.set(t, (counts.get(t) ?? 0) + 1)
  const topics = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_TOPICS)
    .map(([t]) => t)
  return { sentiment: { score: rounded, label: labelFor(rounded) }, topics }
}
