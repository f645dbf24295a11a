/**
 * How deep a request body may nest: objects and arrays, the body itself being level 1. Deeper input is
 * refused with a 400 naming where, before anything recursive (schema validation, JSON.stringify, a merge
 * patch, jsonb) could run out of stack on it and answer 500. Generous: no documented request nests
 * beyond a handful of levels (settings, the deepest, at most MAX_SETTINGS_DEPTH levels).
 */
export const MAX_BODY_DEPTH = 32

export type JsonPath = readonly (string | number)[]

/**
 * The path of the first object or array nested deeper than `maxDepth` levels in `value` (which counts as
 * level 1 when it is one), or undefined. Iterative: it must not itself run out of stack on deep input.
 */
export function pathDeeperThan(value: unknown, maxDepth: number): JsonPath | undefined {
  // Every request body is checked and nearly none is too deep: measure depth first, without paths.
  return depthExceeds(value, maxDepth) ? firstPathDeeperThan(value, maxDepth) : undefined
}

function depthExceeds(value: unknown, maxDepth: number): boolean {
  const items: unknown[] = [value]
  const depths: number[] = [0]
  while (items.length > 0) {
    const item = items.pop()
    const depth = depths.pop()!
    if (item === null || typeof item !== 'object') continue
    if (depth >= maxDepth) return true
    if (Array.isArray(item)) {
      for (const element of item) {
        if (element !== null && typeof element === 'object') {
          items.push(element)
          depths.push(depth + 1)
        }
      }
    } else {
      for (const key in item) {
        const element = (item as Record<string, unknown>)[key]
        if (Object.hasOwn(item, key) && element !== null && typeof element === 'object') {
          items.push(element)
          depths.push(depth + 1)
        }
      }
    }
  }
  return false
}

function firstPathDeeperThan(value: unknown, maxDepth: number): JsonPath | undefined {
  const stack: [unknown, JsonPath][] = [[value, []]]
  while (stack.length > 0) {
    const [item, path] = stack.pop()!
    if (item === null || typeof item !== 'object') continue
    if (path.length >= maxDepth) return path
    const entries: [string | number, unknown][] = Array.isArray(item)
      ? item.map((element, index) => [index, element])
      : Object.entries(item)
    for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], [...path, entries[i]![0]]])
  }
  return undefined
}

/** A path as a JSON Pointer (RFC 6901), `/` for the whole document. */
export function jsonPointer(path: JsonPath): string {
  if (path.length === 0) return '/'
  return path.map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')
}
