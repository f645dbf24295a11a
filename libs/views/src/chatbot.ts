import type pg from 'pg'
import { z } from 'zod'

/** A chatbot as the API returns it (spec.md), in list items, reads and command responses alike. */
export const chatbotSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  api_key_prefix: z.string().describe('The first 13 characters of the API key and `…`.'),
  settings: z.record(z.string(), z.unknown()),
  created_at: z.string(),
})

export interface ChatbotView {
  id: string
  name: string
  api_key_prefix: string
  settings: Record<string, unknown>
  created_at: string
}

interface ChatbotRow {
  id: string
  name: string
  api_key_prefix: string
  settings: Record<string, unknown>
  created_at: Date
}

const COLUMNS = 'id, name, api_key_prefix, settings, created_at'

function toView(row: ChatbotRow): ChatbotView {
  return { ...row, created_at: row.created_at.toISOString() }
}

/** The organization's chatbots, oldest first. */
export async function listChatbots(db: pg.Pool | pg.ClientBase, orgId: string): Promise<ChatbotView[]> {
  const { rows } = await db.query<ChatbotRow>(
    `SELECT ${COLUMNS} FROM chatbots WHERE org_id = $1 ORDER BY created_at, id`,
    [orgId],
  )
  return rows.map(toView)
}

/** One chatbot of the organization, or undefined (also when it belongs to another organization). */
export async function findChatbot(
  db: pg.Pool | pg.ClientBase,
  orgId: string,
  id: string,
): Promise<ChatbotView | undefined> {
  const { rows } = await db.query<ChatbotRow>(
    `SELECT ${COLUMNS} FROM chatbots WHERE id = $1 AND org_id = $2`,
    [id, orgId],
  )
  return rows[0] && toView(rows[0])
}
