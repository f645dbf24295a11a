import { describe, expect, it } from 'vitest'
import {
  BOT,
  CONVERSATION,
  captured,
  metadata,
  ORG,
  recorded,
  started,
} from '../../test/fold-test-support.ts'
import {
  ConversationChanges,
  type ConversationEvent,
  conversationsToRead,
  foldConversations,
  type StoredConversation,
} from './conversation-fold.ts'
import { RollupDeltas } from './rollup-deltas.ts'

const H = '2026-11-20T12:00:00.000Z'
const H2 = '2026-11-20T13:00:00.000Z'

/** Given the conversations' events (and the stored rows the I/O read), when folded: the writes. */
function given(events: ConversationEvent[], stored: Record<string, StoredConversation> = {}) {
  const batch = new ConversationChanges()
  for (const e of events) batch.add(e)
  const entries = batch.take()
  const rollups = new RollupDeltas()
  const { inserts, updates } = foldConversations(entries, new Map(Object.entries(stored)), rollups)
  return {
    toRead: conversationsToRead(entries),
    inserts,
    updates,
    activity: rollups.takeActivity(),
    stats: rollups.takeWrites().stats,
  }
}

describe('the conversation fold', () => {
  it('creates a new conversation from its start and first capture without reading anything', () => {
    const then = given([
      recorded('conversation.started', started({ id: 'u-1' }), { streamVersion: 1 }),
      recorded(
        'conversation.messages-captured',
        captured(['m1', 'user', '2026-11-20T12:10:00.000Z'], ['m2', 'assistant', '2026-11-20T13:05:00.000Z']),
        { streamVersion: 2, occurredAt: '2026-11-20T13:06:00.000Z' },
      ),
    ])
    expect(then.toRead).toEqual([])
    expect(then.updates).toEqual([])
    expect(then.inserts).toEqual([
      {
        id: CONVERSATION,
        orgId: ORG,
        chatbotId: BOT,
        externalId: 'chat-1',
        createdAt: '2026-11-20T12:00:00.000Z',
        metadata: metadata({ id: 'u-1' }),
        updatedAt: '2026-11-20T13:06:00.000Z',
        streamVersion: 2,
        messages: 2,
        firstMessageAt: '2026-11-20T12:10:00.000Z',
        lastMessageAt: '2026-11-20T13:05:00.000Z',
        preview: {
          text: 'text of m1',
          sentAt: '2026-11-20T12:10:00.000Z',
          arrival: expect.stringMatching(/001$/),
        },
      },
    ])
    expect(then.activity.map((a) => [a.hour, a.endUserId])).toEqual([
      [H, 'u-1'],
      [H2, 'u-1'],
    ])
    expect(then.stats.map((s) => [s.hour, s.messages, s.user, s.assistant])).toEqual([
      [H, 1, 1, 0],
      [H2, 1, 0, 1],
    ])
  })

  it("previews the end user's first message by sentAt, then arrival, skipping other roles and blank text", () => {
    const at = (minute: number) => `2026-11-20T12:${String(minute).padStart(2, '0')}:00.000Z`
    const capture = (messages: [string, 'user' | 'assistant', number, string][]) => ({
      ...captured(),
      messages: messages.map(([id, role, minute, content]) => ({ id, role, content, sentAt: at(minute) })),
    })
    const then = given([
      recorded('conversation.started', started({ id: 'u-1' }), { streamVersion: 1 }),
      recorded(
        'conversation.messages-captured',
        capture([
          ['a1', 'assistant', 1, 'How can I help?'],
          ['u1', 'user', 5, 'second by sentAt'],
          ['u2', 'user', 3, '   \n '],
        ]),
        { streamVersion: 2 },
      ),
      // A later capture with an earlier message: it comes first; of two at one sentAt, the first to arrive.
      recorded(
        'conversation.messages-captured',
        capture([
          ['u3', 'user', 4, '  My   parcel\nnever came  '],
          ['u4', 'user', 4, 'same minute, arrived after'],
        ]),
        { streamVersion: 3 },
      ),
      recorded('conversation.messages-captured', capture([['u5', 'user', 9, 'later']]), { streamVersion: 4 }),
    ])
    expect(then.inserts[0]!.preview).toEqual({
      text: 'My parcel never came',
      sentAt: at(4),
      arrival: expect.stringMatching(/001$/),
    })
    const assistantOnly = given([
      recorded('conversation.messages-captured', capture([['a1', 'assistant', 1, 'Hello']]), {
        streamVersion: 2,
        streamId: crypto.randomUUID(),
      }),
    ])
    expect(assistantOnly.inserts[0]!.preview).toBeUndefined()
  })

  it('changes a stored conversation, giving each capture the end user it had when captured', () => {
    const then = given(
      [
        recorded('conversation.messages-captured', captured(['m1', 'user', '2026-11-20T12:10:00.000Z']), {
          streamVersion: 3,
        }),
        recorded('conversation.metadata-updated', metadata({ id: 'u-2' }), { streamVersion: 4 }),
        recorded('conversation.messages-captured', captured(['m2', 'user', '2026-11-20T13:10:00.000Z']), {
          streamVersion: 5,
        }),
      ],
      { [CONVERSATION]: { endUserId: 'u-1' } },
    )
    expect(then.toRead).toEqual([CONVERSATION])
    expect(then.inserts).toEqual([])
    expect(then.updates).toMatchObject([{ id: CONVERSATION, messages: 2, streamVersion: 5 }])
    expect(then.updates[0]!.metadata).toEqual(metadata({ id: 'u-2' }))
    expect(then.updates[0]!.externalId).toBeUndefined()
    expect(then.activity.map((a) => [a.hour, a.endUserId])).toEqual([
      [H, 'u-1'],
      [H2, 'u-2'],
    ])
  })

  it('ignores a metadata change of a conversation that has no row, and creates it from the next event', () => {
    const onlyMetadata = given([recorded('conversation.metadata-updated', metadata({ id: 'ghost' }))])
    expect(onlyMetadata).toMatchObject({ toRead: [CONVERSATION], inserts: [], updates: [], activity: [] })

    const then = given([
      recorded('conversation.metadata-updated', metadata({ id: 'ghost' }), { streamVersion: 2 }),
      recorded('conversation.messages-captured', captured(['m1', 'user', '2026-11-20T12:10:00.000Z']), {
        streamVersion: 3,
      }),
    ])
    expect(then.inserts).toMatchObject([{ id: CONVERSATION, messages: 1, streamVersion: 3 }])
    expect(then.inserts[0]!.metadata).toBeUndefined()
    expect(then.activity.map((a) => a.endUserId)).toEqual([null])
  })

  it('creates the row of a conversation whose analysis arrives first, with the result alone', () => {
    const then = given([
      recorded(
        'analysis.conversation-analyzed',
        {
          analyzer: { name: 'test', version: '1' },
          sentiment: { score: 0.5, label: 'positive' },
          assistantSentiment: { score: -0.25, label: 'negative' },
          topics: [{ id: 'refunds', label: 'Refunds' }],
        },
        { streamVersion: 7 },
      ),
    ])
    expect(then.inserts).toEqual([
      {
        id: CONVERSATION,
        orgId: ORG,
        chatbotId: BOT,
        messages: 0,
        sentiment: {
          endUser: { score: 0.5, label: 'positive' },
          assistant: { score: -0.25, label: 'negative' },
          topics: ['refunds'],
        },
      },
    ])
    expect(then.stats).toEqual([])
  })

  it('folds each conversation of a batch on its own, in id order', () => {
    const other = '0194a1b2-d4e5-7f60-9b7c-8d9e0f1a2b3b'
    const then = given([
      recorded('conversation.started', started({ id: 'u-1' })),
      recorded('conversation.started', started({ id: 'u-9' }, 'chat-9'), { streamId: other }),
    ])
    expect(then.inserts.map((c) => [c.id, c.externalId])).toEqual([
      [other, 'chat-9'],
      [CONVERSATION, 'chat-1'],
    ])
  })
})
