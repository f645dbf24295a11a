import type { EventToAppend } from '@cas/eventlog'
import { type NewEvent, sealedAad, sealedEvents, sealPayload } from '@cas/events'
import { sealWith } from './keyring.ts'

/**
 * The events as they are stored and published: personal fields sealed with the chatbot's data key for
 * every (type, version) that is sealed, the others unchanged.
 */
export function sealEvents(
  dataKey: Buffer,
  stream: { readonly chatbotId: string; readonly streamId: string },
  events: readonly NewEvent[],
): EventToAppend[] {
  return events.map((event) => {
    const aad = sealedAad({ ...stream, type: event.type, version: event.version })
    const payload = sealPayload(sealedEvents, event, (plaintext) => sealWith(dataKey, plaintext, aad))
    return { ...event, payload }
  })
}
