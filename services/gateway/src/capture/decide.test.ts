import { describe, expect, it } from 'vitest'
import {
  type CaptureCommand,
  type CaptureState,
  captureCommand,
  decideCapture,
  MAX_FUTURE_SKEW_MS,
  messageDigest,
} from './decide.ts'
import type { ConversationMetadata } from './metadata.ts'
import { captureBodySchema } from './schema.ts'

// The capture decision without a database: Given the state a transaction read, When a capture is
// decided, Then these events, registry change and answer.

const RECEIVED = new Date('2026-11-25T10:00:00.000Z')
const ID = '0b7f6a52-5d1c-4a43-9b8e-3f3c1d2a9e10'
const EMPTY: ConversationMetadata = { user: {}, organization: {}, session: {}, custom: {} }

function command(body: Record<string, unknown>): CaptureCommand {
  return captureCommand(captureBodySchema.parse({ conversationId: 'c-1', ...body }), RECEIVED)
}

const message = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  role: 'user',
  content: `text ${id}`,
  ...extra,
})

function existing(
  storedMessageIds: string[],
  metadata: ConversationMetadata = EMPTY,
  settings: Record<string, unknown> = {},
): CaptureState {
  return {
    conversation: { status: 'existing', id: ID, metadata, storedMessageIds: new Set(storedMessageIds) },
    settings,
  }
}
const fresh = (settings: Record<string, unknown> = {}): CaptureState => ({
  conversation: { status: 'new', id: ID },
  settings,
})

