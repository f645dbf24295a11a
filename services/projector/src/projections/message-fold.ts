import { analyzerId, type RecordedEvent, UNDETERMINED_LANGUAGE } from '@cas/events'
import { hourOf, type Role, type RollupDeltas, type SentimentLabel } from './rollup-deltas.ts'

type MessagesCaptured = RecordedEvent<'conversation.messages-captured'>
type MessagesAnalyzed = RecordedEvent<'analysis.messages-analyzed'>

/** A capture's part in one message row. */
export interface CapturedStep {
  readonly kind: 'captured'
  readonly orgId: string
  readonly chatbotId: string
  readonly role: Role
  readonly content: string
  readonly sentAt: string
  /** Journal position × 1000 + index in the capture (1-based): arrival order for equal sentAt. */
  readonly arrival: string
}

/** An analysis result's part in one message row. */
export interface AnalyzedStep {
  readonly kind: 'analyzed'
  readonly orgId: string
  readonly chatbotId: string
  readonly score: number
  readonly label: SentimentLabel
  readonly topics: readonly string[]
  /**
   * name@version of the analyzer that read the message; undefined for a result that only moved it to
   * another topic (signalsDecided false: a re-clustering's, named after the analyzer running then, which
   * read nothing), so the analyzer that read it stands (kept as stored).
   */
  readonly analyzer: string | undefined
  /** The end user's message's detected language; undefined when the result does not say (kept as stored). */
  readonly language: string | undefined
}

/** One event's part in one message row, in the batch's order. */
export type MessageStep = CapturedStep | AnalyzedStep

/** One message's steps in a batch. */
export interface MessageSteps {
  readonly conversationId: string
  readonly messageId: string
  readonly orgId: string
  readonly chatbotId: string
  readonly steps: MessageStep[]
}

/** What applying the steps depends on: the stored row as it was before them (null: no row). */
export interface StoredMessage {
  role: Role | null
  sent_at: Date | string | null
  sentiment_score: number | null
  sentiment_label: SentimentLabel | null
  topics: readonly string[]
  language: string | null
}

/** An rm_messages row as the batch leaves it; a column left undefined is one no event of the batch sets. */
export interface MessageRow {
  conversationId: string
  messageId: string
  orgId: string
  chatbotId: string
  role?: Role
  content?: string
  sentAt?: string
  arrival?: string
  sentimentScore?: number
  sentimentLabel?: SentimentLabel
  topics?: readonly string[]
  analyzer?: string
  language?: string
}

/**
 * A captured message's arrival (rm_messages.arrival): journal position × 1000 + its index in the capture
 * + 1, written out as digits. For the first 999 messages of a capture (the API takes 100 at most) that is
 * the position followed by i + 1 on three digits, without BigInt's cost.
 */
export function arrivalOf(position: number | string | bigint, i: number): string {
  return i < 999
    ? `${position}${String(i + 1).padStart(3, '0')}`
    : (BigInt(position) * 1000n + BigInt(i + 1)).toString()
}

export const messageKey = (conversationId: string, messageId: string) => `${conversationId}|${messageId}`

/** A batch's captures and results gathered per message, in the order they came. */
export class MessageChanges {
  private readonly pending = new Map<string, MessageSteps>()

  addCaptured(e: MessagesCaptured): void {
    const arrival = (i: number) => arrivalOf(e.position, i)
    e.payload.messages.forEach((m, i) => {
      this.entry(e.streamId, m.id, e.orgId, e.chatbotId).steps.push({
        kind: 'captured',
        orgId: e.orgId,
        chatbotId: e.chatbotId,
        role: m.role as Role,
        content: m.content,
        sentAt: m.sentAt,
        arrival: arrival(i),
      })
    })
  }

  addAnalyzed(e: MessagesAnalyzed): void {
    const analyzer = e.payload.signalsDecided === false ? undefined : analyzerId(e.payload.analyzer)
    for (const r of e.payload.results) {
      this.entry(e.streamId, r.messageId, e.orgId, e.chatbotId).steps.push({
        kind: 'analyzed',
        orgId: e.orgId,
        chatbotId: e.chatbotId,
        score: r.sentiment.score,
        label: r.sentiment.label,
        topics: r.topics.map((t) => t.id),
        analyzer,
        language: r.language,
      })
    }
  }

  private entry(conversationId: string, messageId: string, orgId: string, chatbotId: string): MessageSteps {
    const key = messageKey(conversationId, messageId)
    let entry = this.pending.get(key)
    if (!entry) {
      entry = { conversationId, messageId, orgId, chatbotId, steps: [] }
      this.pending.set(key, entry)
    }
    return entry
  }

  /** The messages gathered, taken out. */
  take(): MessageSteps[] {
    const entries = [...this.pending.values()]
    this.pending.clear()
    return entries
  }
}

