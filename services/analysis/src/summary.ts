import { labelFor, type MessageRole, type Sentiment } from './analyzer.ts'
import { OTHER_TOPIC } from './topics/topic-model.ts'

/** A topic as results name it: its stable id and its label when the result was recorded. */
export interface TopicRef {
  readonly id: string
  readonly label: string
}

export interface StoredResult {
  readonly role: MessageRole
  readonly score: number
  readonly topics: readonly TopicRef[]
}

export interface ConversationSummary {
  /** null: the conversation has no end-user message (its other messages are not the end user's). */
  sentiment: Sentiment | null
  assistantSentiment: Sentiment | null
  topics: TopicRef[]
}

const MAX_TOPICS = 5

/**
 * A conversation's overall sentiment and topics from its messages' latest results: the mean score of the
 * end user's messages (null when there are none: a system prompt or a tool result is not the end user's
 * mood), the assistant's mean apart, and the topics most of the end user's messages are in, ties in
 * order of first mention ("other" only when there is no other). Assistant messages make no topics.
 */
export function summarizeConversation(results: readonly StoredResult[]): ConversationSummary {
  const fromUser = results.filter((r) => r.role === 'user')
  const fromAssistant = results.filter((r) => r.role === 'assistant')
  const counts = new Map<string, { ref: TopicRef; n: number }>()
  for (const r of fromUser) {
    for (const ref of r.topics) {
      const entry = counts.get(ref.id)
      if (entry) entry.n++
      else counts.set(ref.id, { ref, n: 1 })
    }
  }
  const ranked = [...counts.values()].sort((a, b) => b.n - a.n)
  const real = ranked.filter((t) => t.ref.id !== OTHER_TOPIC)
  const topics = (real.length > 0 ? real : ranked).slice(0, MAX_TOPICS).map((t) => t.ref)
  return {
    sentiment: mean(fromUser),
    assistantSentiment: mean(fromAssistant),
    topics,
  }
}

function mean(results: readonly StoredResult[]): Sentiment | null {
  if (results.length === 0) return null
  const score = Math.round((results.reduce((sum, r) => sum + r.score, 0) / results.length) * 10_000) / 10_000
  return { score, label: labelFor(score) }
}
