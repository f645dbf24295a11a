import { type EventPayload, type EventType, latestEventVersions, type NewEvent } from './domain-event.ts'
import type { EventMetadata } from './envelope.ts'

/**
 * An event as a command handler decides it, at the latest version of its type. Not validated: the
 * payload type-checks per event type, and parsing belongs to the boundaries.
 */
export function newEvent<Type extends EventType>(
  type: Type,
  payload: EventPayload<Type>,
  metadata?: EventMetadata,
): NewEvent<Type> {
  const version = latestEventVersions[type]
  const event = metadata === undefined ? { type, version, payload } : { type, version, payload, metadata }
  // A generic conditional type cannot be narrowed, so the per-type pairing is asserted here once.
  return event as unknown as NewEvent<Type>
}
