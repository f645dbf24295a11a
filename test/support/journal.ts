import { randomUUID } from 'node:crypto'
import { appendToStream, readStream, type StreamType } from '@cas/eventlog'
import { openRecords } from '@cas/keyring'
import type pg from 'pg'
import { testKeyring } from './keyring.ts'

export interface StoredEvent {
  type: string
  /** The version as stored (2 for the sealed conversation events). */
  version: number
  stream_id: string
  stream_version: number
  org_id: string
  chatbot_id: string
  /** Opened: the personal fields in clear, as consumers read them. */
  payload: Record<string, unknown> & { messages?: { id: string }[] }
  /** As stored and published: personal fields sealed. */
  stored_payload: Record<string, unknown>
}

/**
 * One stream's events from the journal, in order, opened with the test master key as consumers open
 * them (an event that does not open keeps its stored payload).
 */
export async function journalEvents(
  pool: pg.Pool,
  streamType: StreamType,
  streamId: string,
): Promise<StoredEvent[]> {
  const records = await readStream(pool, streamType, streamId)
  const opened = await openRecords(pool, testKeyring, records)
  return opened.map((o) => ({
    type: o.record.type,
    version: o.record.version,
    stream_id: o.record.streamId,
    stream_version: o.record.streamVersion,
    org_id: o.record.orgId,
    chatbot_id: o.record.chatbotId,
    payload: (o.ok ? o.event.payload : o.record.payload) as StoredEvent['payload'],
    stored_payload: o.record.payload as Record<string, unknown>,
  }))
}

export async function countRows(pool: pg.Pool, table: string): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`)
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
  return rows[0]!.n
}

/** The rows of everything a capture could have written (journal, conversations, message ids): a refusal changes none. */
export function captureWrites(pool: pg.Pool): Promise<number[]> {
  return Promise.all(
    ['event_journal', 'capture_conversations', 'capture_message_ids'].map((t) => countRows(pool, t)),
  )
}

/** One `test.happened` event with this payload, appended to the stream (of an organization of its own). */
export function appendTestEvent(client: pg.ClientBase, streamId: string, payload: unknown = {}) {
  return appendToStream(client, {
    streamType: 'conversation',
    streamId,
    orgId: randomUUID(),
    chatbotId: randomUUID(),
    expectedVersion: 'any',
    events: [{ type: 'test.happened', version: 1, payload }],
  })
}
