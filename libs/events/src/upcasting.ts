import type { z } from 'zod'
import type { EventDefinition } from './envelope.ts'
import { InvalidEventError } from './invalid-event-error.ts'

/** Turns an event of `type` at `fromVersion` into its payload at `fromVersion + 1`. */
export interface Upcaster {
  readonly type: string
  readonly fromVersion: number
  /** Validates `raw` against the `fromVersion` schema (throwing InvalidEventError) and returns the new payload. */
  readonly upcastPayload: (raw: unknown) => unknown
}

/**
 * Old events stay in the journal and on the topics forever, so a schema change adds a version and an
 * upcaster from the previous one; readers then only ever handle the latest version.
 */
export function defineUpcaster<From extends EventDefinition, To extends EventDefinition>(
  from: From,
  to: To,
  upcast: (event: z.output<From['schema']>) => z.input<To['payload']>,
): Upcaster {
  if (to.type !== from.type || to.version !== from.version + 1) {
    throw new Error(
      `an upcaster goes from one version to the next of one type, not ${describe(from)} → ${describe(to)}`,
    )
  }
  return {
    type: from.type,
    fromVersion: from.version,
    upcastPayload(raw) {
      const result = from.schema.safeParse(raw)
      if (!result.success) throw new InvalidEventError(result.error.issues, raw)
      // Parsed by `from.schema` itself; TypeScript cannot see through the generic `From`.
      return upcast(result.data as z.output<From['schema']>)
    },
  }
}

/**
 * Builds the `upcast(raw)` hook: applies upcasters one version at a time until none matches the
 * event's (type, version). Anything that is not an object with a string `type` and an integer
 * `version` is returned as is, for the schema to reject.
 */
export function createUpcaster(upcasters: readonly Upcaster[]): (raw: unknown) => unknown {
  const byTypeAndVersion = new Map<string, Upcaster>()
  for (const upcaster of upcasters) {
    const key = upcasterKey(upcaster.type, upcaster.fromVersion)
    if (byTypeAndVersion.has(key)) throw new Error(`two upcasters for ${key}`)
    byTypeAndVersion.set(key, upcaster)
  }
  return function upcast(raw) {
    let event = raw
    for (;;) {
      if (!isVersionedEvent(event)) return event
      const upcaster = byTypeAndVersion.get(upcasterKey(event.type, event.version))
      if (!upcaster) return event
      event = { ...event, version: event.version + 1, payload: upcaster.upcastPayload(event) }
    }
  }
}

function upcasterKey(type: string, version: number): string {
  return `${type} v${version}`
}

function describe(definition: EventDefinition): string {
  return upcasterKey(definition.type, definition.version)
}

function isVersionedEvent(raw: unknown): raw is { type: string; version: number } {
  if (typeof raw !== 'object' || raw === null) return false
  const { type, version } = raw as Record<string, unknown>
  return typeof type === 'string' && Number.isInteger(version)
}
