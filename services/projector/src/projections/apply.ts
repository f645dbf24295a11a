import { type ConsumerPipeline, drop, type JournalRecord, ok, pipeline, type Step } from '@cas/eventlog'
import type { RecordedEvent } from '@cas/events'
import { type Keyring, openStep } from '@cas/keyring'
import type pg from 'pg'
import { applyChatbotDeleted, applyErased } from './barriers.ts'
import { ReadModelChanges } from './registry.ts'

export interface ProjectionStats {
  applied: number
  /** Events dropped, by reason (each also logged, but a deleted chatbot's). */
  dropped: Record<string, number>
}

export type Log = (msg: string, fields?: Record<string, unknown>) => void

/**
 * The projector's steps (ConsumerPipeline in @cas/eventlog), run over each batch (already deduplicated
 * by the consumer) inside the consumer's transaction: open the sealed payloads with their chatbots' data
 * keys, skip the events of deleted chatbots and erased conversations, then apply the rest to the read
 * models (`handleStep`). Drops are counted by reason in `stats.dropped`, the consumer's
 * `stats.droppedEvents`; a deleted chatbot's are not logged.
 */
export function projectionPipeline(
  keyring: Keyring,
  stats: ProjectionStats,
  opts: { readonly consumer?: string; readonly log?: Log } = {},
): ConsumerPipeline<void> {
  return pipeline({
    consumer: opts.consumer ?? 'projector',
    quiet: ['chatbot_deleted'],
    log: opts.log,
    drops: stats.dropped,
  })
    .pipe(openStep(keyring))
    .pipe(skipDeletedStep())
    .pipe(handleStep(stats))
}

/** Applies a batch to the read models: the projector's steps (`projectionPipeline`) run over it. */
export async function applyToReadModels(
  client: pg.ClientBase,
  keyring: Keyring,
  records: readonly JournalRecord[],
  stats: ProjectionStats,
  log?: Log,
): Promise<void> {
  await projectionPipeline(keyring, stats, { log }).run(records, client)
}

/**
 * Drops the events of chatbots deleted (`chatbot_deleted`) and of conversations erased
 * (`conversation_erased`), before this batch or earlier in it: late events never bring rows back.
 */
function skipDeletedStep(): Step<RecordedEvent, RecordedEvent> {
  return async (items, client) => {
    const deleted = await readModelDeletedChatbots(client, [...new Set(items.map((i) => i.value.chatbotId))])
    const erased = await erasedConversations(client, [...new Set(items.map((i) => i.value.streamId))])
    return items.map(({ value: event }) => {
      if (deleted.has(event.chatbotId)) return drop('chatbot_deleted')
      if (event.type === 'chatbot.deleted') deleted.add(event.chatbotId)
      else if (erased.has(event.streamId)) return drop('conversation_erased')
      else if (event.type === 'conversation.erased') erased.add(event.streamId)
      return ok(event)
    })
  }
}

/**
 * Applies the events to the read models. Set-based: the events are gathered per row, folded into the
 * rows to write by pure functions (chatbot-fold.ts, conversation-fold.ts, message-fold.ts,
 * rollup-deltas.ts: given the events and the stored rows they continue, the rows and rollup deltas to
 * write), and written with one multi-row statement per table (see ReadModelChanges), giving the same
 * rows as applying the events one at a time. A chatbot deletion or a conversation erasure reads and
 * deletes what is already written: the changes gathered before it are written first.
 */
function handleStep(stats: ProjectionStats): Step<RecordedEvent, void> {
  return async (items, client) => {
    const changes = new ReadModelChanges()
    for (const { value: event } of items) {
      switch (event.type) {
        // The barriers (registry.ts BARRIERS): what each read model declares for them (barriers.ts),
        // after what the batch gathered is written.
        case 'chatbot.deleted':
          await changes.flush(client)
          await applyChatbotDeleted(client, event, changes.rollups)
          break
        case 'conversation.erased':
          await changes.flush(client)
          await applyErased(client, event, changes.rollups)
          break
        // Every other event, to the read models that fold it (registry.ts, which places every type).
        default:
          changes.add(event)
      }
      stats.applied++
    }
    await changes.flush(client)
    return items.map(() => ok(undefined))
  }
}

async function erasedConversations(client: pg.ClientBase, streamIds: string[]): Promise<Set<string>> {
  const { rows } = await client.query<{ conversation_id: string }>({
    name: 'cas-projector-erased-conversations',
    text: 'SELECT conversation_id FROM rm_erased_conversations WHERE conversation_id = ANY($1)',
    values: [streamIds],
  })
  return new Set(rows.map((r) => r.conversation_id))
}

/** Of these chatbots, those the read models recorded as deleted (rm_deleted_chatbots). */
async function readModelDeletedChatbots(client: pg.ClientBase, chatbotIds: string[]): Promise<Set<string>> {
  const { rows } = await client.query<{ chatbot_id: string }>({
    name: 'cas-projector-deleted-chatbots',
    text: 'SELECT chatbot_id FROM rm_deleted_chatbots WHERE chatbot_id = ANY($1)',
    values: [chatbotIds],
  })
  return new Set(rows.map((r) => r.chatbot_id))
}
