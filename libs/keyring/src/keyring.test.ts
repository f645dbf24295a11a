import { randomBytes, randomUUID } from 'node:crypto'
import type { JournalRecord } from '@cas/eventlog'
import {
  conversationMessagesCapturedV2,
  conversationStartedV2,
  newEvent,
  openSealedEvent,
  parseRecordedEvent,
  sealedAad,
  sealedEvents,
} from '@cas/events'
import { describe, expect, it } from 'vitest'
import { Keyring, openWith } from './keyring.ts'
import { parseMasterKey } from './load.ts'
import { sealEvents } from './seal-events.ts'

const keyring = new Keyring(randomBytes(32))
const chatbotId = randomUUID()
const streamId = randomUUID()
const SECRET = 'my card number is 4111 1111 1111 1111'

/** A journal record of an appended event, as the journal would return it. */
function recordOf(event: { type: string; version: number; payload: unknown }, overrides = {}): JournalRecord {
  return {
    id: randomUUID(),
    type: event.type,
    version: event.version,
    occurredAt: '2025-01-15T09:30:03.250Z',
    orgId: randomUUID(),
    chatbotId,
    streamType: 'conversation',
    streamId,
    streamVersion: 1,
    position: '1',
    payload: JSON.parse(JSON.stringify(event.payload)),
    metadata: {},
    ...overrides,
  }
}

const captured = newEvent('conversation.messages-captured', {
  messages: [{ id: 'm-1', role: 'user', content: SECRET, sentAt: '2025-01-15T09:30:00.000Z' }],
  receivedAt: '2025-01-15T09:30:03.120Z',
  analysisRequested: true,
})

describe('Keyring', () => {
  it('wraps a data key so that only the same master key and chatbot unwrap it', () => {
    const dataKey = keyring.newDataKey()
    const wrapped = keyring.wrap(dataKey, chatbotId)
    expect(wrapped.includes(dataKey)).toBe(false)
    expect(keyring.unwrap(wrapped, chatbotId)).toEqual(dataKey)
    expect(() => keyring.unwrap(wrapped, randomUUID())).toThrow()
    expect(() => new Keyring(randomBytes(32)).unwrap(wrapped, chatbotId)).toThrow()
  })

  it('names its master key by a fingerprint, not the key', () => {
    const master = randomBytes(32)
    const a = new Keyring(master)
    expect(a.masterKeyId).toMatch(/^[0-9a-f]{16}$/)
    expect(new Keyring(master).masterKeyId).toBe(a.masterKeyId)
    expect(new Keyring(randomBytes(32)).masterKeyId).not.toBe(a.masterKeyId)
    expect(master.toString('hex')).not.toContain(a.masterKeyId)
  })

  it('accepts a 32-byte master key in base64 or base64url only', () => {
    const key = randomBytes(32)
    expect(parseMasterKey(key.toString('base64'))).toEqual(key)
    expect(parseMasterKey(key.toString('base64url'))).toEqual(key)
    expect(() => parseMasterKey(randomBytes(16).toString('base64'))).toThrow(/32 bytes/)
    expect(() => new Keyring(randomBytes(31))).toThrow(/32 bytes/)
  })
})

describe('sealEvents', () => {
  const dataKey = keyring.newDataKey()
  const [sealed] = sealEvents(dataKey, { chatbotId, streamId }, [captured])
  const record = recordOf(sealed!)

  it('moves the personal fields into a sealed box that holds no plaintext', () => {
    expect(sealed!.version).toBe(2)
    const payload = sealed!.payload as Record<string, unknown>
    expect(Object.keys(payload).sort()).toEqual(['analysisRequested', 'receivedAt', 'sealed'])
    expect(JSON.stringify(payload)).not.toContain('4111')
    expect(sealedEvents.get('conversation.messages-captured v2')!.schema.safeParse(record).success).toBe(true)
  })

  it('opens back to exactly the event as decided, the same as the v1 event in clear reads', () => {
    const open = (raw: unknown) =>
      openSealedEvent(sealedEvents, raw, (box, event) => openWith(dataKey, box, sealedAad(event)))
    const opened = parseRecordedEvent(open(record))
    expect(opened.payload).toEqual(captured.payload)
    const v1 = parseRecordedEvent({ ...record, version: 1, payload: captured.payload })
    expect(v1).toEqual(opened)
  })

  it('does not open under another key, or moved to another stream or chatbot', () => {
    const openWithKey = (key: Buffer, raw: JournalRecord) =>
      openSealedEvent(sealedEvents, raw, (box, event) => openWith(key, box, sealedAad(event)))
    expect(() => openWithKey(keyring.newDataKey(), record)).toThrow(/does not open/)
    expect(() => openWithKey(dataKey, { ...record, streamId: randomUUID() })).toThrow(/does not open/)
    expect(() => openWithKey(dataKey, { ...record, chatbotId: randomUUID() })).toThrow(/does not open/)
  })

  it('rejects a sealed event whose payload or envelope is invalid, opened or not', () => {
    const open = (raw: unknown) =>
      parseRecordedEvent(
        openSealedEvent(sealedEvents, raw, (box, event) => openWith(dataKey, box, sealedAad(event))),
      )
    const payload = record.payload as Record<string, unknown>
    expect(() => open({ ...record, payload: { ...payload, receivedAt: 'later' } })).toThrow(
      /payload.receivedAt/,
    )
    // A personal field in clear next to the box is refused, not silently replaced by the box's.
    expect(() => open({ ...record, payload: { ...payload, messages: [] } })).toThrow(/payload/)
    expect(() =>
      open({ ...record, payload: { ...payload, sealed: { alg: 'A256GCM', iv: '!', data: 'x' } } }),
    ).toThrow(/payload.sealed.iv/)
    expect(() => open({ ...record, occurredAt: 'yesterday' })).toThrow(/occurredAt/)
  })

  it('seals every personal field of conversation.started and leaves unsealed types alone', () => {
    const started = newEvent('conversation.started', {
      conversationId: 'c-1',
      user: { id: 'u-1', email: 'ada@example.com' },
      organization: {},
      session: {},
      custom: { plan: 'pro' },
    })
    const erased = newEvent('conversation.erased', { reason: 'retention' })
    const [s, e] = sealEvents(dataKey, { chatbotId, streamId }, [started, erased])
    expect(Object.keys(s!.payload as object)).toEqual(['sealed'])
    expect(JSON.stringify(s)).not.toContain('ada@example.com')
    expect(e).toEqual(erased)
    expect(conversationStartedV2.version).toBe(2)
    expect(conversationMessagesCapturedV2.version).toBe(2)
  })
})
