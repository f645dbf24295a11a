import type { RecordedEvent } from '@cas/events'
import { previewOf } from '@cas/views'
import { arrivalOf } from './message-fold.ts'
import { hourOf, type Role, type RollupDeltas, type SentimentLabel } from './rollup-deltas.ts'

type Started = RecordedEvent<'conversation.started'>
type MetadataUpdated = RecordedEvent<'conversation.metadata-updated'>
type MessagesCaptured = RecordedEvent<'conversation.messages-captured'>
type ConversationAnalyzed = RecordedEvent<'analysis.conversation-analyzed'>

/** The events that change a conversation row. */
export type ConversationEvent = Started | MetadataUpdated | MessagesCaptured | ConversationAnalyzed

/**
 * What a run of events does to one rm_conversations row, relative to whatever the row holds: fields set
 * (undefined: left as they are), messages added, bounds widened. Applied to the column defaults, it is
 * the row the events create.
 */
export interface ConversationChange {
  id: string
  orgId: string
  chatbotId: string
  /** conversation.started: the caller's id and the creation time. */
  externalId?: string
  createdAt?: string
  /** conversation.started or metadata-updated: all the metadata, as of the last one. */
  metadata?: { user: object; organization: object; session: object; custom: object }
  /** Set by every conversation-stream event. */
  updatedAt?: string
  streamVersion?: number
  messages: number
  firstMessageAt?: string
  lastMessageAt?: string
  /**
   * The first end-user message of these events with more than whitespace (by sentAt, then arrival) as
   * previewOf gives it: it replaces the row's preview when it comes before the row's (preview_sent_at,
   * preview_arrival). A message id is stored once, so the first one never changes otherwise.
   */
  preview?: { text: string; sentAt: string; arrival: string }
  /** analysis.conversation-analyzed: the last result (topics by id); end user null: no end-user message. */
  sentiment?: {
    endUser: { score: number; label: SentimentLabel } | null
    assistant: { score: number; label: SentimentLabel } | null
    topics: readonly string[]
  }
}

/** One conversation's events of a batch, in order. */
export interface ConversationEvents {
  readonly id: string
  readonly orgId: string
  readonly chatbotId: string
  readonly events: ConversationEvent[]
}

/** What the fold needs of a stored conversation row. */
export interface StoredConversation {
  readonly endUserId: string | null
}

/** A batch's events gathered per conversation, in the order they came. */
export class ConversationChanges {
  private readonly pending = new Map<string, ConversationEvents>()

  add(event: ConversationEvent): void {
    let entry = this.pending.get(event.streamId)
    if (!entry) {
      entry = { id: event.streamId, orgId: event.orgId, chatbotId: event.chatbotId, events: [] }
      this.pending.set(event.streamId, entry)
    }
    entry.events.push(event)
  }

  /** The conversations gathered, in id order (rows are locked and written in one order), taken out. */
  take(): ConversationEvents[] {
    const entries = [...this.pending.values()].sort((a, b) => compare(a.id, b.id))
    this.pending.clear()
    return entries
  }
}

/**
 * The conversations whose stored row the fold needs: those whose first event here is not
 * conversation.started. A conversation that starts here is new (the started event sets everything the
 * rest depends on), so it is not read.
 */
export function conversationsToRead(entries: readonly ConversationEvents[]): string[] {
  return entries.filter((e) => !startsHere(e)).map((e) => e.id)
}

const startsHere = (e: ConversationEvents) => e.events[0]!.type === 'conversation.started'

/**
 * Folds each conversation's events into the change to write, given the stored rows of those
 * `conversationsToRead` named (a conversation missing from `stored` has no row), and adds their messages
 * to the rollups. Row for row the same as applying the events one at a time:
 * - conversation.started, messages-captured and conversation-analyzed create the row when it is missing
 *   (analysis results can arrive before the conversation); metadata-updated changes an existing row only;
 * - messages are counted on the conversation and go into their hours' rollups (messages by role, and
 *   activity with the end user the conversation had when they were captured).
 * Inserts are changes to rows that do not exist (yet), updates to rows that do.
 */
