import type { JournalRecord } from '@cas/eventlog'
import type { DomainEvent } from '@cas/events'
import { type Keyring, openRecords } from '@cas/keyring'
import type pg from 'pg'
import { applyConversationAnalyzed, applyMessagesAnalyzed } from './analysis.ts'
import { applyMessagesCaptured, applyMetadataUpdated, applyStarted } from './conversations.ts'
import { applyErased } from './erasure.ts'
import { RollupBatch } from './rollups.ts'

export interface ProjectionStats {
  applied: number
  /** Events dropped, by reason (each also logged). */
  dropped: Record<string, number>
}

export type DropLog = (reason: string, record: JournalRecord, detail?: string) => void

/** Tables holding rows of one chatbot, cleared when it is deleted. */
const CHATBOT_TABLES = [
  'rm_messages',
  'rm_conversations',
  'rm_hourly_stats',
  'rm_hourly_topics',
  'rm_hourly_activity',
]

/**
 * Applies a batch of events (already deduplicated by the consumer) to the read models, inside the
 * consumer's transaction, opening sealed payloads with their chatbots' data keys. Invalid events and
 * events of deleted chatbots (their key destroyed, or seen deleted here) are dropped with a reason.
 */
export async function applyToReadModels(
  client: pg.ClientBase,
  keyring: Keyring,
  records: readonly JournalRecord[],
  stats: ProjectionStats,
  onDrop: DropLog = () => {},
): Promise<void> {
  const drop = (reason: string, record: JournalRecord, detail?: string) => {
    stats.dropped[reason] = (stats.dropped[reason] ?? 0) + 1
    onDrop(reason, record, detail)
  }
  const deleted = await deletedChatbots(client, [...new Set(records.map((r) => r.chatbotId))])
  const erased = await erasedConversations(client, [...new Set(records.map((r) => r.streamId))])
  const rollups = new RollupBatch()
  for (const opened of await openRecords(client, keyring, records)) {
    const record = opened.record
    if (!opened.ok) {
      // A destroyed data key means the chatbot was deleted: its events are skipped as deleted.
      drop(opened.reason === 'key_destroyed' ? 'chatbot_deleted' : opened.reason, record, opened.detail)
      continue
    }
    const event = opened.event
    if (deleted.has(event.chatbotId)) {
      drop('chatbot_deleted', record)
      continue
    }
    if (event.type !== 'chatbot.deleted' && erased.has(event.streamId)) {
      drop('conversation_erased', record)
      continue
    }
    if (event.type === 'chatbot.deleted') {
      // Rollups first hold the batch's pending deltas for this chatbot: write them, then clear it all.
      await rollups.flush(client)
      await deleteChatbot(client, event.chatbotId, event.orgId, event.occurredAt)
      deleted.add(event.chatbotId)
    } else if (event.type === 'conversation.erased') {
      // Same: the batch's pending deltas of this conversation must land before they are taken back.
      await rollups.flush(client)
      await applyErased(client, event, rollups)
      erased.add(event.streamId)
    } else {
      await applyEvent(client, event, rollups)
    }
    stats.applied++
  }
  await rollups.flush(client)
}

async function applyEvent(client: pg.ClientBase, event: DomainEvent, rollups: RollupBatch): Promise<void> {
  switch (event.type) {
    case 'conversation.started':
      return applyStarted(client, event)
    case 'conversation.metadata-updated':
      return applyMetadataUpdated(client, event)
    case 'conversation.messages-captured':
      return applyMessagesCaptured(client, event, rollups)
    case 'analysis.messages-analyzed':
      return applyMessagesAnalyzed(client, event, rollups)
    case 'analysis.conversation-analyzed':
      return applyConversationAnalyzed(client, event)
    // Chatbot state is the gateway's inline projection (the chatbots table); failures change no read model.
    case 'chatbot.created':
    case 'chatbot.renamed':
    case 'chatbot.settings-changed':
    case 'chatbot.key-rotated':
    case 'chatbot.deleted':
    case 'conversation.erased':
    case 'analysis.failed':
      return
    default: {
      const unhandled: never = event
      throw new Error(`unhandled event ${JSON.stringify(unhandled)}`)
    }
  }
}

async function erasedConversations(client: pg.ClientBase, streamIds: string[]): Promise<Set<string>> {
  const { rows } = await client.query<{ conversation_id: string }>(
    'SELECT conversation_id FROM rm_erased_conversations WHERE conversation_id = ANY($1)',
    [streamIds],
  )
  return new Set(rows.map((r) => r.conversation_id))
}

async function deletedChatbots(client: pg.ClientBase, chatbotIds: string[]): Promise<Set<string>> {
  const { rows } = await client.query<{ chatbot_id: string }>(
    'SELECT chatbot_id FROM rm_deleted_chatbots WHERE chatbot_id = ANY($1)',
    [chatbotIds],
  )
  return new Set(rows.map((r) => r.chatbot_id))
}

/** Removes every read-model row of the chatbot and remembers it, so late events never bring rows back. */
async function deleteChatbot(client: pg.ClientBase, chatbotId: string, orgId: string, at: string) {
  for (const table of CHATBOT_TABLES)
    await client.query(`DELETE FROM ${table} WHERE chatbot_id = $1`, [chatbotId])
  await client.query(
    'INSERT INTO rm_deleted_chatbots (chatbot_id, org_id, deleted_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [chatbotId, orgId, at],
  )
}
