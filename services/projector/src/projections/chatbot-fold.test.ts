import { describe, expect, it } from 'vitest'
import { BOT, ORG, recorded } from '../../test/fold-test-support.ts'
import { type ChatbotChangeEvent, ChatbotChanges, foldChatbots } from './chatbot-fold.ts'

const OTHER = '0194a1b2-c3d4-7e5f-8a6b-ffffffffffff'
const CREATED_AT = '2026-11-20T12:00:00.000Z'

const created = (v = 1, streamId = BOT) =>
  recorded(
    'chatbot.created',
    { name: 'Support bot', settings: { analysisEnabled: true }, apiKeyPrefix: 'svc_live_3f9a…' },
    { streamId, streamVersion: v, occurredAt: CREATED_AT },
  )
const renamed = (name: string, v: number, streamId = BOT) =>
  recorded(
    'chatbot.renamed',
    { name },
    { streamId, streamVersion: v, occurredAt: '2026-11-21T08:00:00.000Z' },
  )
const settingsChanged = (settings: Record<string, boolean>, v: number) =>
  recorded('chatbot.settings-changed', { patch: settings, settings }, { streamId: BOT, streamVersion: v })
const keyRotated = (prefix: string, v: number) =>
  recorded('chatbot.key-rotated', { apiKeyPrefix: prefix }, { streamId: BOT, streamVersion: v })

/** Given a batch's chatbot events, when folded: the rows to insert and the changes to stored rows. */
function given(...events: ChatbotChangeEvent[]) {
  const batch = new ChatbotChanges()
  for (const e of events) batch.add(e)
  return foldChatbots(batch.take())
}

describe('the chatbot fold', () => {
  it('inserts a chatbot created in the batch, with every later change of the batch folded in', () => {
    const then = given(created(1), renamed('Sales bot', 2), keyRotated('svc_live_0b7c…', 3))
    expect(then).toEqual({
      inserts: [
        {
          id: BOT,
          orgId: ORG,
          createdAt: CREATED_AT,
          name: 'Sales bot',
          settings: { analysisEnabled: true },
          apiKeyPrefix: 'svc_live_0b7c…',
          streamVersion: 3,
        },
      ],
      updates: [],
    })
  })

  it('changes a stored chatbot only in what its events set, up to their last stream version', () => {
    const then = given(settingsChanged({ analysisEnabled: false }, 4), renamed('Sales bot', 5))
    expect(then).toEqual({
      inserts: [],
      updates: [
        {
          id: BOT,
          orgId: ORG,
          name: 'Sales bot',
          settings: { analysisEnabled: false },
          streamVersion: 5,
        },
      ],
    })
  })

  it('takes the settings as the event states them after the patch, not the patch', () => {
    const event = recorded(
      'chatbot.settings-changed',
      { patch: { onboarded: null }, settings: { analysisEnabled: true } },
      { streamId: BOT, streamVersion: 2 },
    )
    expect(given(event).updates[0]?.settings).toEqual({ analysisEnabled: true })
  })

  it('folds each chatbot of a batch on its own, in chatbot id order', () => {
    const then = given(renamed('Later', 2, OTHER), created(1), renamed('First', 3, OTHER))
    expect(then.inserts.map((c) => c.id)).toEqual([BOT])
    expect(then.updates).toEqual([{ id: OTHER, orgId: ORG, name: 'First', streamVersion: 3 }])
    expect(given(created(1, OTHER), created(1, BOT)).inserts.map((c) => c.id)).toEqual([BOT, OTHER])
  })

  it('gives nothing for a batch without chatbot events', () => {
    expect(given()).toEqual({ inserts: [], updates: [] })
  })
})
