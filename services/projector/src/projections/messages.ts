import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import { hourOf, type Role, type RollupBatch, type SentimentLabel } from './rollups.ts'

type MessagesCaptured = RecordedEvent<'conversation.messages-captured'>
type MessagesAnalyzed = RecordedEvent<'analysis.messages-analyzed'>

/** One event's part in one message row, in the batch's order. */
type MessageStep =
  | {
      readonly kind: 'captured'
      readonly orgId: string
      readonly chatbotId: string
      readonly role: Role
      readonly content: string
      readonly sentAt: string
      /** Journal position × 1000 + index in the capture (1-based): arrival order for equal sentAt. */
      readonly arrival: string
    }
  | {
      readonly kind: 'analyzed'
      readonly orgId: string
      readonly chatbotId: string
      readonly score: number
      readonly label: SentimentLabel
      readonly topics: readonly string[]
      readonly analyzer: string
    }

interface Pending {
  readonly conversationId: string
  readonly messageId: string
  readonly orgId: string
  readonly chatbotId: string
  readonly steps: MessageStep[]
}

/** What applying the steps depends on: the row as it was before them (null: no row). */
interface Before {
  role: Role | null
  sent_at: Date | string | null
  sentiment_score: number | null
  sentiment_label: SentimentLabel | null
  topics: readonly string[]
}

/**
 * The batch's changes to rm_messages, written set-based. A captured message sets the row's content
 * columns, an analysis result its result columns, each time replacing what was there; several events
 * of one message in a batch are merged into one row write, the last one of each kind winning.
 *
 * The rollups need the row as it was: a result replacing an earlier one takes the earlier one back out
 * of its hour, and a message whose result arrived first (analysis runs ahead on another topic, and its
 * row then holds only the result) brings the result into the rollups of the hour it now has. Messages
 * first seen captured are almost always new: they are inserted at once, and only those that turn out to
 * exist are read and merged like the others.
 */
export class MessageChanges {
  private readonly pending = new Map<string, Pending>()

  addCaptured(e: MessagesCaptured): void {
    const position = BigInt(e.position) * 1000n
    e.payload.messages.forEach((m, i) => {
      this.entry(e.streamId, m.id, e.orgId, e.chatbotId).steps.push({
        kind: 'captured',
        orgId: e.orgId,
        chatbotId: e.chatbotId,
        role: m.role as Role,
        content: m.content,
        sentAt: m.sentAt,
        arrival: (position + BigInt(i + 1)).toString(),
      })
    })
  }

  addAnalyzed(e: MessagesAnalyzed): void {
    const analyzer = `${e.payload.analyzer.name}@${e.payload.analyzer.version}`
    for (const r of e.payload.results) {
      this.entry(e.streamId, r.messageId, e.orgId, e.chatbotId).steps.push({
        kind: 'analyzed',
        orgId: e.orgId,
        chatbotId: e.chatbotId,
        score: r.sentiment.score,
        label: r.sentiment.label,
        topics: r.topics.map((t) => t.id),
        analyzer,
      })
    }
  }

  private entry(conversationId: string, messageId: string, orgId: string, chatbotId: string): Pending {
    const key = `${conversationId}|${messageId}`
    let entry = this.pending.get(key)
    if (!entry) {
      entry = { conversationId, messageId, orgId, chatbotId, steps: [] }
      this.pending.set(key, entry)
    }
    return entry
  }

