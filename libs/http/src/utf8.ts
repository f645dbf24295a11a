import { AppError } from './errors.ts'
import { firstStringPath } from './text-check.ts'

/**
 * Stands in for the first byte that is not UTF-8 when the body is read again to say where it is: a lone
 * surrogate, which no UTF-8 byte sequence decodes to. (An escaped one earlier in the JSON would be found
 * first; that body is refused for it anyway.)
 */
const MARK = '\udc80'

/**
 * The 400 for a JSON body that is not UTF-8, naming the first bad byte's offset and, when the rest of the
 * body is JSON, the JSON Pointer of the string or key holding it. Only ever built for a refused body.
 */
export function notUtf8Error(bytes: Buffer): AppError {
  const offset = firstInvalidUtf8Offset(bytes)
  return new AppError(
    'invalid_request',
    `The request body must be UTF-8 (RFC 8259): byte ${offset} does not start a valid UTF-8 sequence.`,
    [{ path: pathOfByte(bytes, offset), message: `not valid UTF-8 (byte ${offset})`, in: 'body' }],
  )
}

/** Where in the JSON document the byte at `offset` is: `/` when the document does not parse around it. */
function pathOfByte(bytes: Buffer, offset: number): string {
  const text = `${bytes.toString('utf8', 0, offset)}${MARK}${bytes.toString('utf8', offset + 1)}`
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch {
    return '/'
  }
  // The only string that is not well-formed: the rest was UTF-8, and MARK may also be the second half of
  // a pair (U+1D480 is \ud835\udc80).
  return firstStringPath(document, (s) => (s.isWellFormed() ? undefined : true))?.path ?? '/'
}

/**
 * The offset of the first byte that does not start a well-formed UTF-8 sequence (the Unicode standard's
 * table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), or -1 when every byte does.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0
  while (i < bytes.length) {
    const lead = bytes[i]!
    if (lead < 0x80) {
      i++
      continue
    }
    let continuation: number
    let lower = 0x80
    let upper = 0xbf
    if (lead >= 0xc2 && lead <= 0xdf) continuation = 1
    else if (lead >= 0xe0 && lead <= 0xef) {
      continuation = 2
      if (lead === 0xe0) lower = 0xa0
      if (lead === 0xed) upper = 0x9f
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      continuation = 3
      if (lead === 0xf0) lower = 0x90
      if (lead === 0xf4) upper = 0x8f
    } else return i
    for (let k = 1; k <= continuation; k++) {
      const byte = bytes[i + k]
      if (byte === undefined || byte < lower || byte > upper) return i
      lower = 0x80
      upper = 0xbf
    }
    i += continuation + 1
  }
  return -1
}
