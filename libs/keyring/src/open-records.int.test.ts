import { randomBytes, randomUUID } from 'node:crypto'
import type { JournalRecord } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { dataKeyFor, destroyDataKey } from './data-keys.ts'
import { Keyring } from './keyring.ts'
import { openRecords } from './open-records.ts'
import { sealEvents } from './seal-events.ts'

const keyring = new Keyring(randomBytes(32))
const orgId = randomUUID()

const captured = newEvent('conversation.messages-captured', {
  messages: [{ id: 'm-1', role: 'user', content: 'hello there', sentAt: '2025-01-15T09:30:00.000Z' }],
  receivedAt: '2025-01-15T09:30:03.120Z',
  analysisRequested: false,
})

function record(
  chatbotId: string,
  event: { type: string; version: number; payload: unknown },
  streamId = randomUUID(),
): JournalRecord {
  return {
    id: randomUUID(),
    type: event.type,
    version: event.version,
    occurredAt: '2025-01-15T09:30:03.250Z',
    orgId,
    chatbotId,
    streamType: event.type.startsWith('chatbot.') ? 'chatbot' : 'conversation',
    streamId,
    streamVersion: 1,
    position: '1',
    payload: JSON.parse(JSON.stringify(event.payload)),
    metadata: {},
  }
}

async function sealedRecord(db: TestDatabase, chatbotId: string): Promise<JournalRecord> {
  const streamId = randomUUID()
  const key = await dataKeyFor(db.pool, keyring, chatbotId, orgId)
  const [sealed] = sealEvents(key, { chatbotId, streamId }, [captured])
  return record(chatbotId, sealed!, streamId)
}

describe('openRecords', () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase()
  })
  afterAll(async () => {
    await db.drop()
  })

  it('opens sealed events and reads v1 events in clear alike, with one key per chatbot', async () => {
    const chatbotId = randomUUID()
    const sealed = await sealedRecord(db, chatbotId)
    const clear = record(chatbotId, { ...captured, version: 1 })
    const opened = await openRecords(db.pool, keyring, [sealed, clear])
    expect(opened.map((o) => o.ok)).toEqual([true, true])
    const [a, b] = opened.map((o) => (o.ok ? o.event : undefined))
    expect(a!.payload).toEqual(captured.payload)
    expect(b!.payload).toEqual(captured.payload)
    expect(a!.version).toBe(2)
    expect(b!.version).toBe(2)
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM chatbot_data_keys WHERE chatbot_id = $1',
      [chatbotId],
    )
    expect(rows[0].n).toBe(1)
  })

  it('gives concurrent first uses of a chatbot the same key', async () => {
    const chatbotId = randomUUID()
    const keys = await Promise.all(
      Array.from({ length: 8 }, () => dataKeyFor(db.pool, keyring, chatbotId, orgId)),
    )
    for (const key of keys) expect(key).toEqual(keys[0])
  })

  it('skips every event of a chatbot whose key is destroyed, sealed or in clear, but its chatbot.deleted', async () => {
    const chatbotId = randomUUID()
    const sealed = await sealedRecord(db, chatbotId)
    const clear = record(chatbotId, { ...captured, version: 1 })
    const created = record(
      chatbotId,
      newEvent('chatbot.created', { name: 'Bot', settings: {}, apiKeyPrefix: 'svc_live_abcd…' }),
    )
    const deleted = record(chatbotId, newEvent('chatbot.deleted', {}))
    await destroyDataKey(db.pool, chatbotId, orgId)
    const opened = await openRecords(db.pool, keyring, [sealed, clear, created, deleted])
    expect(opened.map((o) => (o.ok ? 'ok' : o.reason))).toEqual([
      'key_destroyed',
      'key_destroyed',
      'key_destroyed',
      'ok',
    ])
    // Destroyed means gone: the row is a tombstone without key material.
    const { rows } = await db.pool.query('SELECT wrapped_key FROM chatbot_data_keys WHERE chatbot_id = $1', [
      chatbotId,
    ])
    expect(rows).toEqual([{ wrapped_key: null }])
    await expect(dataKeyFor(db.pool, keyring, chatbotId, orgId)).rejects.toThrow(/destroyed/)
  })

  it('skips a sealed event whose chatbot has no key here, and reports a tampered box as invalid', async () => {
    const chatbotId = randomUUID()
    const sealed = await sealedRecord(db, chatbotId)
    const payload = sealed.payload as { sealed: { data: string } }
    const flipped = payload.sealed.data.startsWith('A')
      ? `B${payload.sealed.data.slice(1)}`
      : `A${payload.sealed.data.slice(1)}`
    const tampered = { ...sealed, payload: { ...payload, sealed: { ...payload.sealed, data: flipped } } }
    const orphan = { ...sealed, chatbotId: randomUUID() }
    const opened = await openRecords(db.pool, keyring, [tampered, orphan])
    expect(opened.map((o) => (o.ok ? 'ok' : o.reason))).toEqual(['invalid_event', 'key_missing'])
  })

  it('refuses to run with another master key than the one that wrapped the keys', async () => {
    const chatbotId = randomUUID()
    const sealed = await sealedRecord(db, chatbotId)
    await expect(openRecords(db.pool, new Keyring(randomBytes(32)), [sealed])).rejects.toThrow(
      /ENCRYPTION_MASTER_KEY/,
    )
  })
})
