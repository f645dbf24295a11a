import { randomUUID } from 'node:crypto'
import { withTransaction } from '@cas/db'
import { appendToStream, type EventToAppend, type JournalRecord } from '@cas/eventlog'
import { type NewEvent, newEvent } from '@cas/events'
import { dataKeyFor, sealEvents } from '@cas/keyring'
import type pg from 'pg'
import { testKeyring } from './keyring.ts'

/** The chatbot the events belong to, and its organization. */
type Chatbot = { readonly id: string; readonly orgId: string }

/** Message content no consumer can store: jsonb refuses a lone UTF-16 surrogate (issue 30). */
export const LONE_SURROGATE = '\ud800 hello'

/**
 * A new conversation of the chatbot whose message holds `LONE_SURROGATE`, sealed with the chatbot's key as
 * the gateway seals: `conversation.started`, then the `conversation.messages-captured` no consumer can
 * apply. What a capture made before the gateway refused such text.
 */
export async function poisonedConversation(
  pool: pg.Pool,
  chatbot: Chatbot,
  streamId: string = randomUUID(),
): Promise<EventToAppend[]> {
  const now = new Date().toISOString()
  return sealed(pool, chatbot, streamId, [
    newEvent('conversation.started', {
      conversationId: `poisoned-${streamId}`,
      user: {},
      organization: {},
      session: {},
      custom: {},
    }),
    newEvent('conversation.messages-captured', {
      messages: [{ id: 'm-1', role: 'user', content: LONE_SURROGATE, sentAt: now }],
      receivedAt: now,
      analysisRequested: true,
    }),
  ])
}

/** Appends a `poisonedConversation` straight into the journal; returns the event no consumer can apply. */
export async function appendPoisonedConversation(pool: pg.Pool, chatbot: Chatbot): Promise<JournalRecord> {
  const streamId = randomUUID()
  return appendNewConversation(pool, chatbot, streamId, await poisonedConversation(pool, chatbot, streamId))
}

/**
 * Appends, straight into the journal past the gateway's checks, a new conversation of the chatbot whose
 * `conversation.messages-captured` does not match its schema (a message of role `robot`), sealed with
 * the chatbot's key as the gateway seals: it opens, and can never be read. Returns that event.
 */
export async function appendSchemaInvalidEvent(pool: pg.Pool, chatbot: Chatbot): Promise<JournalRecord> {
  const streamId = randomUUID()
  const [started, captured] = await poisonedConversation(pool, chatbot, streamId)
  const now = new Date().toISOString()
  const [invalid] = await sealed(pool, chatbot, streamId, [
    {
      ...captured!,
      payload: {
        messages: [{ id: 'm-1', role: 'robot', content: 'beep', sentAt: now }],
        receivedAt: now,
        analysisRequested: true,
      },
    } as unknown as NewEvent,
  ])
  return appendNewConversation(pool, chatbot, streamId, [started!, invalid!])
}

/** The events sealed with the chatbot's key, as the gateway seals them. */
async function sealed(
  pool: pg.Pool,
  chatbot: Chatbot,
  streamId: string,
  events: readonly NewEvent[],
): Promise<EventToAppend[]> {
  const dataKey = await withTransaction(pool, (client) =>
    dataKeyFor(client, testKeyring, chatbot.id, chatbot.orgId),
  )
  return sealEvents(dataKey, { chatbotId: chatbot.id, streamId }, events)
}

/** Appends a new conversation's events straight into the journal; returns the second (the capture). */
async function appendNewConversation(
  pool: pg.Pool,
  chatbot: Chatbot,
  streamId: string,
  events: EventToAppend[],
): Promise<JournalRecord> {
  return withTransaction(pool, async (client) => {
    const { records } = await appendToStream(client, {
      streamType: 'conversation',
      streamId,
      orgId: chatbot.orgId,
      chatbotId: chatbot.id,
      expectedVersion: 0,
      events,
    })
    return records[1]!
  })
}
