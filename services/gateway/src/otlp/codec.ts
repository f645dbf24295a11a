import protobuf from 'protobufjs'
import { OTLP_DESCRIPTOR } from './descriptor.ts'

/**
 * OTLP/HTTP's messages in both of its encodings (opentelemetry-proto, OTLP specification "OTLP/HTTP"):
 * ExportTraceServiceRequest in, ExportTraceServiceResponse and google.rpc.Status out. Protobuf is decoded
 * and encoded by protobufjs from the vendored .proto files (descriptor.ts); JSON follows OTLP's JSON
 * mapping (lowerCamelCase keys, trace and span ids in hex, enums as numbers, 64-bit integers as decimal
 * strings), read by spans.ts from the parsed object.
 */

const root = protobuf.Root.fromJSON(OTLP_DESCRIPTOR as unknown as protobuf.INamespace)
const ExportTraceServiceRequest = root.lookupType(
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
)
const ExportTraceServiceResponse = root.lookupType(
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse',
)
const Status = root.lookupType('google.rpc.Status')

export type OtlpEncoding = 'protobuf' | 'json'

export const CONTENT_TYPES: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
}

/** A request body that is not an ExportTraceServiceRequest in its encoding (answered 400). */
export class OtlpFormatError extends Error {
  override name = 'OtlpFormatError'
}

/**
 * A protobuf ExportTraceServiceRequest as a plain object: keys in lowerCamelCase as in OTLP/JSON,
 * 64-bit integers as decimal strings, bytes (trace and span ids) as Uint8Array.
 */
export function decodeProtobufRequest(bytes: Uint8Array): unknown {
  let message: protobuf.Message
  try {
    message = ExportTraceServiceRequest.decode(bytes)
  } catch (err) {
    throw new OtlpFormatError(
      `The request body is not a protobuf ExportTraceServiceRequest: ${(err as Error).message}.`,
    )
  }
  return ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, defaults: false })
}

export interface PartialSuccess {
  readonly rejectedSpans: number
  readonly errorMessage: string
}

/**
 * An ExportTraceServiceResponse. partial_success is left out when every span was taken and there is
 * nothing to say (OTLP: the server MUST leave it unset then); with rejected_spans 0 and a message, it
 * carries warnings.
 */
export function encodeResponse(encoding: OtlpEncoding, partial: PartialSuccess | null): Buffer | string {
  const body = partial
    ? { partialSuccess: { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage } }
    : {}
  if (encoding === 'json') {
    return JSON.stringify(
      partial
        ? {
            partialSuccess: {
              rejectedSpans: String(partial.rejectedSpans),
              errorMessage: partial.errorMessage,
            },
          }
        : {},
    )
  }
  return Buffer.from(ExportTraceServiceResponse.encode(ExportTraceServiceResponse.fromObject(body)).finish())
}

/** A google.rpc.Status: OTLP/HTTP's body for every 4xx and 5xx. `code` is the gRPC status code. */
export function encodeStatus(encoding: OtlpEncoding, code: number, message: string): Buffer | string {
  if (encoding === 'json') return JSON.stringify({ code, message })
  return Buffer.from(Status.encode(Status.fromObject({ code, message })).finish())
}

/** For tests and clients of ours: a Status or a response read back from protobuf. */
export function decodeStatus(bytes: Uint8Array): { code?: number; message?: string } {
  return Status.toObject(Status.decode(bytes)) as { code?: number; message?: string }
}

export function decodeResponse(bytes: Uint8Array): {
  partialSuccess?: { rejectedSpans?: string; errorMessage?: string }
} {
  return ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(bytes), { longs: String })
}

/** gRPC status codes for the HTTP statuses the route answers (OTLP maps them back the other way). */
export const GRPC_CODE_BY_HTTP_STATUS: Readonly<Record<number, number>> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  413: 3, // INVALID_ARGUMENT
  415: 3,
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  503: 14, // UNAVAILABLE
}
