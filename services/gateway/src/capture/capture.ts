import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { type NewEvent, newEvent } from '@cas/events'
import { AppError } from '@cas/http'
import { dataKeyFor, type Keyring, type StoredDataKey, sealEvents, unwrapStored } from '@cas/keyring'
import type pg from 'pg'
import { analysisEnabled, customFieldSchema } from '../chatbots/settings.ts'
import {
  type ConversationMetadata,
  customFieldWarnings,
  incomingMetadata,
  mergeMetadata,
  sameMetadata,
} from './metadata.ts'
import type { CaptureBody, CaptureMessage } from './schema.ts'

export interface CaptureResult {
  readonly conversationId: string
  readonly messagesStored: number
  readonly analysisQueued: boolean
  readonly warnings: string[]
  /** The request used deprecated fields (answered with a Deprecation header). */
  readonly deprecated: boolean
}

interface ChatbotRow extends StoredDataKey {
  chatbot_id: string
  org_id: string
  settings: Record<string, unknown>
}

interface RegistryRow {
  id: string
  end_user: ConversationMetadata['user']
  end_user_organization: ConversationMetadata['organization']
  session: ConversationMetadata['session']
  custom: ConversationMetadata['custom']
}

/**
 * One capture, in one transaction: re-check the key, register the conversation, record the new message
 * ids, merge the metadata and append the events. A returned result is durable; a thrown error leaves
 * nothing behind.
 *
 * Locks, in this order: the key and chatbot rows (shared: a rotation or deletion committing first makes
 * this capture a 401, one committing after waits for it), the conversation's registry row (concurrent
 * captures of one conversation take turns, so metadata merges never interleave), then the ledger's
 * primary keys (exactly one of several concurrent captures of a message id stores it).
 */
export async function capture(
  pool: pg.Pool,
  keyring: Keyring,
  keyHash: Buffer,
  body: CaptureBody,
  now: () => Date,
): Promise<CaptureResult> {
  const { metadata: incoming, deprecated } = incomingMetadata(body)
  const receivedAt = now().toISOString()
  const messages = firstOfEachId(body.messages).map((m) => ({
    id: m.id,
    role: m.role,
    content: m.content,
    sentAt: m.sentAt ? new Date(m.sentAt).toISOString() : receivedAt,
  }))

  return withTransaction(pool, async (client) => {
    const { rows: keys } = await client.query<ChatbotRow>(
      `SELECT c.id AS chatbot_id, c.org_id, c.settings, d.wrapped_key, d.master_key_id
         FROM chatbot_api_keys k JOIN chatbots c ON c.id = k.chatbot_id
         LEFT JOIN chatbot_data_keys d ON d.chatbot_id = c.id
        WHERE k.key_hash = $1 FOR SHARE OF k, c`,
      [keyHash],
    )
    const chatbot = keys[0]
    if (!chatbot) throw new AppError('unauthorized', 'The API key is not valid.')

    const { conversation, isNew } = await registerConversation(
      client,
      chatbot,
      body.conversationId,
      incoming,
      now(),
      latestSentAt(messages),
    )
    const stored = metadataOf(conversation)
    const merged = isNew ? incoming : mergeMetadata(stored, incoming)
    const metadataChanged = !isNew && !sameMetadata(stored, merged)
    if (metadataChanged) {
      await client.query(
        `UPDATE capture_conversations SET end_user = $2, end_user_organization = $3, session = $4, custom = $5
          WHERE id = $1`,
        [conversation.id, merged.user, merged.organization, merged.session, merged.custom],
      )
    }

    const { rows: inserted } = await client.query<{ message_id: string }>(
      `INSERT INTO capture_message_ids (conversation_id, message_id) SELECT $1, unnest($2::text[])
       ON CONFLICT DO NOTHING RETURNING message_id`,
      [conversation.id, messages.map((m) => m.id)],
    )
    const newIds = new Set(inserted.map((r) => r.message_id))
    const newMessages = messages.filter((m) => newIds.has(m.id))
    if (!isNew && newMessages.length > 0) {
      await client.query(
        'UPDATE capture_conversations SET last_message_at = GREATEST(last_message_at, $2) WHERE id = $1',
        [conversation.id, latestSentAt(newMessages)],
      )
    }
    const analysisRequested = newMessages.length > 0 && analysisEnabled(chatbot.settings)

    const events: NewEvent[] = []
    if (isNew)
      events.push(newEvent('conversation.started', { conversationId: body.conversationId, ...merged }))
    else if (metadataChanged) events.push(newEvent('conversation.metadata-updated', merged))
    if (newMessages.length > 0) {
      events.push(
        newEvent('conversation.messages-captured', { messages: newMessages, receivedAt, analysisRequested }),
      )
    }
    if (events.length > 0) {
      // A live chatbot's key is never destroyed (deletion takes the lock this transaction holds).
      const stored = unwrapStored(keyring, chatbot.chatbot_id, chatbot)
      const dataKey =
        stored instanceof Buffer
          ? stored
          : await dataKeyFor(client, keyring, chatbot.chatbot_id, chatbot.org_id)
      await appendToStream(
        client,
        {
          streamType: 'conversation',
          streamId: conversation.id,
          orgId: chatbot.org_id,
          chatbotId: chatbot.chatbot_id,
          expectedVersion: 'any',
          events: sealEvents(dataKey, { chatbotId: chatbot.chatbot_id, streamId: conversation.id }, events),
        },
        { now },
      )
    }
    return {
      conversationId: conversation.id,
      messagesStored: newMessages.length,
      analysisQueued: analysisRequested,
      warnings: customFieldWarnings(incoming.custom, customFieldSchema(chatbot.settings)),
      deprecated,
    }
  })
}

