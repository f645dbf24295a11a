import { assertNever, deadLetter, drop, type JournalRecord, ok, type Step } from '@cas/eventlog'
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
 * The open step of a consumer pipeline (ConsumerPipeline in @cas/eventlog): each record's event, opened,
 * upcast and validated. An event of a deleted chatbot (its key destroyed) is dropped as
 * `chatbot_deleted`, which is how deletion is meant to go (`chatbot.deleted` itself opens, so that the
 * consumer forgets the chatbot); one whose chatbot has no key here, as `key_missing`. One that does not
 * open or does not match its schema (`invalid_event`) can never be applied: it is set aside in the
 * dead-letter store at once (`deadLetter`, DESIGN.md guarantee 9), to be re-driven after a fix.
 */
export function openStep(keyring: Keyring): Step<JournalRecord, RecordedEvent> {
  return async (items, client) =>
    (
      await openRecords(
        client,
        keyring,
        items.map((i) => i.value),
      )
    ).map((opened) => {
      if (opened.ok) return ok(opened.event)
      switch (opened.reason) {
        case 'key_destroyed':
          return drop('chatbot_deleted')
        case 'key_missing':
          return drop(opened.reason, opened.detail)
        case 'invalid_event':
          return deadLetter(`invalid_event: ${opened.detail ?? 'the event does not open'}`)
        default:
          return assertNever(opened.reason, 'skip reason')
      }
    })
}
