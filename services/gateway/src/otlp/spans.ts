import { OtlpFormatError } from './codec.ts'

/**
 * An ExportTraceServiceRequest, decoded from protobuf (codec.ts) or parsed from OTLP/JSON, read into the
 * spans the GenAI mapping looks at. Attribute values become plain values (AnyValue: string, boolean,
 * number, array, key-value list as an object; bytes as base64). Keys are read in lowerCamelCase, as
 * OTLP/JSON writes them, or in the .proto's snake_case, which the protobuf JSON mapping also accepts.
 * Anything of the wrong type is an OtlpFormatError (400); fields this does not know are ignored.
 */

export type AttributeValue =
  | string
  | number
  | boolean
  | null
  | AttributeValue[]
  | { [key: string]: AttributeValue }

export type Attributes = Record<string, AttributeValue>

export interface SpanEvent {
  readonly name: string
  /** Unix time in milliseconds, or null when not given (0). */
  readonly timeMs: number | null
  readonly attributes: Attributes
}

export interface Span {
  /** Lowercase hex, as OTLP/JSON writes it (empty when absent). */
  readonly traceId: string
  readonly spanId: string
  readonly name: string
  readonly startMs: number | null
  readonly endMs: number | null
  readonly attributes: Attributes
  /** The attributes of the resource that emitted the span (service.name, and so on). */
  readonly resource: Attributes
  readonly events: readonly SpanEvent[]
}

/** How deep AnyValue arrays and key-value lists may nest: deeper is a 400, never a stack overflow. */
const MAX_VALUE_DEPTH = 32

type Obj = Record<string, unknown>

const isObject = (value: unknown): value is Obj =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array)

/** The value of a field by its lowerCamelCase name, or by its snake_case one. */
function field(obj: Obj, camel: string): unknown {
  if (obj[camel] !== undefined) return obj[camel]
  return obj[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]
}

function list(obj: Obj, name: string, where: string): Obj[] {
  const value = field(obj, name)
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || !value.every(isObject)) {
    throw new OtlpFormatError(`${where}.${name} must be an array of objects.`)
  }
  return value
}

function string(obj: Obj, name: string, where: string): string {
  const value = field(obj, name)
  if (value === undefined || value === null) return ''
  if (typeof value !== 'string') throw new OtlpFormatError(`${where}.${name} must be a string.`)
  return value
}

/** A trace or span id: bytes from protobuf, hex in OTLP/JSON. */
function id(obj: Obj, name: string, where: string): string {
  const value = field(obj, name)
  if (value === undefined || value === null || value === '') return ''
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex')
  if (typeof value === 'string' && /^(?:[0-9a-fA-F]{2})+$/.test(value)) return value.toLowerCase()
  throw new OtlpFormatError(`${where}.${name} must be hex-encoded bytes (OTLP/JSON).`)
}

/** A fixed64 nanosecond time (a decimal string, or a number in JSON) in milliseconds; null for 0 or none. */
function timeMs(obj: Obj, name: string, where: string): number | null {
  const value = field(obj, name)
  if (value === undefined || value === null) return null
  let nanos: bigint
  try {
    if (typeof value === 'string' && /^\d+$/.test(value)) nanos = BigInt(value)
    else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) nanos = BigInt(value)
    else throw new Error('not an unsigned integer')
  } catch {
    throw new OtlpFormatError(`${where}.${name} must be an unsigned integer of nanoseconds.`)
  }
  const ms = Number(nanos / 1_000_000n)
  // 0 is "not given"; past the year 9999 no date can say it: both are taken as the receive time.
  return nanos === 0n || ms > MAX_TIME_MS ? null : ms
}

/** 9999-12-31T23:59:59.999Z, the last instant capture's sentAt can hold. */
const MAX_TIME_MS = 253_402_300_799_999

