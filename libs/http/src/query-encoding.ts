import { AppError } from './errors.ts'
import { jsonPointer } from './json-depth.ts'

/**
 * The 400 for a query string whose percent-encoding does not decode: a `%` not followed by two hex digits,
 * or escaped bytes that are not UTF-8 (`?userId=%ED%A0%80`, an encoded surrogate). The query parser takes
 * such a value as something other than what was sent, where the router refuses the same in a path (400);
 * a query is refused alike, naming the parameter (`/` when its name is what does not decode). Undefined
 * when every name and value decodes.
 */
export function badQueryEncodingError(url: string): AppError | undefined {
  const start = url.indexOf('?')
  if (start < 0) return undefined
  const path = firstBadlyEncoded(url.slice(start + 1))
  if (path === undefined) return undefined
  return new AppError(
    'invalid_request',
    'The query string is not valid: percent-encoded bytes must be UTF-8, and % must start an escape.',
    [{ path, message: 'not valid UTF-8 once percent-decoded', in: 'querystring' }],
  )
}

/** The JSON Pointer of the first parameter whose name or value does not percent-decode, or undefined. */
function firstBadlyEncoded(query: string): string | undefined {
  // No % anywhere: nothing to decode (nearly every request).
  if (!query.includes('%')) return undefined
  for (const pair of queryPairs(query)) {
    const name = decoded(pair.name)
    if (name === undefined) return '/'
    if (pair.value !== undefined && decoded(pair.value) === undefined) return jsonPointer([name])
  }
  return undefined
}

/**
 * The parameters of a query string (what follows the `?`) as sent, not decoded: each `&`-separated pair's
 * name, and its value when it has an `=` (a pair without one has none, `a=` an empty one); empty pairs
 * are left out.
 */
export function queryPairs(query: string): { readonly name: string; readonly value?: string }[] {
  return query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const equals = pair.indexOf('=')
      return equals < 0 ? { name: pair } : { name: pair.slice(0, equals), value: pair.slice(equals + 1) }
    })
}

function decoded(text: string): string | undefined {
  try {
    // decodeURIComponent refuses what WHATWG's percent-decoding would replace with U+FFFD.
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}
