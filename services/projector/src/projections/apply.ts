import type { JournalRecord } from '@cas/eventlog'
import type { DomainEvent } from '@cas/events'
import { type Keyring, openRecords } from '@cas/keyring'
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
  'rm_chatbot_user_hours',
  'rm_daily_topics',
  'rm_topics',
  'rm_themes',
  'rm_conversation_signals',
]

/**
 * Applies a batch of events (already deduplicated by the consumer) to the read models, inside the
 * consumer's transaction, opening sealed payloads with their chatbots' data keys. Invalid events and
 * events of deleted chatbots (their key destroyed, or seen deleted here) are dropped with a reason.
 *
 * Set-based: the events are gathered per row, folded into the rows to write by pure functions
 * (chatbot-fold.ts, conversation-fold.ts, message-fold.ts, rollup-deltas.ts: given the events and the stored rows they
 * continue, the rows and rollup deltas to write), and written with one multi-row statement per table
 * (see ReadModelChanges), giving the same rows as applying the events one at a time. A chatbot
 * deletion or a conversation erasure reads and deletes what is already written: the changes gathered
 * before it are written first.
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
  const changes = new ReadModelChanges()
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
      // Write what the batch gathered, take the chatbot out of the organization's rollups, then clear it all.
      await changes.flush(client)
      await changes.rollups.removeChatbot(client, event.orgId, event.chatbotId)
      await deleteChatbot(client, event.chatbotId, event.orgId, event.occurredAt)
      deleted.add(event.chatbotId)
    } else if (event.type === 'conversation.erased') {
      await changes.flush(client)
      await applyErased(client, event, changes.rollups)
      erased.add(event.streamId)
    } else {
      changes.add(event)
    }
    stats.applied++
  }
  await changes.flush(client)
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
        this.topics.add(event)
        return
      case 'chatbot.created':
      case 'chatbot.renamed':
      case 'chatbot.settings-changed':
      case 'chatbot.key-rotated':
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