function anyValue(value: unknown, where: string, depth: number): AttributeValue {
  if (depth > MAX_VALUE_DEPTH) {
    throw new OtlpFormatError(`${where} nests deeper than ${MAX_VALUE_DEPTH} levels.`)
  }
  if (value === undefined || value === null) return null
  if (!isObject(value)) throw new OtlpFormatError(`${where} must be an AnyValue object.`)
  const s = field(value, 'stringValue')
  if (s !== undefined && s !== null) {
    if (typeof s !== 'string') throw new OtlpFormatError(`${where}.stringValue must be a string.`)
    return s
  }
  const b = field(value, 'boolValue')
  if (b !== undefined && b !== null) {
    if (typeof b !== 'boolean') throw new OtlpFormatError(`${where}.boolValue must be a boolean.`)
    return b
  }
  const i = field(value, 'intValue')
  if (i !== undefined && i !== null) {
    const n = typeof i === 'string' && /^-?\d+$/.test(i) ? Number(i) : i
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      throw new OtlpFormatError(`${where}.intValue must be an integer.`)
    }
    return n
  }
  const d = field(value, 'doubleValue')
  if (d !== undefined && d !== null) {
    // OTLP/JSON writes NaN and the infinities as strings.
    const n = typeof d === 'string' ? Number(d) : d
    if (typeof n !== 'number') throw new OtlpFormatError(`${where}.doubleValue must be a number.`)
    return n
  }
  const array = field(value, 'arrayValue')
  if (array !== undefined && array !== null) {
    if (!isObject(array)) throw new OtlpFormatError(`${where}.arrayValue must be an object.`)
    const values = field(array, 'values') ?? []
    if (!Array.isArray(values)) throw new OtlpFormatError(`${where}.arrayValue.values must be an array.`)
    return values.map((v, n) => anyValue(v, `${where}.arrayValue.values[${n}]`, depth + 1))
  }
  const kvlist = field(value, 'kvlistValue')
  if (kvlist !== undefined && kvlist !== null) {
    if (!isObject(kvlist)) throw new OtlpFormatError(`${where}.kvlistValue must be an object.`)
    return keyValues(kvlist, 'values', `${where}.kvlistValue`, depth + 1)
  }
  const bytes = field(value, 'bytesValue')
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString('base64')
  if (typeof bytes === 'string') return bytes
  return null
}

function keyValues(obj: Obj, name: string, where: string, depth = 0): Attributes {
  const out: Attributes = Object.create(null)
  for (const [n, kv] of list(obj, name, where).entries()) {
    const key = string(kv, 'key', `${where}.${name}[${n}]`)
    out[key] = anyValue(field(kv, 'value'), `${where}.${name}[${n}].value`, depth)
  }
  return out
}

/** The spans of a request, each with its resource's attributes. */
export function readSpans(request: unknown): Span[] {
  if (!isObject(request))
    throw new OtlpFormatError('The request body must be an ExportTraceServiceRequest object.')
  const spans: Span[] = []
  for (const [r, resourceSpans] of list(request, 'resourceSpans', 'body').entries()) {
    const rWhere = `resourceSpans[${r}]`
    const resourceObj = field(resourceSpans, 'resource')
    if (resourceObj !== undefined && resourceObj !== null && !isObject(resourceObj)) {
      throw new OtlpFormatError(`${rWhere}.resource must be an object.`)
    }
    const resource = resourceObj ? keyValues(resourceObj, 'attributes', `${rWhere}.resource`) : {}
    for (const [s, scopeSpans] of list(resourceSpans, 'scopeSpans', rWhere).entries()) {
      const sWhere = `${rWhere}.scopeSpans[${s}]`
      for (const [n, span] of list(scopeSpans, 'spans', sWhere).entries()) {
        const where = `${sWhere}.spans[${n}]`
        spans.push({
          traceId: id(span, 'traceId', where),
          spanId: id(span, 'spanId', where),
          name: string(span, 'name', where),
          startMs: timeMs(span, 'startTimeUnixNano', where),
          endMs: timeMs(span, 'endTimeUnixNano', where),
          attributes: keyValues(span, 'attributes', where),
          resource,
          events: list(span, 'events', where).map((event, e) => ({
            name: string(event, 'name', `${where}.events[${e}]`),
            timeMs: timeMs(event, 'timeUnixNano', `${where}.events[${e}]`),
            attributes: keyValues(event, 'attributes', `${where}.events[${e}]`),
          })),
        })
      }
    }
  }
  return spans
}
