import type { FastifyInstance } from 'fastify'
import { AppError } from './errors.ts'
import { jsonPointer } from './json-depth.ts'
import { badQueryEncodingError } from './query-encoding.ts'

// Node 20 has String.prototype.isWellFormed (ES2024); the project's TypeScript lib stops at ES2023.
declare global {
  interface String {
    isWellFormed(): boolean
  }
}

/** What is wrong with a string that cannot be stored: its detail message, and the error's sentence. */
const FAULTS = {
  nul: {
    detail: 'contains U+0000',
    message: 'Text must not contain the NUL character (U+0000).',
  },
  surrogate: {
    detail: 'contains a lone UTF-16 surrogate (U+D800 to U+DFFF not in a pair)',
    message:
      'Text must be well-formed Unicode: a UTF-16 surrogate (\\ud800 to \\udfff) must be half of a pair.',
  },
} as const

type Fault = keyof typeof FAULTS

/**
 * Postgres text and jsonb cannot hold U+0000, nor a lone UTF-16 surrogate (JSON's `"\ud800"`, e.g. an
 * emoji cut in half by a client truncating text at a number of UTF-16 code units). Both can arrive in
 * JSON, query strings and paths, and a string the database refuses must never get past the door: stored
 * as an event, it would stop every consumer that applies it. A request with one anywhere (a value or an
 * object key, in the body, the query string or the path) is refused with a 400 naming where; so is a
 * query string whose percent-encoding does not decode to UTF-8 (the router refuses that in a path).
 */
export function refuseIllFormedText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const badQuery = badQueryEncodingError(request.url)
    if (badQuery) throw badQuery
    const parts = [
      ['body', request.body],
      ['querystring', request.query],
      ['params', request.params],
    ] as const
    for (const [part, value] of parts) {
      const found = findIllFormedText(value)
      if (found !== undefined) {
        const fault = FAULTS[found.fault]
        throw new AppError('invalid_request', fault.message, [
          { path: found.path, message: fault.detail, in: part },
        ])
      }
    }
  })
}

/** Why a string cannot be stored, or undefined when it can. */
function faultOf(text: string): Fault | undefined {
  // Two native scans: several times faster than one regular expression with look-arounds.
  if (text.includes('\u0000')) return 'nul'
  if (!text.isWellFormed()) return 'surrogate'
  return undefined
}

/**
 * The JSON Pointer of the first string or key that cannot be stored, and why, or undefined. Iterative:
 * bodies nest deep. Nearly every request has none: one pass looks without building paths, and only a hit
 * walks again to say where.
 */
export function findIllFormedText(root: unknown): { path: string; fault: Fault } | undefined {
  return hasIllFormedText(root) ? firstStringPath(root, faultOf) : undefined
}

function hasIllFormedText(root: unknown): boolean {
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === 'string') {
      if (faultOf(value)) return true
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item)
    } else if (value !== null && typeof value === 'object') {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        if (faultOf(key)) return true
        stack.push((value as Record<string, unknown>)[key])
      }
    }
  }
  return false
}

/** The JSON Pointer of the first string or key, in document order, that `test` finds a fault in. */
export function firstStringPath<F>(
  root: unknown,
  test: (text: string) => F | undefined,
): { path: string; fault: F } | undefined {
  // In document order: an object's entries are pushed last first, each key checked as it is popped.
  const stack: [value: unknown, path: (string | number)[], key?: string][] = [[root, []]]
  while (stack.length > 0) {
    const [value, path, key] = stack.pop()!
    const keyFault = key === undefined ? undefined : test(key)
    if (keyFault) return { path: jsonPointer(path), fault: keyFault }
    if (typeof value === 'string') {
      const fault = test(value)
      if (fault) return { path: jsonPointer(path), fault }
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], [...path, i]])
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [itemKey, item] = entries[i]!
        stack.push([item, [...path, itemKey], itemKey])
      }
    }
  }
  return undefined
}
