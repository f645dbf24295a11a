// Shared by the projector's database tests: journal records as the gateway and the analysis service
// append them, with the personal data sealed under the chatbot's data key.
import { randomUUID } from 'node:crypto'
import type { JournalRecord } from '@cas/eventlog'
import { type EventPayload, type EventType, newEvent } from '@cas/events'
import { sealEvents } from '@cas/keyring'

export interface RecordPlace {
  readonly key: Buffer
  readonly orgId: string
  readonly chatbotId: string
  readonly streamType: 'conversation' | 'analysis' | 'chatbot'
  readonly streamId: string
  readonly streamVersion: number
  readonly position: bigint
  readonly occurredAt?: string
}

export function sealedRecord<T extends EventType>(
  at: RecordPlace,
  type: T,
  payload: EventPayload<T>,
): JournalRecord {
  const { chatbotId, streamId } = at
  const [sealed] = sealEvents(at.key, { chatbotId, streamId }, [newEvent(type, payload)])
  return {
    id: randomUUID(),
    type: sealed!.type,
    version: sealed!.version,
    occurredAt: at.occurredAt ?? '2026-11-20T12:00:00.000Z',
    orgId: at.orgId,
    chatbotId,
    streamType: at.streamType,
    streamId,
    streamVersion: at.streamVersion,
    position: at.position.toString(),
    payload: JSON.parse(JSON.stringify(sealed!.payload)),
    metadata: {},
  }
}
