import { chatbotSignals } from '@cas/settings'
import type pg from 'pg'
import type { RollupScope } from './analytics.ts'

/** The range's conversations whose abandonment is not decided yet, and when the first of them is. */
export interface AbandonmentPending {
  conversations: number
  nextDueAt: string | null
  /** The quiet period of the scope's chatbots with abandonment on, when they share one; else null. */
  quietPeriodMinutes: number | null
}

/**
 * The count and the first due time of the waiting conversations: $1 the organization, [$2, $3) the range of
 * last messages, $4/$5 each chatbot with abandonment on and its quiet period in ms, $6 now. The bound on
 * `last_message_at` is written as the index can use it (`rm_conversations_chatbot_recent`: the chatbot, then
 * last messages after now less its quiet period), so the statement reads the conversations in their quiet
 * period, not every conversation of the range (as `last_message_at + quiet > now` did). Exported for the
 * plan's test.
 */
export const ABANDONMENT_PENDING_SQL = `SELECT count(*)::int AS n, min(t.due_at) AS next_due_at
       FROM unnest($4::uuid[], $5::bigint[]) AS q(chatbot_id, quiet_ms)
       JOIN rm_conversations c ON c.chatbot_id = q.chatbot_id
       CROSS JOIN LATERAL (
         SELECT max(m.sent_at) + q.quiet_ms * interval '1 millisecond' AS due_at
           FROM rm_messages m
          WHERE m.conversation_id = c.id AND m.role IN ('user', 'assistant')
       ) t
      WHERE c.org_id = $1 AND c.external_id IS NOT NULL
        AND c.last_message_at >= $2 AND c.last_message_at < $3
        AND c.last_message_at > $6::timestamptz - q.quiet_ms * interval '1 millisecond'
        AND t.due_at > $6`

/**
 * The conversations whose last message is in range and whose chatbot's quiet period has not passed since
 * their last end-user or assistant message, as of `now` (issue 32; trial7's finding: the abandonment count rose for half an hour after
 * the status read up to date). The analysis decides abandonment once the last message is older than the
 * quiet period (detect.ts: dueAt, the last end-user or assistant message's time plus settings.signals.abandonmentAfterMinutes);
 * its due times are in its own table (analysis_signal_state), which no event carries, so they are
 * computed here by the same rule from the conversation's last end-user or assistant message (rm_messages) and
 * the chatbot's settings now.
 * Chatbots with abandonment turned off have nothing waiting.
 */
export async function readAbandonmentPending(
  client: pg.ClientBase,
  scope: RollupScope,
  now: Date,
): Promise<AbandonmentPending> {
  const { rows: bots } = await client.query<{ id: string; settings: Readonly<Record<string, unknown>> }>(
    'SELECT id, settings FROM rm_chatbots WHERE org_id = $1 AND ($2::uuid IS NULL OR id = $2)',
    [scope.orgId, scope.chatbotId ?? null],
  )
  const waiting = bots
    .map((b) => ({ id: b.id, signals: chatbotSignals(b.settings) }))
    .filter((b) => !b.signals.disabled.includes('abandonment'))
  const periods = new Set(waiting.map((b) => b.signals.quietPeriodMs))
  const quietPeriodMinutes = periods.size === 1 ? [...periods][0]! / 60_000 : null
  if (waiting.length === 0) return { conversations: 0, nextDueAt: null, quietPeriodMinutes }
  // Due from the last end-user or assistant message, as detect.ts times it (its talk): a tool's or a system
  // message after it does not put the decision off, and a conversation without talk has none to wait for.
  // The conversation's last message of any role is no earlier, so its test first keeps the messages read few.
  const { rows } = await client.query<{ n: number; next_due_at: Date | null }>(ABANDONMENT_PENDING_SQL, [
    scope.orgId,
    scope.from,
    scope.to,
    waiting.map((b) => b.id),
    waiting.map((b) => b.signals.quietPeriodMs),
    now,
  ])
  const row = rows[0]
  return {
    conversations: row?.n ?? 0,
    nextDueAt: row?.next_due_at ? row.next_due_at.toISOString() : null,
    quietPeriodMinutes,
  }
}