describe('decideCapture', () => {
  it('starts a new conversation with its metadata and stores every message, analysis requested', () => {
    const decision = decideCapture(
      command({
        user: { id: 'u-1' },
        messages: [message('a'), message('b', { sentAt: '2026-11-25T11:00:00+01:00' })],
      }),
      fresh(),
    )
    expect(decision.events.map((e) => e.type)).toEqual([
      'conversation.started',
      'conversation.messages-captured',
    ])
    expect(decision.events[0]!.payload).toEqual({ conversationId: 'c-1', ...EMPTY, user: { id: 'u-1' } })
    expect(decision.events[1]!.payload).toEqual({
      messages: [
        { id: 'a', role: 'user', content: 'text a', sentAt: '2026-11-25T10:00:00.000Z' },
        { id: 'b', role: 'user', content: 'text b', sentAt: '2026-11-25T10:00:00.000Z' },
      ],
      receivedAt: '2026-11-25T10:00:00.000Z',
      analysisRequested: true,
    })
    expect(decision.newMessageIds).toEqual(['a', 'b'])
    // The new registry row was written with the command's values: nothing to change in it.
    expect(decision.registry).toBeNull()
    expect(decision.result).toEqual({
      conversationId: ID,
      messagesStored: 2,
      analysisQueued: true,
      warnings: [],
      deprecated: false,
    })
  })

  it('stores only the ids the conversation does not have, and the first of an id repeated in one request', () => {
    const decision = decideCapture(
      command({ messages: [message('a'), message('c'), message('c', { content: 'later' }), message('d')] }),
      existing(['a', 'b']),
    )
    expect(decision.events.map((e) => e.type)).toEqual(['conversation.messages-captured'])
    expect(
      (decision.events[0]!.payload as unknown as { messages: { id: string; content: string }[] }).messages,
    ).toEqual([expect.objectContaining({ id: 'c', content: 'text c' }), expect.objectContaining({ id: 'd' })])
    expect(decision.newMessageIds).toEqual(['c', 'd'])
    expect(decision.registry).toEqual({ metadata: EMPTY, lastMessageAt: '2026-11-25T10:00:00.000Z' })
    expect(decision.result.messagesStored).toBe(2)
  })

  it('warns of another message under a stored id, and of none under an id stored as it is (a retry)', () => {
    const stored = existing(['a', 'b'])
    const state: CaptureState = {
      ...stored,
      conversation: {
        ...(stored.conversation as Extract<CaptureState['conversation'], { status: 'existing' }>),
        storedDigests: new Map([
          ['a', messageDigest({ role: 'user', content: 'text a' })],
          ['b', messageDigest({ role: 'user', content: 'text b' })],
        ]),
      },
    }
    const decision = decideCapture(
      command({
        messages: [message('a', { sentAt: '2026-11-25T09:00:00Z' }), message('b', { content: 'other' })],
      }),
      state,
    )
    expect(decision.events).toEqual([])
    expect(decision.result.warnings).toEqual([
      'message id b is repeated with a different message than an earlier capture stored under it; the stored one was kept',
    ])
  })

  it('appends nothing and changes nothing for a re-sent capture', () => {
    const decision = decideCapture(command({ messages: [message('a')] }), existing(['a']))
    expect(decision.events).toEqual([])
    expect(decision.newMessageIds).toEqual([])
    expect(decision.registry).toBeNull()
    expect(decision.result).toMatchObject({ messagesStored: 0, analysisQueued: false })
  })

  it('merges metadata field by field, with an update event only when the merge changed something', () => {
    const stored = { ...EMPTY, user: { id: 'u-1', plan: 'free' }, session: { device: 'phone' } }
    const changed = decideCapture(
      command({ user: { plan: 'pro' }, messages: [message('a')] }),
      existing(['a'], stored),
    )
    expect(changed.events.map((e) => e.type)).toEqual(['conversation.metadata-updated'])
    expect(changed.events[0]!.payload).toEqual({ ...stored, user: { id: 'u-1', plan: 'pro' } })
    expect(changed.registry).toEqual({
      metadata: { ...stored, user: { id: 'u-1', plan: 'pro' } },
      lastMessageAt: null,
    })

    const same = decideCapture(
      command({ user: { plan: 'free' }, messages: [message('a')] }),
      existing(['a'], stored),
    )
    expect(same.events).toEqual([])
    expect(same.registry).toBeNull()
  })

  it('does not ask for analysis when the chatbot turned it off', () => {
    const decision = decideCapture(command({ messages: [message('a')] }), fresh({ analysisEnabled: false }))
    expect((decision.events[1]!.payload as { analysisRequested: boolean }).analysisRequested).toBe(false)
    expect(decision.result.analysisQueued).toBe(false)
  })

  it("warns about custom fields outside the chatbot's schema or of the wrong type", () => {
    const settings = { customFields: { tier: 'string', seats: 'number' } }
    const decision = decideCapture(
      command({ custom: { tier: 'gold', seats: 'ten', color: 'red' }, messages: [message('a')] }),
      fresh(settings),
    )
    expect(decision.result.warnings).toEqual([
      'custom field seats should be number',
      'custom field color is not in the schema',
    ])
  })

  it('folds the deprecated userId and metadata in, and says the request used them', () => {
    const decision = decideCapture(
      command({ userId: 'u-9', metadata: { a: 1 }, custom: { b: 2 }, messages: [message('a')] }),
      fresh(),
    )
    expect(decision.events[0]!.payload).toMatchObject({ user: { id: 'u-9' }, custom: { a: 1, b: 2 } })
    expect(decision.result.deprecated).toBe(true)
  })

  it('moves last_message_at to the latest new message, whatever order they came in', () => {
    const decision = decideCapture(
      command({
        messages: [
          message('x', { sentAt: '2026-11-25T09:00:00Z' }),
          message('y', { sentAt: '2026-11-25T09:30:00Z' }),
          message('z', { sentAt: '2026-11-25T09:10:00Z' }),
        ],
      }),
      existing(['y']),
    )
    expect(decision.registry?.lastMessageAt).toBe('2026-11-25T09:10:00.000Z')
  })

  it('answers first the warnings of the command (what it did not take as sent), then the custom fields', () => {
    const decision = decideCapture(
      command({
        userId: 'legacy',
        user: { id: 'current' },
        custom: { tier: 'gold' },
        messages: [message('a'), message('a', { role: 'assistant' })],
      }),
      fresh(),
    )
    expect(decision.result.warnings).toEqual([
      'userId and user.id differ; user.id was kept',
      'message id a is repeated with a different message; the first was stored',
      'custom field tier is not in the schema',
    ])
  })
})

describe('captureCommand', () => {
  it(`keeps a sentAt up to ${MAX_FUTURE_SKEW_MS / 3_600_000} hours after the receive time, and stores the receive time past that`, () => {
    const at = (ms: number) => new Date(RECEIVED.getTime() + ms).toISOString()
    const { messages, warnings } = command({
      messages: [
        message('edge', { sentAt: at(MAX_FUTURE_SKEW_MS) }),
        message('over', { sentAt: at(MAX_FUTURE_SKEW_MS + 1) }),
      ],
    })
    expect(messages.map((m) => m.sentAt)).toEqual([at(MAX_FUTURE_SKEW_MS), RECEIVED.toISOString()])
    expect(warnings).toEqual([
      `message over sentAt ${at(MAX_FUTURE_SKEW_MS + 1)} is more than 24 hours after the receive time; the receive time was stored`,
    ])
  })
})
