import { type ConsumerPipeline, drop, type JournalRecord, ok, pipeline, type Step } from '@cas/eventlog'
import type { DomainEvent, RecordedEvent } from '@cas/events'
import { type Keyring, openStep } from '@cas/keyring'
import type pg from 'pg'
import { ChatbotBatch } from './chatbot-fold.ts'
import { writeChatbots } from './chatbots.ts'
import { ConversationBatch } from './conversation-fold.ts'
import { writeConversations } from './conversations.ts'
import { applyErased } from './erasure.ts'
import { MessageBatch } from './message-fold.ts'
import { writeMessages } from './messages.ts'
import { RollupBatch } from './rollups.ts'
import { SignalChanges } from './signals.ts'
import { TopicChanges } from './topics.ts'

export interface ProjectionStats {
  applied: number
  /** Events dropped, by reason (each also logged, but a deleted chatbot's). */
  dropped: Record<string, number>
}

export type Log = (msg: string, fields?: Record<string, unknown>) => void

/** Tables holding rows of one chatbot, cleared when it is deleted. */
const CHATBOT_TABLES = [
  'rm_messages',
  'rm_conversations',
  'rm_hourly_stats',
  'rm_hourly_topics',
  'rm_hourly_activity',
  'rm_chatbot_user_hours',
  'rm_daily_topics',
  'rm_topics',
  'rm_themes',
  'rm_topic_reclustering',
  'rm_conversation_signals',
]

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
    const deleted = await deletedChatbots(client, [...new Set(items.map((i) => i.value.chatbotId))])
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
      if (event.type === 'chatbot.deleted') {
        // Write what the batch gathered, take the chatbot out of the organization's rollups, then clear it all.
        await changes.flush(client)
        await changes.rollups.removeChatbot(client, event.orgId, event.chatbotId)
        await deleteChatbot(client, event.chatbotId, event.orgId, event.occurredAt)
      } else if (event.type === 'conversation.erased') {
        await changes.flush(client)
        await applyErased(client, event, changes.rollups)
      } else {
        changes.add(event)
      }
      stats.applied++
    }
    await changes.flush(client)
    return items.map(() => ok(undefined))
  }
}

/** The changes a run of events makes to the read models, gathered to be written together. */
export class ReadModelChanges {
  readonly rollups = new RollupBatch()
  private readonly chatbots = new ChatbotBatch()
  private readonly conversations = new ConversationBatch()
  private readonly messages = new MessageBatch()
  private readonly topics = new TopicChanges()
  private readonly signals = new SignalChanges()

  add(event: DomainEvent): void {
    switch (event.type) {
      case 'conversation.started':
      case 'conversation.metadata-updated':
        this.conversations.add(event)
        return
      case 'analysis.conversation-analyzed':
        this.conversations.add(event)
        this.topics.addNamed(event, event.payload.topics)
        return
      case 'conversation.messages-captured':
        this.conversations.add(event)
        this.messages.addCaptured(event)
        return
      case 'analysis.messages-analyzed':
        this.messages.addAnalyzed(event)
        for (const r of event.payload.results) this.topics.addNamed(event, r.topics)
        return
      case 'analysis.topic-discovered':
      case 'analysis.topic-relabeled':
      case 'analysis.topic-merged':
      case 'analysis.topic-split':
      case 'analysis.topic-retired':
      case 'analysis.topic-renamed-by-user':
      case 'analysis.topic-hidden':
      case 'analysis.topic-unhidden':
      case 'analysis.topic-merged-by-user':
      case 'analysis.themes-assigned':
      case 'analysis.topics-settling':
      case 'analysis.topics-reclustered':
        this.topics.add(event)
        return
      case 'chatbot.created':
      case 'chatbot.renamed':
      case 'chatbot.settings-changed':
      case 'chatbot.key-rotated':
      case 'chatbot.topic-rename-requested':
      case 'chatbot.topic-hide-requested':
      case 'chatbot.topic-unhide-requested':
      case 'chatbot.topic-merge-requested':
        this.chatbots.add(event)
        return
      case 'analysis.signals-detected':
        this.signals.add(event)
        return
      // Failures change no read model.
      case 'analysis.failed':
        return
      // Members and invitations are the gateway's (memberships, invitations, audit_log); the projector
      // does not subscribe to the organization stream, so these only reach here from a foreign batch.
      case 'organization.created':
      case 'organization.member-invited':
      case 'organization.invitation-revoked':
      case 'organization.member-joined':
      case 'organization.member-role-changed':
      case 'organization.member-removed':
      case 'organization.deleted':
        return
      // Barriers: the caller writes what is gathered, then applies them itself.
      case 'chatbot.deleted':
      case 'conversation.erased':
        throw new Error(`${event.type} is applied on its own, after a flush`)
      default: {
        const unhandled: never = event
        throw new Error(`unhandled event ${JSON.stringify(unhandled)}`)
      }
    }
  }

  /**
   * Writes everything gathered: chatbots, topics, conversations, messages, then the rollups both add
   * to. In this order (conversations locked before their messages) in every transaction, so that two
   * consumers touching one conversation (its capture and its analysis come on different topics) never
   * deadlock.
   */
  async flush(client: pg.ClientBase): Promise<void> {
    await writeChatbots(client, this.chatbots)
    await this.topics.flush(client)
    await writeConversations(client, this.conversations, this.rollups)
    await writeMessages(client, this.messages, this.rollups)
    await this.signals.flush(client)
    await this.rollups.flush(client)
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
  await client.query('DELETE FROM rm_chatbots WHERE id = $1', [chatbotId])
  await client.query(
    'INSERT INTO rm_deleted_chatbots (chatbot_id, org_id, deleted_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [chatbotId, orgId, at],
  )
}
