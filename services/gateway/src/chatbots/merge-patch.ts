import type { JsonValue } from '@cas/events'

type JsonObject = { [key: string]: JsonValue }

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * JSON Merge Patch (RFC 7386): objects merge recursively, `null` removes a key, anything else (arrays
 * and scalars included) replaces the target.
 */
export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return patch
  const result: JsonObject = isObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = applyMergePatch(result[key], value)
  }
  return result
}
