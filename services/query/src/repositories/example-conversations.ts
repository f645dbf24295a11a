import type pg from 'pg'

/** An example conversation, as a topic or Needs attention shows it for a support lead to open. */
export interface ExampleConversation {
  id: string
  /** The caller's conversation id. */
  conversationId: string
  firstMessageAt: string
  lastMessageAt: string
  /** The end user's sentiment over the conversation (positive, neutral, negative), null before analysis. */
  sentiment: string | null
  /**
   * The conversation's first end-user message, as the conversation list previews it (one line, at most
   * 160 characters, an ellipsis ending one that was cut); null when the end user has said nothing yet.
   */
  excerpt: string | null
}

/**
 * The given conversations of the organization, by id, in one statement whatever the topics: their
 * preview is kept on the conversation row by the projector (migrations/0027_conversation-preview.sql),
 * so no message is read. An id of another organization is never answered, nor a row whose conversation
 * has not arrived yet (its analysis came first: no caller's id, no times).
 */
export async function readExampleConversations(
  client: pg.ClientBase,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, ExampleConversation>> {
  const out = new Map<string, ExampleConversation>()
  if (ids.length === 0) return out
  const { rows } = await client.query<{
    id: string
    external_id: string
    first_message_at: Date
    last_message_at: Date
    sentiment_label: string | null
    preview: string | null
  }>(
    `SELECT id, external_id, first_message_at, last_message_at, sentiment_label, preview FROM rm_conversations
      WHERE org_id = $1 AND id = ANY($2::uuid[]) AND external_id IS NOT NULL`,
    [orgId, [...new Set(ids)]],
  )
  for (const r of rows) {
    out.set(r.id, {
      id: r.id,
      conversationId: r.external_id,
      firstMessageAt: r.first_message_at.toISOString(),
      lastMessageAt: r.last_message_at.toISOString(),
      sentiment: r.sentiment_label,
      excerpt: r.preview,
    })
  }
  return out
}