/**
 * Whether the message is almost surely new: first seen here captured (analysis results follow their
 * capture). Those are inserted without reading first; the few that turn out to exist (a result that
 * came first, in an earlier batch) are read and folded like the others.
 */
export const firstSeenCaptured = (entry: MessageSteps) => entry.steps[0]!.kind === 'captured'

/** Whether the batch brings only results for the message (the usual case: analysis follows capture). */
export const resultsOnly = (entry: MessageSteps) => entry.steps.every((step) => step.kind === 'analyzed')

/**
 * The message's row as the batch leaves it, whatever was stored: a captured message sets the content
 * columns, a result the result columns, each time replacing what was there; the last step of each kind
 * wins. (The row's other columns are kept by the write; only the rollups depend on what was stored.)
 */
export function messageRow(entry: MessageSteps): MessageRow {
  let captured: CapturedStep | undefined
  let analyzed: AnalyzedStep | undefined
  // A result that only moved the message to another topic says no language and no analyzer: the last
  // that did stands.
  let language: string | undefined
  let analyzer: string | undefined
  for (const step of entry.steps) {
    if (step.kind === 'captured') captured = step
    else {
      analyzed = step
      language = step.language ?? language
      analyzer = step.analyzer ?? analyzer
    }
  }
  return {
    conversationId: entry.conversationId,
    messageId: entry.messageId,
    orgId: entry.orgId,
    chatbotId: entry.chatbotId,
    role: captured?.role,
    content: captured?.content,
    sentAt: captured?.sentAt,
    arrival: captured?.arrival,
    sentimentScore: analyzed?.score,
    sentimentLabel: analyzed?.label,
    topics: analyzed?.topics,
    analyzer,
    language,
  }
}

/**
 * Adds to the rollups what applying the message's steps, in order, to the stored row (`before`, null
 * when there is none) does, as applying them one at a time would: a result replacing an earlier one
 * takes the earlier one back out of its hour; a capture of a message whose result arrived first (its
 * row then holds only the result) counts the result in the capture's hour.
 */
export function foldMessage(entry: MessageSteps, before: StoredMessage | null, rollups: RollupDeltas): void {
  foldLanguage(entry, before, rollups)
  let exists = before !== null
  let sentAt = before?.sent_at ?? null
  let role = before?.role ?? null
  let result =
    before?.sentiment_label && before.sentiment_score !== null
      ? { score: before.sentiment_score, label: before.sentiment_label, topics: before.topics }
      : null
  for (const step of entry.steps) {
    if (step.kind === 'captured') {
      if (exists && result) {
        rollups.addAnalysis(
          step.orgId,
          step.chatbotId,
          hourOf(step.sentAt),
          step.role,
          result,
          result.topics,
          1,
        )
      }
      exists = true
      sentAt = step.sentAt
      role = step.role
    } else {
      if (sentAt && role) {
        const hour = hourOf(sentAt)
        if (result) rollups.addAnalysis(step.orgId, step.chatbotId, hour, role, result, result.topics, -1)
        rollups.addAnalysis(step.orgId, step.chatbotId, hour, role, step, step.topics, 1)
      }
      exists = true
      result = { score: step.score, label: step.label, topics: step.topics }
    }
  }
}

/** What a stored message counts in rm_hourly_languages: an end user's, captured, with a detected language. */
export function countedLanguage(message: {
  role: Role | null
  sent_at: Date | string | null
  language: string | null
}): { hour: string; language: string } | null {
  const { role, sent_at: sentAt, language } = message
  if (role !== 'user' || sentAt === null || language === null || language === UNDETERMINED_LANGUAGE)
    return null
  return { hour: hourOf(sentAt), language }
}

/**
 * The language rollup's part of the message's steps: what the stored row counted taken back, what the
 * row as the steps leave it counts added (the same row: nothing). The row is followed as the upserts
 * write it (messages.ts): the last capture sets the role and time, a result's language replaces the
 * stored one, a result without one keeps it. A function of the row alone, so a redelivered event, a
 * re-analysis and a capture after its result all count as rm_messages then reads.
 */
function foldLanguage(entry: MessageSteps, before: StoredMessage | null, rollups: RollupDeltas): void {
  const after = {
    role: before?.role ?? null,
    sent_at: before?.sent_at ?? null,
    language: before?.language ?? null,
  }
  for (const step of entry.steps) {
    if (step.kind === 'captured') {
      after.role = step.role
      after.sent_at = step.sentAt
    } else {
      after.language = step.language ?? after.language
    }
  }
  const was = before ? countedLanguage(before) : null
  const is = countedLanguage(after)
  if (was) rollups.addLanguage(entry.orgId, entry.chatbotId, was.hour, was.language, -1)
  if (is) rollups.addLanguage(entry.orgId, entry.chatbotId, is.hour, is.language, 1)
}
