import type { JournalRecord } from '@cas/eventlog'
import {
  openSealedEvent,
  type RecordedEvent,
  safeParseRecordedEvent,
  sealedAad,
  sealedEvents,
} from '@cas/events'
import type pg from 'pg'
import { DESTROYED, loadDataKeys } from './data-keys.ts'
import { type Keyring, openWith } from './keyring.ts'

export type SkipReason =
  /** The chatbot was deleted and its data key destroyed: the event is to be treated as deleted. */
  | 'key_destroyed'
  /** A sealed event of a chatbot that has no data key here (a journal restored without its keys). */
  | 'key_missing'
  | 'invalid_event'

export type OpenedRecord =
  | { readonly ok: true; readonly record: JournalRecord; readonly event: RecordedEvent }
  | {
      readonly ok: false
      readonly record: JournalRecord
      readonly reason: SkipReason
      readonly detail?: string
    }

/**
 * The one function every consumer reads events through: opens sealed payloads with their chatbots' data
 * keys (one query per batch), upcasts and validates. Every event of a chatbot whose key is destroyed is
 * skipped as deleted, except `chatbot.deleted` itself; old unencrypted (v1) events of it included.
 * A key wrapped by another master key throws: a misconfigured process must stop, not skip data.
 */
export async function openRecords(
  client: pg.ClientBase | pg.Pool,
  keyring: Keyring,
  records: readonly JournalRecord[],
): Promise<OpenedRecord[]> {
  const keys = await loadDataKeys(
    client,
    keyring,
    records.map((r) => r.chatbotId),
  )
  return records.map((record): OpenedRecord => {
    const key = keys.get(record.chatbotId)
    if (key === DESTROYED && record.type !== 'chatbot.deleted')
      return { ok: false, record, reason: 'key_destroyed' }
    const sealed = sealedEvents.has(`${record.type} v${record.version}`)
    if (sealed && key === undefined) return { ok: false, record, reason: 'key_missing' }
    let raw: unknown = record
    if (sealed && key instanceof Buffer) {
      try {
        raw = openSealedEvent(sealedEvents, record, (box, event) => openWith(key, box, sealedAad(event)))
      } catch (error) {
        return { ok: false, record, reason: 'invalid_event', detail: String(error) }
      }
    }
    const parsed = safeParseRecordedEvent(raw)
    if (!parsed.ok) return { ok: false, record, reason: 'invalid_event', detail: parsed.error.message }
    return { ok: true, record, event: parsed.event }
  })
}

/**
 * The events of a batch a consumer applies: those that open. An event of a deleted chatbot is skipped in
 * silence (deletion is how it is meant to go; `chatbot.deleted` itself opens, so that the consumer
 * forgets the chatbot); any other event that does not open is handed to `onDropped`, to log and count.
 */
export async function openLiveEvents(
  client: pg.ClientBase | pg.Pool,
  keyring: Keyring,
  records: readonly JournalRecord[],
  onDropped: (skipped: Extract<OpenedRecord, { ok: false }>) => void,
): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = []
  for (const opened of await openRecords(client, keyring, records)) {
    if (opened.ok) events.push(opened.event)
    else if (opened.reason !== 'key_destroyed') onDropped(opened)
  }
  return events
}
