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

/** A chatbot's row as the gateway's table and the query's read model both hold it. */
export interface ChatbotRow {
  id: string
  name: string
  api_key_prefix: string
  settings: Record<string, unknown>
  created_at: Date
}

/**
 * The API's view of a chatbot row. Each service reads its own table (the gateway its `chatbots`, the
 * query service the projector's `rm_chatbots`) and answers through this, so that both answer alike.
 */
export function chatbotView(row: ChatbotRow): ChatbotView {
  return {
    id: row.id,
    name: row.name,
    api_key_prefix: row.api_key_prefix,
    settings: row.settings,
    created_at: row.created_at.toISOString(),
  }
}
