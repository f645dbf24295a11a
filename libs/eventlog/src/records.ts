import type { StreamType } from '@cas/events'

export type { StreamType }

/**
 * An event as stored in the journal and carried through the event log: the envelope of EVENTS.md plus
 * the stream type. The payload is not validated here; consumers parse it at their boundary.
 */
export interface JournalRecord {
  readonly id: string
  readonly type: string
  readonly version: number
  readonly occurredAt: string
  readonly orgId: string
  readonly chatbotId: string
  readonly streamType: StreamType
  readonly streamId: string
  readonly streamVersion: number
  /** Journal position as a decimal string: positions exceed 2^53. */
  readonly position: string
  readonly payload: unknown
  readonly metadata: Readonly<Record<string, string>>
}

/** The fields a consumer logs about an event it applied: enough to follow one request through every service. */
export function eventLogFields(record: JournalRecord): Record<string, string | number> {
  const { correlationId, causationId, requestId } = record.metadata
  return {
    eventId: record.id,
    type: record.type,
    streamId: record.streamId,
    streamVersion: record.streamVersion,
    position: record.position,
    ...(correlationId === undefined ? {} : { correlationId }),
    ...(causationId === undefined ? {} : { causationId }),
    ...(requestId === undefined ? {} : { requestId }),
  }
}
