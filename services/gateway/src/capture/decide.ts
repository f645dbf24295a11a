import { createHash } from 'node:crypto'
import { type NewEvent, newEvent } from '@cas/events'
import { analysisEnabled, customFieldSchema, retentionDays } from '@cas/settings'
import {
  type ConversationMetadata,
  customFieldWarnings,
  incomingMetadata,
  mergeMetadata,
  sameMetadata,
} from './metadata.ts'
import type { CaptureBody, CaptureMessage } from './schema.ts'

/**
 * The capture decision, pure: given what the capture transaction read (the conversation as registered,
 * which of the incoming message ids it already stores, the chatbot's settings), which events to append,
 * what the registry row becomes, and what the caller is answered. No I/O: capture.ts reads the state,
 * calls `decideCapture`, and writes what it returns.
 */

/** One capture request, as the decision sees it: normalized once, before any state is read. */
export interface CaptureCommand {
  /** The caller's conversation id. */
  readonly conversationId: string
  /** The metadata it carries, deprecated fields folded in. */
  readonly metadata: ConversationMetadata
  /** It used deprecated fields (answered with a Deprecation header). */
  readonly deprecated: boolean
  /** When the gateway received it (ISO 8601, UTC). */
  readonly receivedAt: string
  /**
   * Its messages, the first of each id only, sentAt in UTC: receivedAt when the caller gave none or one
   * more than MAX_FUTURE_SKEW_MS after it.
   */
  readonly messages: readonly StoredMessage[]
  /** What the request carried that is not stored as sent (answered as warnings). */
  readonly warnings: readonly string[]
}

export interface StoredMessage {
  readonly id: string
  readonly role: CaptureMessage['role']
  readonly content: string
  readonly sentAt: string
}

/** The conversation as the transaction read it, its registry row locked. */
export type ConversationState =
  /** Registered by this transaction: the row holds the command's own metadata and messages. */
  | { readonly status: 'new'; readonly id: string }
  | {
      readonly status: 'existing'
      readonly id: string
      readonly metadata: ConversationMetadata
      /** Which of the command's message ids the conversation already stores. */
      readonly storedMessageIds: ReadonlySet<string>
      /**
       * Their messages' digests (messageDigest), for the ids the ledger has one for (none before
       * migration 0050).
       */
      readonly storedDigests?: ReadonlyMap<string, string>
    }

export interface CaptureState {
  readonly conversation: ConversationState
  /** The chatbot's settings (chatbots.settings): analysis on or off, the custom-field schema. */
  readonly settings: Record<string, unknown>
}

export interface CaptureDecision {
  /** The events for the conversation's stream, in order (none when the capture changed nothing). */
  readonly events: NewEvent[]
  /** The message ids the conversation stores from now on (the ledger's new batch; may be empty). */
  readonly newMessageIds: string[]
  /** Their messages' digests, in the same order (messageDigest). */
  readonly newMessageDigests: string[]
  /**
   * How an existing registry row changes, or null when it stays as it is (a new row was written with
   * the command's values already).
   */
  readonly registry: { readonly metadata: ConversationMetadata; readonly lastMessageAt: string | null } | null
  readonly result: CaptureResult
}

export interface CaptureResult {
  readonly conversationId: string
  readonly messagesStored: number
  readonly analysisQueued: boolean
  readonly warnings: string[]
  /** The request used deprecated fields (answered with a Deprecation header). */
  readonly deprecated: boolean
}

/**
 * How far past its receive time a message's sentAt may be. A clock a little ahead is common and harmless;
 * a sentAt far in the future (a year 2999, a wrong unit) would keep its conversation first in "newest
 * first" for ever. One day covers every time zone mistaken for UTC with room to spare.
 */
export const MAX_FUTURE_SKEW_MS = 24 * 60 * 60 * 1000

/** Normalizes a validated request body into the command the decision takes. */
export function captureCommand(body: CaptureBody, receivedAt: Date): CaptureCommand {
  const { metadata, deprecated, warnings } = incomingMetadata(body)
  const received = receivedAt.toISOString()
  const latestAllowed = receivedAt.getTime() + MAX_FUTURE_SKEW_MS
  // Within one request the first message with an id wins, as across requests.
  const firstById = new Map<string, StoredMessage>()
  const repeated = new Set<string>()
  for (const m of body.messages) {
    let sentAt = received
    if (m.sentAt) {
      const ms = Date.parse(m.sentAt)
      if (ms > latestAllowed) {
        warnings.push(
          `message ${m.id} sentAt ${m.sentAt} is more than 24 hours after the receive time; the receive time was stored`,
        )
      } else sentAt = new Date(ms).toISOString()
    }
    const message: StoredMessage = { id: m.id, role: m.role, content: m.content, sentAt }
    const first = firstById.get(m.id)
    if (!first) firstById.set(m.id, message)
    else if (!repeated.has(m.id) && !sameMessage(first, message)) {
      repeated.add(m.id)
      warnings.push(`message id ${m.id} is repeated with a different message; the first was stored`)
    }
  }
  return {
    conversationId: body.conversationId,
    metadata,
    deprecated,
    receivedAt: received,
    messages: [...firstById.values()],
    warnings,
  }
}

