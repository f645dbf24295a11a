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
