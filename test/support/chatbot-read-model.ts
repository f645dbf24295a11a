import { withTransaction } from '@cas/db'
import { readStream } from '@cas/eventlog'
import { type ChatbotEvent, parseRecordedEvent } from '@cas/events'
import type pg from 'pg'
import { ChatbotChanges } from '../../services/projector/src/projections/chatbot-fold.ts'
import { writeChatbots } from '../../services/projector/src/projections/chatbots.ts'
import { SignalPeriodChanges } from '../../services/projector/src/projections/signal-periods.ts'

/**
 * Stands in, for the many tests of the dashboard's HTTP surface that run no projector, for the part of the
 * projector the chatbot reads depend on: brings rm_chatbots (and the signal periods the signals report
 * reads beside it) up to every chatbot stream's written version, with the projector's own folds and
 * writes, before a read. Writes only move a row forward in stream
 * version, so a test's own projector may run beside it. A deleted chatbot is left alone: the query
 * service does not show it (its key is destroyed) and the projector removes its row.
 */
export async function catchUpChatbotReadModel(pool: pg.Pool): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ stream_id: string }>(
      `SELECT s.stream_id FROM event_streams s
        WHERE s.stream_type = 'chatbot'
          AND NOT EXISTS (SELECT FROM rm_chatbots c WHERE c.id = s.stream_id AND c.stream_version >= s.version)
          AND NOT EXISTS (SELECT FROM chatbot_data_keys k WHERE k.chatbot_id = s.stream_id AND k.wrapped_key IS NULL)
        ORDER BY s.stream_id`,
    )
    if (rows.length === 0) return
    const batch = new ChatbotChanges()
    const periods = new SignalPeriodChanges()
    for (const { stream_id } of rows) {
      for (const record of await readStream(client, 'chatbot', stream_id)) {
        const event = parseRecordedEvent(record) as ChatbotEvent
        if (event.type === 'chatbot.deleted') continue
        batch.add(event)
        if (event.type === 'chatbot.created' || event.type === 'chatbot.settings-changed') periods.add(event)
      }
    }
    await writeChatbots(client, batch)
    await periods.flush(client)
  })
}
