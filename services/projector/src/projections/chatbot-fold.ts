import type { RecordedEvent } from '@cas/events'

type Created = RecordedEvent<'chatbot.created'>
type Renamed = RecordedEvent<'chatbot.renamed'>
type SettingsChanged = RecordedEvent<'chatbot.settings-changed'>
type KeyRotated = RecordedEvent<'chatbot.key-rotated'>
/** Owners' and admins' topic commands: the chatbot's row keeps only their stream version. */
type TopicCommandRequested =
  | RecordedEvent<'chatbot.topic-rename-requested'>
  | RecordedEvent<'chatbot.topic-hide-requested'>
  | RecordedEvent<'chatbot.topic-unhide-requested'>
  | RecordedEvent<'chatbot.topic-merge-requested'>
  | RecordedEvent<'chatbot.topic-creation-requested'>
  | RecordedEvent<'chatbot.reanalysis-requested'>

/**
 * The events that change an rm_chatbots row. `chatbot.deleted` is not among them: it removes the row with
 * the rest of the chatbot's read-model rows (apply.ts deleteChatbot), after what came before it is written.
 */
export type ChatbotChangeEvent = Created | Renamed | SettingsChanged | KeyRotated | TopicCommandRequested

/**
 * What a run of one chatbot's events does to its rm_chatbots row: the fields they set (undefined: left as
 * they are) and the stream version reached. Every chatbot event carries the whole new value of what it
 * changes (the settings after the patch, not the patch), so the change needs nothing of the stored row,
 * and writing it over a row at any earlier version of the stream gives the row at `streamVersion`.
 */
export interface ChatbotChange {
  readonly id: string
  readonly orgId: string
  /** chatbot.created: the row's creation (the event's time, as the gateway's chatbot state has it). */
  createdAt?: string
  name?: string
  settings?: Created['payload']['settings']
  apiKeyPrefix?: string
  streamVersion: number
}

/** A batch's chatbot events gathered per chatbot, in the order they came. */
export class ChatbotChanges {
  private readonly pending = new Map<string, ChatbotChangeEvent[]>()

  add(event: ChatbotChangeEvent): void {
    const events = this.pending.get(event.streamId)
    if (events) events.push(event)
    else this.pending.set(event.streamId, [event])
  }

  /** The chatbots' events, in chatbot id order (rows are written in one order), taken out. */
  take(): ChatbotChangeEvent[][] {
    const entries = [...this.pending.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    this.pending.clear()
    return entries.map(([, events]) => events)
  }
}

/**
 * Folds each chatbot's events, in order, into the change to write: `inserts` hold the chatbots created in
 * the batch (every column set), `updates` the others. Row for row the same as applying the events one at
 * a time.
 */
export function foldChatbots(entries: readonly (readonly ChatbotChangeEvent[])[]): {
  inserts: ChatbotChange[]
  updates: ChatbotChange[]
} {
  const inserts: ChatbotChange[] = []
  const updates: ChatbotChange[] = []
  for (const events of entries) {
    const change = foldChatbot(events)
    if (change) (change.createdAt === undefined ? updates : inserts).push(change)
  }
  return { inserts, updates }
}

function foldChatbot(events: readonly ChatbotChangeEvent[]): ChatbotChange | undefined {
  const first = events[0]
  if (!first) return undefined
  const change: ChatbotChange = { id: first.streamId, orgId: first.orgId, streamVersion: 0 }
  for (const e of events) {
    change.streamVersion = Math.max(change.streamVersion, e.streamVersion)
    switch (e.type) {
      case 'chatbot.created':
        change.createdAt = e.occurredAt
        change.name = e.payload.name
        change.settings = e.payload.settings
        change.apiKeyPrefix = e.payload.apiKeyPrefix
        break
      case 'chatbot.renamed':
        change.name = e.payload.name
        break
      case 'chatbot.settings-changed':
        change.settings = e.payload.settings
        break
      case 'chatbot.key-rotated':
        change.apiKeyPrefix = e.payload.apiKeyPrefix
        break
      // The analysis service applies them; their effect reaches rm_topics by its events.
      case 'chatbot.topic-rename-requested':
      case 'chatbot.topic-hide-requested':
      case 'chatbot.topic-unhide-requested':
      case 'chatbot.topic-merge-requested':
      case 'chatbot.topic-creation-requested':
      case 'chatbot.reanalysis-requested':
        break
      default: {
        const unhandled: never = e
        throw new Error(`unhandled chatbot event ${JSON.stringify(unhandled)}`)
      }
    }
  }
  return change
}
