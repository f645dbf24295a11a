import { domainEventSchema, type RecordedEvent } from './domain-event.ts'
import { InvalidEventError } from './invalid-event-error.ts'
import { upcast } from './upcasters.ts'

export type ParseEventResult =
  | { readonly ok: true; readonly event: RecordedEvent }
  | { readonly ok: false; readonly error: InvalidEventError }

/** Upcasts then validates an event read at a boundary (journal row, Kafka message, replay file). */
export function safeParseRecordedEvent(raw: unknown): ParseEventResult {
  let latest: unknown
  try {
    latest = upcast(raw)
  } catch (error) {
    if (error instanceof InvalidEventError) return { ok: false, error }
    throw error
  }
  const result = domainEventSchema.safeParse(latest)
  if (!result.success) return { ok: false, error: new InvalidEventError(result.error.issues, raw) }
  return { ok: true, event: result.data }
}

/** Like safeParseRecordedEvent, but throws the InvalidEventError (code `invalid_event`). */
export function parseRecordedEvent(raw: unknown): RecordedEvent {
  const result = safeParseRecordedEvent(raw)
  if (!result.ok) throw result.error
  return result.event
}
