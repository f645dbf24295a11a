import { appendToStream, type JournalRecord } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type pg from 'pg'

export type ErasureReason = 'retention' | 'end-user-erasure'

interface Erasable {
  id: string
  org_id: string
  chatbot_id: string
}

/**
 * Erases conversations inside the caller's transaction: each gets a conversation.erased event (so every
 * read model, and any replay, removes it), its earlier events are purged from the journal, and its capture
 * state is deleted (a later capture with the same conversationId starts a new conversation). `where` selects
 * capture_conversations rows; they are locked first, in the order captures lock them. Returns the
 * conversation.erased events it appended, one per conversation erased.
 */
export async function eraseConversations(
  client: pg.ClientBase,
  where: { sql: string; params: unknown[] },
  reason: ErasureReason,
  now: () => Date,
  /** Tracing metadata for the erased events. */
  trace?: Readonly<Record<string, string>>,
): Promise<JournalRecord[]> {
  const { rows } = await client.query<Erasable>(
    `SELECT id, org_id, chatbot_id FROM capture_conversations WHERE ${where.sql} ORDER BY id FOR UPDATE`,
    where.params,
  )
  if (rows.length === 0) return []
  const erased: JournalRecord[] = []
  for (const c of rows) {
    const { records } = await appendToStream(
      client,
      {
        streamType: 'conversation',
        streamId: c.id,
        orgId: c.org_id,
        chatbotId: c.chatbot_id,
        expectedVersion: 'any',
        events: [newEvent('conversation.erased', { reason })],
        metadata: trace,
      },
      { now },
    )
    erased.push(records[0]!)
  }
  const ids = rows.map((c) => c.id)
  await client.query(
    `DELETE FROM event_journal WHERE stream_id = ANY($1) AND stream_type IN ('conversation', 'analysis')
        AND NOT event_id = ANY($2)`,
    [ids, erased.map((r) => r.id)],
  )
  // Events a consumer set aside hold the same personal data (libs/eventlog/src/dead-letters.ts).
  await client.query('DELETE FROM dead_letters WHERE stream_id = ANY($1)', [ids])
  await client.query('DELETE FROM capture_conversations WHERE id = ANY($1)', [ids])
  return erased
}
