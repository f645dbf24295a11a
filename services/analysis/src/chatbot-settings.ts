import type pg from 'pg'

/**
 * The analysis service's own record of its chatbots' settings (migration 0019), kept from the chatbot
 * events its consumer applies, in the transaction that records its checkpoint: a chatbot's stream is
 * applied in order, so the row holds the settings of the last event applied.
 */
export async function rememberChatbotSettings(
  client: pg.ClientBase | pg.Pool,
  chatbotId: string,
  settings: Readonly<Record<string, unknown>>,
): Promise<void> {
  await client.query(
    `INSERT INTO analysis_chatbots (chatbot_id, settings) VALUES ($1, $2)
     ON CONFLICT (chatbot_id) DO UPDATE SET settings = EXCLUDED.settings`,
    [chatbotId, settings],
  )
}

/** The settings of those chatbots the consumer has seen created (and not deleted). */
export async function chatbotSettings(
  db: pg.ClientBase | pg.Pool,
  chatbotIds: readonly string[],
): Promise<Map<string, Record<string, unknown>>> {
  if (chatbotIds.length === 0) return new Map()
  const { rows } = await db.query<{ chatbot_id: string; settings: Record<string, unknown> }>(
    'SELECT chatbot_id, settings FROM analysis_chatbots WHERE chatbot_id = ANY($1::uuid[])',
    [[...new Set(chatbotIds)]],
  )
  return new Map(rows.map((r) => [r.chatbot_id, r.settings]))
}
