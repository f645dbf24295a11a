import { randomUUID } from 'node:crypto'
import { type AppendRequest, appendToStreams } from '@cas/eventlog'
import { type NewEvent, newEvent } from '@cas/events'
import { AppError } from '@cas/http'
import { dataKeyFor, type Keyring, type StoredDataKey, sealEvents, unwrapStored } from '@cas/keyring'
import { analysisEnabled, customFieldSchema } from '@cas/settings'
import type pg from 'pg'
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
  chatbot_id: string
  external_id: string
  end_user: ConversationMetadata['user']
  end_user_organization: ConversationMetadata['organization']
  session: ConversationMetadata['session']
  custom: ConversationMetadata['custom']
}

/** One capture request, its API key already checked once outside the transaction. */
export interface CaptureRequest {
  readonly keyHash: Buffer
  readonly body: CaptureBody
  /** Tracing metadata for the events (correlation and causation ids: the request's). */
  readonly trace?: Readonly<Record<string, string>>
}

/** What one request of a group gets: its result, or the error it alone answers with. */
export type CaptureOutcome = CaptureResult | AppError

interface StoredMessage {
  id: string
  role: CaptureMessage['role']
  content: string
  sentAt: string
}

/** A request of a group, through the transaction: its chatbot, then its conversation. */
interface Item {
  readonly index: number
  readonly request: CaptureRequest
  readonly incoming: ConversationMetadata
  readonly deprecated: boolean
  readonly receivedAt: string
  readonly messages: StoredMessage[]
  chatbot?: ChatbotRow
  conversation?: RegistryRow
  isNew?: boolean
}

const METADATA_FIELDS = ['user', 'organization', 'session', 'custom'] as const

/**
 * Captures in one transaction, each as if alone: re-check the key, register the conversation, record the
 * new message ids, merge the metadata and append the events. Used for one request and for a group of
 * concurrent ones (group commit, see group-commit.ts): one statement per step for the whole group, one
 * commit for all. A request whose key is no longer valid gets its 401 and takes no part; any other error
 * throws, and nothing of the group is left behind. No two requests may name the same conversation.
 *
 * Locks, in this order: the key and chatbot rows (shared: a rotation or deletion committing first makes
 * this capture a 401, one committing after waits for it), the conversations' registry rows (concurrent
 * captures of one conversation take turns, so metadata merges never interleave), then the ledger's
 * primary keys (exactly one of several concurrent captures of a message id stores it). Each step takes
 * its rows in key order; overlapping groups that still meet in a deadlock are rolled back and run again
 * by `withTransaction`.
 */