  async flush(client: pg.ClientBase, rollups: RollupBatch): Promise<void> {
    if (this.pending.size === 0) return
    // Rows are written in key order (ORDER BY in SQL), so concurrent batches lock them in one order.
    const entries = [...this.pending.values()]
    this.pending.clear()
    const likelyNew = entries.filter((e) => e.steps[0]!.kind === 'captured')
    const others = entries.filter((e) => e.steps[0]!.kind !== 'captured')
    if (likelyNew.length > 0) {
      const { rows } = await client.query<{ conversation_id: string; message_id: string }>(
        `INSERT INTO rm_messages (${COLUMNS}) SELECT ${VALUES} FROM ${ROWS} ORDER BY 1, 2
         ON CONFLICT (conversation_id, message_id) DO NOTHING
         RETURNING conversation_id, message_id`,
        rowParams(likelyNew),
      )
      const inserted = new Set(rows.map((r) => `${r.conversation_id}|${r.message_id}`))
      for (const entry of likelyNew) {
        if (inserted.has(`${entry.conversationId}|${entry.messageId}`)) fold(entry, null, rollups)
        else others.push(entry)
      }
    }
    if (others.length === 0) return
    const { rows } = await client.query<Before & { conversation_id: string; message_id: string }>(
      `SELECT m.conversation_id, m.message_id, m.role, m.sent_at, m.sentiment_score, m.sentiment_label, m.topics
         FROM rm_messages m JOIN json_to_recordset($1::json) AS k(cid uuid, mid text)
              ON m.conversation_id = k.cid AND m.message_id = k.mid
        ORDER BY 1, 2 FOR UPDATE OF m`,
      [JSON.stringify(others.map((e) => ({ cid: e.conversationId, mid: e.messageId })))],
    )
    const before = new Map(rows.map((r) => [`${r.conversation_id}|${r.message_id}`, r]))
    for (const entry of others)
      fold(entry, before.get(`${entry.conversationId}|${entry.messageId}`) ?? null, rollups)
    // Only the columns the batch's events set: a row another consumer of the group created meanwhile
    // keeps the rest (the role is never null in a capture, the analyzer never in a result). Results alone
    // (the usual case: analysis follows capture) leave the content alone, so that its search vector (a
    // generated column) is not computed again.
    const resultsOnly = others.filter((e) => e.steps.every((step) => step.kind === 'analyzed'))
    const withContent = others.filter((e) => e.steps.some((step) => step.kind === 'captured'))
    if (resultsOnly.length > 0) {
      await client.query(
        `INSERT INTO rm_messages AS m (${COLUMNS}) SELECT ${VALUES} FROM ${ROWS} ORDER BY 1, 2
         ON CONFLICT (conversation_id, message_id) DO UPDATE SET sentiment_score = EXCLUDED.sentiment_score,
           sentiment_label = EXCLUDED.sentiment_label, topics = EXCLUDED.topics, analyzer = EXCLUDED.analyzer`,
        rowParams(resultsOnly),
      )
    }
    if (withContent.length > 0) {
      await client.query(
        `INSERT INTO rm_messages AS m (${COLUMNS}) SELECT ${VALUES} FROM ${ROWS} ORDER BY 1, 2
         ON CONFLICT (conversation_id, message_id) DO UPDATE SET
           role = coalesce(EXCLUDED.role, m.role),
           content = CASE WHEN EXCLUDED.role IS NULL THEN m.content ELSE EXCLUDED.content END,
           sent_at = CASE WHEN EXCLUDED.role IS NULL THEN m.sent_at ELSE EXCLUDED.sent_at END,
           arrival = CASE WHEN EXCLUDED.role IS NULL THEN m.arrival ELSE EXCLUDED.arrival END,
           sentiment_score = CASE WHEN EXCLUDED.analyzer IS NULL THEN m.sentiment_score ELSE EXCLUDED.sentiment_score END,
           sentiment_label = CASE WHEN EXCLUDED.analyzer IS NULL THEN m.sentiment_label ELSE EXCLUDED.sentiment_label END,
           topics = CASE WHEN EXCLUDED.analyzer IS NULL THEN m.topics ELSE EXCLUDED.topics END,
           analyzer = coalesce(EXCLUDED.analyzer, m.analyzer)`,
        rowParams(withContent),
      )
    }
  }
}

const COLUMNS = `conversation_id, message_id, org_id, chatbot_id, role, content, sent_at, arrival, sentiment_score,
  sentiment_label, topics, analyzer`
const VALUES = `d.conversation_id, d.message_id, d.org_id, d.chatbot_id, d.role, d.content, d.sent_at, d.arrival,
  d.sentiment_score, d.sentiment_label, coalesce(d.topics, '{}'), d.analyzer`
/** The rows as one JSON parameter: JSON.stringify is far cheaper than node-postgres' array parameters. */
const ROWS = `json_to_recordset($1::json) AS d(conversation_id uuid, message_id text, org_id uuid, chatbot_id uuid,
    role text, content text, sent_at timestamptz, arrival numeric, sentiment_score float8, sentiment_label text,
    topics text[], analyzer text)`

/** Each message's row as the batch leaves it: the last capture's columns, the last result's columns. */
function rowParams(entries: readonly Pending[]): [string] {
  return [
    JSON.stringify(
      entries.map((entry) => {
        let captured: Extract<MessageStep, { kind: 'captured' }> | undefined
        let analyzed: Extract<MessageStep, { kind: 'analyzed' }> | undefined
        for (const step of entry.steps) {
          if (step.kind === 'captured') captured = step
          else analyzed = step
        }
        return {
          conversation_id: entry.conversationId,
          message_id: entry.messageId,
          org_id: entry.orgId,
          chatbot_id: entry.chatbotId,
          role: captured?.role,
          content: captured?.content,
          sent_at: captured?.sentAt,
          arrival: captured?.arrival,
          sentiment_score: analyzed?.score,
          sentiment_label: analyzed?.label,
          topics: analyzed?.topics,
          analyzer: analyzed?.analyzer,
        }
      }),
    ),
  ]
}

/**
 * Applies a message's steps, in order, to the row as it was (`before`), adding to the rollups what
 * applying them one at a time would: a capture of a message that already has a result counts the
 * result in the capture's hour; a result for a captured message replaces the previous result there.
 */
function fold(entry: Pending, before: Before | null, rollups: RollupBatch): void {
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
