// Shared by the fold's unit tests (*.test.ts beside it): events as the projector receives them, and
// Given/When/Then over the pure fold. No database.
import {
  type EventPayload,
  type EventType,
  newEvent,
  parseRecordedEvent,
  type RecordedEvent,
} from '@cas/events'

export const ORG = '0194a1b0-1c2d-7e3f-a4b5-c6d7e8f9a0b1'
export const BOT = '0194a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b'
export const CONVERSATION = '0194a1b2-d4e5-7f60-9b7c-8d9e0f1a2b3c'

let position = 1_000

/**
 * A recorded event of the conversation `streamId` (its conversation or analysis stream), validated by
 * the event schemas as the consumer validates what it reads.
 */
export function recorded<T extends EventType>(
  type: T,
  payload: EventPayload<T>,
  opts: { streamId?: string; streamVersion?: number; occurredAt?: string } = {},
): RecordedEvent<T> {
  position += 1
  return parseRecordedEvent({
    ...newEvent(type, payload),
    id: crypto.randomUUID(),
    occurredAt: opts.occurredAt ?? '2026-11-20T12:00:00.000Z',
    orgId: ORG,
    chatbotId: BOT,
    streamId: opts.streamId ?? CONVERSATION,
    streamVersion: opts.streamVersion ?? 1,
    position: String(position),
    metadata: {},
  }) as RecordedEvent<T>
}

export const started = (user: Record<string, string>, conversationId = 'chat-1') =>
  ({ conversationId, user, organization: {}, session: {}, custom: {} }) as const

export const metadata = (user: Record<string, string>) =>
  ({ user, organization: {}, session: {}, custom: {} }) as const

export const captured = (
  ...messages: [id: string, role: 'user' | 'assistant' | 'system', sentAt: string][]
) => ({
  messages: messages.map(([id, role, sentAt]) => ({ id, role, content: `text of ${id}`, sentAt })),
  receivedAt: '2026-11-20T12:00:00.000Z',
  analysisRequested: true,
})

export const analyzed = (
  ...results: [
    messageId: string,
    score: number,
    label: 'positive' | 'neutral' | 'negative',
    topics: string[],
  ][]
) => ({
  analyzer: { name: 'test', version: '1' },
  results: results.map(([messageId, score, label, topics]) => ({
    messageId,
    sentiment: { score, label },
    topics: topics.map((t) => ({ id: t, label: t })),
  })),
  signalsDecided: true,
})