export async function captureGroup(
  client: pg.ClientBase,
  keyring: Keyring,
  requests: readonly CaptureRequest[],
  now: () => Date,
): Promise<CaptureOutcome[]> {
  const outcomes: CaptureOutcome[] = []
  const items = requests.map((request, index) => prepare(request, index, now))

  const { rows: keys } = await client.query<ChatbotRow & { key_hash: Buffer }>(
    `SELECT k.key_hash, c.id AS chatbot_id, c.org_id, c.settings, d.wrapped_key, d.master_key_id
       FROM chatbot_api_keys k JOIN chatbots c ON c.id = k.chatbot_id
       LEFT JOIN chatbot_data_keys d ON d.chatbot_id = c.id
      WHERE k.key_hash = ANY($1::bytea[]) ORDER BY c.id, k.key_hash FOR SHARE OF k, c`,
    [[...new Map(requests.map((r) => [r.keyHash.toString('hex'), r.keyHash])).values()]],
  )
  const chatbots = new Map(keys.map((k) => [k.key_hash.toString('hex'), k]))
  const accepted: Item[] = []
  for (const item of items) {
    item.chatbot = chatbots.get(item.request.keyHash.toString('hex'))
    if (item.chatbot) accepted.push(item)
    else outcomes[item.index] = new AppError('unauthorized', 'The API key is not valid.')
  }
  if (accepted.length === 0) return outcomes

  await registerConversations(client, accepted, now())

  const { rows: inserted } = await client.query<{ conversation_id: string; message_id: string }>(
    `INSERT INTO capture_message_ids (conversation_id, message_id) SELECT * FROM unnest($1::uuid[], $2::text[])
     ON CONFLICT DO NOTHING RETURNING conversation_id, message_id`,
    [
      accepted.flatMap((i) => i.messages.map(() => i.conversation!.id)),
      accepted.flatMap((i) => i.messages.map((m) => m.id)),
    ],
  )
  const newIds = new Set(inserted.map((r) => `${r.conversation_id}/${r.message_id}`))

  const changes: { id: string; metadata: ConversationMetadata; lastMessageAt: string | null }[] = []
  const appends: AppendRequest[] = []
  const dataKeys = new Map<string, Buffer>()
  for (const item of accepted) {
    const chatbot = item.chatbot!
    const conversation = item.conversation!
    const stored = metadataOf(conversation)
    const merged = item.isNew ? item.incoming : mergeMetadata(stored, item.incoming)
    const metadataChanged = !item.isNew && !sameMetadata(stored, merged)
    const newMessages = item.messages.filter((m) => newIds.has(`${conversation.id}/${m.id}`))
    if (!item.isNew && (metadataChanged || newMessages.length > 0)) {
      changes.push({
        id: conversation.id,
        metadata: merged,
        lastMessageAt: newMessages.length > 0 ? latestSentAt(newMessages) : null,
      })
    }
    const analysisRequested = newMessages.length > 0 && analysisEnabled(chatbot.settings)

    const events: NewEvent[] = []
    if (item.isNew) {
      events.push(
        newEvent('conversation.started', { conversationId: item.request.body.conversationId, ...merged }),
      )
    } else if (metadataChanged) events.push(newEvent('conversation.metadata-updated', merged))
    if (newMessages.length > 0) {
      events.push(
        newEvent('conversation.messages-captured', {
          messages: newMessages,
          receivedAt: item.receivedAt,
          analysisRequested,
        }),
      )
    }
    if (events.length > 0) {
      appends.push({
        streamType: 'conversation',
        streamId: conversation.id,
        orgId: chatbot.org_id,
        chatbotId: chatbot.chatbot_id,
        expectedVersion: 'any',
        events: sealEvents(
          await dataKeyOf(client, keyring, chatbot, dataKeys),
          { chatbotId: chatbot.chatbot_id, streamId: conversation.id },
          events,
        ),
        metadata: item.request.trace,
      })
    }
    outcomes[item.index] = {
      conversationId: conversation.id,
      messagesStored: newMessages.length,
      analysisQueued: analysisRequested,
      warnings: customFieldWarnings(item.incoming.custom, customFieldSchema(chatbot.settings)),
      deprecated: item.deprecated,
    }
  }
  if (changes.length > 0) {
    await client.query(
      `UPDATE capture_conversations c
          SET end_user = u.end_user, end_user_organization = u.end_user_organization, session = u.session,
              custom = u.custom, last_message_at = GREATEST(c.last_message_at, u.last_message_at)
         FROM unnest($1::uuid[], $2::jsonb[], $3::jsonb[], $4::jsonb[], $5::jsonb[], $6::timestamptz[])
              AS u(id, end_user, end_user_organization, session, custom, last_message_at)
        WHERE c.id = u.id`,
      [
        changes.map((c) => c.id),
        ...METADATA_FIELDS.map((field) => changes.map((c) => JSON.stringify(c.metadata[field]))),
        changes.map((c) => c.lastMessageAt),
      ],
    )
  }
  await appendToStreams(client, appends, { now })
  return outcomes
}

function prepare(request: CaptureRequest, index: number, now: () => Date): Item {
  const { metadata: incoming, deprecated } = incomingMetadata(request.body)
  const receivedAt = now().toISOString()
  const messages = firstOfEachId(request.body.messages).map((m) => ({
    id: m.id,
    role: m.role,
    content: m.content,
    sentAt: m.sentAt ? new Date(m.sentAt).toISOString() : receivedAt,
  }))
  return { index, request, incoming, deprecated, receivedAt, messages }
}

