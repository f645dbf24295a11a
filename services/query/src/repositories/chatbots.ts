import { type ChatbotRow, type ChatbotView, chatbotView } from '@cas/views'
import type pg from 'pg'

/**
 * The chatbots as the query service knows them: their data from the projector's read model (rm_chatbots),
 * whether they exist from the journal's stream registry (event_streams: a chatbot exists once its stream
 * has an event), and whether they are deleted from the one sign of it, their data key destroyed
 * (deleted_chatbots, migration 0020), which holds from the moment the deletion commits. Every statement
 * runs under row-level security, confined to the organization of its transaction.
 */

const COLUMNS = 'c.id, c.name, c.api_key_prefix, c.settings, c.created_at'
const NOT_DELETED = (id: string) => `NOT EXISTS (SELECT FROM deleted_chatbots d WHERE d.chatbot_id = ${id})`

/** The organization's chatbots, oldest first. */
export async function listChatbots(client: pg.ClientBase, orgId: string): Promise<ChatbotView[]> {
  const { rows } = await client.query<ChatbotRow>(
    `SELECT ${COLUMNS} FROM rm_chatbots c WHERE c.org_id = $1 AND ${NOT_DELETED('c.id')}
      ORDER BY c.created_at, c.id`,
    [orgId],
  )
  return rows.map(chatbotView)
}

/** One chatbot of the organization, or undefined (also when it belongs to another organization). */
export async function findChatbot(
  client: pg.ClientBase,
  orgId: string,
  id: string,
): Promise<ChatbotView | undefined> {
  const { rows } = await client.query<ChatbotRow>(
    `SELECT ${COLUMNS} FROM rm_chatbots c WHERE c.id = $1 AND c.org_id = $2 AND ${NOT_DELETED('c.id')}`,
    [id, orgId],
  )
  return rows[0] && chatbotView(rows[0])
}

/**
 * How many of the organization's chatbots (or of this one) the read model has not caught up with: those
 * not deleted whose stream the write side has taken further than the row's stream version (or that have
 * no row yet). Read-your-writes waits until none is left.
 */
export async function chatbotsBehind(client: pg.ClientBase, orgId: string, id?: string): Promise<number> {
  const { rows } = await client.query<{ behind: number }>(
    `SELECT count(*)::int AS behind FROM event_streams s
      WHERE s.stream_type = 'chatbot' AND s.org_id = $1 AND ($2::uuid IS NULL OR s.stream_id = $2::uuid)
        AND ${NOT_DELETED('s.stream_id')}
        AND NOT EXISTS (SELECT FROM rm_chatbots c WHERE c.id = s.stream_id AND c.stream_version >= s.version)`,
    [orgId, id ?? null],
  )
  return rows[0]?.behind ?? 0
}

/**
 * Whether the chatbot is one of the organization's and not deleted. Answered from the stream registry, so
 * it holds from the moment the chatbot's creation commits, without waiting for the read model.
 */
export async function chatbotInOrg(client: pg.ClientBase, orgId: string, id: string): Promise<boolean> {
  const { rows } = await client.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT FROM event_streams s
                     WHERE s.stream_type = 'chatbot' AND s.stream_id = $1 AND s.org_id = $2
                       AND ${NOT_DELETED('s.stream_id')}) AS found`,
    [id, orgId],
  )
  return rows[0]?.found === true
}
