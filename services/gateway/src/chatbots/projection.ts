import { type ChatbotRow, type ChatbotView, chatbotView } from '@cas/views'
import type pg from 'pg'
import type { ChatbotState } from './chatbot.ts'

/**
 * The inline projection of a chatbot stream: the `chatbots` row mirrors the state after the command's
 * events, written in the same transaction. Deleting the row cascades to its key and its capture state.
 */
export async function projectChatbot(
  client: pg.ClientBase,
  chatbotId: string,
  state: ChatbotState,
  streamVersion: number,
  now: Date,
): Promise<void> {
  if (state.status !== 'active') {
    await client.query('DELETE FROM chatbots WHERE id = $1', [chatbotId])
    return
  }
  await client.query(
    `INSERT INTO chatbots (id, org_id, name, settings, api_key_prefix, created_at, updated_at, stream_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, settings = EXCLUDED.settings,
       api_key_prefix = EXCLUDED.api_key_prefix, updated_at = EXCLUDED.updated_at,
       stream_version = EXCLUDED.stream_version`,
    [
      chatbotId,
      state.orgId,
      state.name,
      JSON.stringify(state.settings),
      state.apiKeyPrefix,
      state.createdAt,
      now,
      streamVersion,
    ],
  )
}

/**
 * The chatbot as its command left it, read back for the command's response from the inline projection
 * (the dashboard's reads are the query service's, from its own read model); undefined when it is not one
 * of the organization's.
 */
export async function readChatbot(
  db: pg.Pool | pg.ClientBase,
  orgId: string,
  id: string,
): Promise<ChatbotView | undefined> {
  const { rows } = await db.query<ChatbotRow>(
    'SELECT id, name, api_key_prefix, settings, created_at FROM chatbots WHERE id = $1 AND org_id = $2',
    [id, orgId],
  )
  return rows[0] && chatbotView(rows[0])
}