function conversationKey(item: Item): string {
  return `${item.chatbot!.chatbot_id}/${item.request.body.conversationId}`
}

/** The chatbot's data key, unwrapped once per group (created on a chatbot's first capture). */
async function dataKeyOf(
  client: pg.ClientBase,
  keyring: Keyring,
  chatbot: ChatbotRow,
  cache: Map<string, Buffer>,
): Promise<Buffer> {
  let key = cache.get(chatbot.chatbot_id)
  if (!key) {
    // A live chatbot's key is never destroyed (deletion takes the lock this transaction holds).
    const stored = unwrapStored(keyring, chatbot.chatbot_id, chatbot)
    key =
      stored instanceof Buffer
        ? stored
        : await dataKeyFor(client, keyring, chatbot.chatbot_id, chatbot.org_id)
    cache.set(chatbot.chatbot_id, key)
  }
  return key
}

const REGISTRY_COLUMNS = [
  'id',
  'chatbot_id',
  'external_id',
  'end_user',
  'end_user_organization',
  'session',
  'custom',
]

/**
 * Every item's registry row, locked for this transaction: created (with the incoming metadata) for new
 * conversations, then the existing ones locked, both in the same key order (each statement's ORDER BY).
 */
async function registerConversations(client: pg.ClientBase, items: readonly Item[], now: Date) {
  const byKey = new Map(items.map((i) => [conversationKey(i), i]))
  if (byKey.size !== items.length) throw new Error('a capture group names one conversation twice')
  const keyOf = (row: RegistryRow) => `${row.chatbot_id}/${row.external_id}`
  const created = await client.query<RegistryRow>(
    `INSERT INTO capture_conversations
       (id, chatbot_id, org_id, external_id, end_user, end_user_organization, session, custom, created_at,
        last_message_at)
     SELECT u.id, u.chatbot_id, u.org_id, u.external_id, u.end_user, u.end_user_organization, u.session,
            u.custom, $9, u.last_message_at
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::jsonb[],
                   $8::jsonb[], $10::timestamptz[])
            AS u(id, chatbot_id, org_id, external_id, end_user, end_user_organization, session, custom,
                 last_message_at)
      ORDER BY u.chatbot_id, u.external_id
     ON CONFLICT (chatbot_id, external_id) DO NOTHING
     RETURNING ${REGISTRY_COLUMNS.join(', ')}`,
    [
      items.map(() => randomUUID()),
      items.map((i) => i.chatbot!.chatbot_id),
      items.map((i) => i.chatbot!.org_id),
      items.map((i) => i.request.body.conversationId),
      ...METADATA_FIELDS.map((field) => items.map((i) => JSON.stringify(i.incoming[field]))),
      now,
      items.map((i) => latestSentAt(i.messages)),
    ],
  )
  for (const row of created.rows) Object.assign(byKey.get(keyOf(row))!, { conversation: row, isNew: true })
  const existing = items.filter((i) => !i.conversation)
  if (existing.length === 0) return
  const { rows } = await client.query<RegistryRow>(
    `SELECT ${REGISTRY_COLUMNS.map((c) => `c.${c}`).join(', ')} FROM capture_conversations c
       JOIN unnest($1::uuid[], $2::text[]) AS u(chatbot_id, external_id)
         ON c.chatbot_id = u.chatbot_id AND c.external_id = u.external_id
      ORDER BY c.chatbot_id, c.external_id FOR UPDATE OF c`,
    [existing.map((i) => i.chatbot!.chatbot_id), existing.map((i) => i.request.body.conversationId)],
  )
  for (const row of rows) Object.assign(byKey.get(keyOf(row))!, { conversation: row, isNew: false })
  if (existing.some((i) => !i.conversation)) throw new Error('conversation vanished while being registered')
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