const sameMessage = (a: StoredMessage, b: StoredMessage) =>
  a.role === b.role && a.content === b.content && a.sentAt === b.sentAt

/**
 * What the ledger keeps of a message to tell a retry from another message under a stored id: the first
 * 8 bytes of the SHA-256 of its role and content, in hex (migration 0050). Not its sentAt: a retry may
 * stamp a new one. 64 bits tell two texts apart but for a chance no client meets by mistake; a collision
 * would only leave out a warning.
 */
export function messageDigest(message: Pick<StoredMessage, 'role' | 'content'>): string {
  return createHash('sha256')
    .update(`${message.role}\0${message.content}`)
    .digest()
    .subarray(0, 8)
    .toString('hex')
}

/**
 * What a capture does to a conversation:
 * - a new conversation starts (`conversation.started` with its metadata) and stores every message;
 * - an existing one stores the messages whose ids it does not have yet, and merges the metadata
 *   (`conversation.metadata-updated` only when the merge changed something);
 * - stored messages are one `conversation.messages-captured`, asking for analysis when the chatbot's
 *   settings have it on; a capture of nothing new appends nothing and answers `messagesStored: 0`.
 */
export function decideCapture(command: CaptureCommand, state: CaptureState): CaptureDecision {
  const { conversation, settings } = state
  const isNew = conversation.status === 'new'
  const merged = isNew ? command.metadata : mergeMetadata(conversation.metadata, command.metadata)
  const metadataChanged = !isNew && !sameMetadata(conversation.metadata, merged)
  const newMessages = isNew
    ? command.messages
    : command.messages.filter((m) => !conversation.storedMessageIds.has(m.id))
  // A stored id is answered as a retry, in silence, when its message is the one stored; otherwise the
  // caller reused an id for another message, which is not stored either, as within one request: say so.
  const reused =
    isNew || conversation.storedDigests === undefined
      ? []
      : command.messages.flatMap((m) => {
          const stored = conversation.storedDigests!.get(m.id)
          return stored !== undefined && stored !== messageDigest(m)
            ? [
                `message id ${m.id} is repeated with a different message than an earlier capture stored under it; the stored one was kept`,
              ]
            : []
        })
  const analysisRequested = newMessages.length > 0 && analysisEnabled(settings)

  const events: NewEvent[] = []
  if (isNew) {
    events.push(newEvent('conversation.started', { conversationId: command.conversationId, ...merged }))
  } else if (metadataChanged) events.push(newEvent('conversation.metadata-updated', merged))
  if (newMessages.length > 0) {
    events.push(
      newEvent('conversation.messages-captured', {
        messages: [...newMessages],
        receivedAt: command.receivedAt,
        analysisRequested,
      }),
    )
  }
  return {
    events,
    newMessageIds: newMessages.map((m) => m.id),
    newMessageDigests: newMessages.map(messageDigest),
    registry:
      !isNew && (metadataChanged || newMessages.length > 0)
        ? { metadata: merged, lastMessageAt: newMessages.length > 0 ? latestSentAt(newMessages) : null }
        : null,
    result: {
      conversationId: conversation.id,
      messagesStored: newMessages.length,
      analysisQueued: analysisRequested,
      warnings: [
        ...command.warnings,
        ...reused,
        ...(isNew ? pastRetention(newMessages, command.receivedAt, retentionDays(settings)) : []),
        ...customFieldWarnings(command.metadata.custom, customFieldSchema(settings)),
      ],
      deprecated: command.deprecated,
    },
  }
}

/**
 * The warning for a new conversation whose last message is already older than the chatbot's retention
 * (trial11: an import of six months into a chatbot keeping 90 days was stored, analysed and shown, and
 * half of it was gone at the next sweep, with nothing said). Stored and analysed all the same: the
 * retention may be raised before the sweep. A conversation that existed is not judged: its last message
 * may be one stored before.
 */
function pastRetention(
  messages: readonly { sentAt: string }[],
  receivedAt: string,
  days: number | undefined,
): string[] {
  if (days === undefined || messages.length === 0) return []
  const cutoff = Date.parse(receivedAt) - days * 86_400_000
  if (Date.parse(latestSentAt(messages)) >= cutoff) return []
  return [
    `the conversation's last message is older than this chatbot's retention (${days} days): it is erased at the next retention sweep`,
  ]
}

/** The latest sentAt of some messages (UTC ISO strings, so they sort as text). */
export function latestSentAt(messages: readonly { sentAt: string }[]): string {
  let latest = messages[0]!.sentAt
  for (const m of messages) if (m.sentAt > latest) latest = m.sentAt
  return latest
}
