import type pg from 'pg'

/** A chatbot as the API returns it (spec.md: id, name, api_key_prefix, settings, created_at). */
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
export async function listChatbots(pool: pg.Pool, orgId: string): Promise<ChatbotView[]> {
  const { rows } = await pool.query<ChatbotRow>(
    `SELECT ${COLUMNS} FROM chatbots WHERE org_id = $1 ORDER BY created_at, id`,
    [orgId],
  )
  return rows.map(toView)
}

/** One chatbot of the organization, or undefined (also when it belongs to another organization). */
export async function findChatbot(
  pool: pg.Pool,
  orgId: string,
  id: string,
): Promise<ChatbotView | undefined> {
  const { rows } = await pool.query<ChatbotRow>(
    `SELECT ${COLUMNS} FROM chatbots WHERE id = $1 AND org_id = $2`,
    [id, orgId],
  )
  return rows[0] && toView(rows[0])
}