export function foldConversations(
  entries: readonly ConversationEvents[],
  stored: ReadonlyMap<string, StoredConversation>,
  rollups: RollupDeltas,
): { inserts: ConversationChange[]; updates: ConversationChange[] } {
  const inserts: ConversationChange[] = []
  const updates: ConversationChange[] = []
  for (const entry of entries) {
    if (startsHere(entry)) {
      inserts.push(foldConversation(entry, entry.events, null, rollups))
      continue
    }
    const row = stored.get(entry.id)
    if (row) {
      updates.push(foldConversation(entry, entry.events, row.endUserId, rollups))
      continue
    }
    // metadata-updated changes nothing on a row that does not exist (yet).
    const creating = entry.events.findIndex((e) => e.type !== 'conversation.metadata-updated')
    if (creating >= 0) inserts.push(foldConversation(entry, entry.events.slice(creating), null, rollups))
  }
  return { inserts, updates }
}

/**
 * Folds a conversation's events, in order, into one change, and adds their messages to the rollups.
 * `endUserId` is the row's end user before them (null for a new row): activity rows get the end user
 * the conversation had when each capture was applied.
 */
function foldConversation(
  entry: ConversationEvents,
  events: readonly ConversationEvent[],
  endUserId: string | null,
  rollups: RollupDeltas,
): ConversationChange {
  const change: ConversationChange = {
    id: entry.id,
    orgId: entry.orgId,
    chatbotId: entry.chatbotId,
    messages: 0,
  }
  let endUser = endUserId
  const stream = (e: ConversationEvent) => {
    change.updatedAt = e.occurredAt
    change.streamVersion = Math.max(change.streamVersion ?? 0, e.streamVersion)
  }
  for (const e of events) {
    switch (e.type) {
      case 'conversation.started': {
        const { conversationId, ...metadata } = e.payload
        change.externalId = conversationId
        change.createdAt = e.occurredAt
        change.metadata = metadata
        endUser = metadata.user.id ?? null
        stream(e)
        break
      }
      case 'conversation.metadata-updated':
        change.metadata = e.payload
        endUser = e.payload.user.id ?? null
        stream(e)
        break
      case 'conversation.messages-captured': {
        const messages = e.payload.messages
        change.messages += messages.length
        messages.forEach((m, i) => {
          if (
            m.role === 'user' &&
            (change.preview === undefined || !earlier(change.preview.sentAt, m.sentAt))
          ) {
            const arrival = arrivalOf(e.position, i)
            if (change.preview === undefined || before(m.sentAt, arrival, change.preview)) {
              const text = previewOf(m.content)
              if (text !== undefined) change.preview = { text, sentAt: m.sentAt, arrival }
            }
          }
          if (change.firstMessageAt === undefined || earlier(m.sentAt, change.firstMessageAt))
            change.firstMessageAt = m.sentAt
          if (change.lastMessageAt === undefined || earlier(change.lastMessageAt, m.sentAt))
            change.lastMessageAt = m.sentAt
          const hour = hourOf(m.sentAt)
          rollups.addMessage(e.orgId, e.chatbotId, hour, m.role as Role)
          rollups.addActivity(e.orgId, e.chatbotId, hour, e.streamId, endUser)
        })
        stream(e)
        break
      }
      case 'analysis.conversation-analyzed':
        change.sentiment = {
          endUser: e.payload.sentiment,
          assistant: e.payload.assistantSentiment,
          topics: e.payload.topics.map((t) => t.id),
        }
        break
      default: {
        const unhandled: never = e
        throw new Error(`unhandled conversation event ${JSON.stringify(unhandled)}`)
      }
    }
  }
  return change
}

const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Whether one ISO 8601 UTC timestamp is before another (they may differ in their fractions' digits). */
function earlier(a: string, b: string): boolean {
  // As toISOString() writes them (what events carry), they compare as strings.
  if (CANONICAL_UTC.test(a) && CANONICAL_UTC.test(b)) return a < b
  return Date.parse(a) < Date.parse(b)
}

/** Whether a message (sentAt, arrival) comes before the preview's, in the messages' order. */
function before(sentAt: string, arrival: string, preview: { sentAt: string; arrival: string }): boolean {
  if (earlier(sentAt, preview.sentAt)) return true
  if (earlier(preview.sentAt, sentAt)) return false
  // Arrivals are non-negative integers written out in digits, without leading zeros.
  return (
    arrival.length < preview.arrival.length ||
    (arrival.length === preview.arrival.length && arrival < preview.arrival)
  )
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