/** The conversation's registry row, locked for this transaction; created (with `metadata`) when new. */
async function registerConversation(
  client: pg.ClientBase,
  chatbot: ChatbotRow,
  externalId: string,
  metadata: ConversationMetadata,
  now: Date,
  lastMessageAt: string,
): Promise<{ conversation: RegistryRow; isNew: boolean }> {
  const created = await client.query<RegistryRow>(
    `INSERT INTO capture_conversations
       (id, chatbot_id, org_id, external_id, end_user, end_user_organization, session, custom, created_at,
        last_message_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (chatbot_id, external_id) DO NOTHING
     RETURNING id, end_user, end_user_organization, session, custom`,
    [
      randomUUID(),
      chatbot.chatbot_id,
      chatbot.org_id,
      externalId,
      metadata.user,
      metadata.organization,
      metadata.session,
      metadata.custom,
      now,
      lastMessageAt,
    ],
  )
  if (created.rows[0]) return { conversation: created.rows[0], isNew: true }
  const { rows } = await client.query<RegistryRow>(
    `SELECT id, end_user, end_user_organization, session, custom FROM capture_conversations
      WHERE chatbot_id = $1 AND external_id = $2 FOR UPDATE`,
    [chatbot.chatbot_id, externalId],
  )
  if (!rows[0]) throw new Error('conversation vanished while being registered')
  return { conversation: rows[0], isNew: false }
}

function metadataOf(row: RegistryRow): ConversationMetadata {
  return {
    user: row.end_user,
    organization: row.end_user_organization,
    session: row.session,
    custom: row.custom,
  }
}

/** The latest sentAt of some messages (UTC ISO strings, so they sort as text). */
function latestSentAt(messages: readonly { sentAt: string }[]): string {
  return messages
    .map((m) => m.sentAt)
    .sort()
    .at(-1)!
}

/** Within one batch the first message with an id wins, like across batches. */
function firstOfEachId(messages: readonly CaptureMessage[]): CaptureMessage[] {
  const seen = new Set<string>()
  return messages.filter((m) => !seen.has(m.id) && seen.add(m.id))
}
