import { isUtf8 } from 'node:buffer'
import { isDatabaseUnavailable } from '@cas/db'
import {
  AppError,
  DATABASE_RETRY_AFTER_SECONDS,
  decompressRequestBody,
  documented,
  eventTrace,
  type ResponseHeader,
  rateLimitHeaders,
  UnavailableError,
} from '@cas/http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ApiKeyIdentifier } from '../capture/api-key-auth.ts'
import type { CaptureResult } from '../capture/capture.ts'
import type { CaptureCommitter } from '../capture/group-commit.ts'
import { CAPTURE_METRICS } from '../metrics.ts'
import {
  CONTENT_TYPES,
  decodeProtobufRequest,
  encodeResponse,
  encodeStatus,
  GRPC_CODE_BY_HTTP_STATUS,
  type OtlpEncoding,
  OtlpFormatError,
} from './codec.ts'
import { planIngest } from './ingest.ts'
import { readSpans } from './spans.ts'

export interface OtlpRouteDeps {
  readonly keys: ApiKeyIdentifier
  readonly committer: CaptureCommitter
}

/** OTLP batches of whole histories are larger than capture's: 16 MiB, compressed and decompressed. */
export const OTLP_BODY_LIMIT = 16 * 1024 * 1024

/**
 * The body as read, kept opaque: the bytes are decoded in the handler, after the key was checked. (Its
 * fields are private, so the app-wide text check, which walks request bodies, does not walk the bytes:
 * ill-formed text in a span rejects that span alone, see ingest.ts.)
 */
class OtlpBody {
  readonly #bytes: Buffer
  readonly #encoding: OtlpEncoding
  constructor(bytes: Buffer, encoding: OtlpEncoding) {
    this.#bytes = bytes
    this.#encoding = encoding
  }
  decode(): unknown {
    if (this.#encoding === 'protobuf') return decodeProtobufRequest(this.#bytes)
    if (!isUtf8(this.#bytes)) throw new OtlpFormatError('The request body is not UTF-8 (OTLP/JSON).')
    let parsed: unknown
    try {
      parsed = JSON.parse(this.#bytes.toString('utf8'))
    } catch {
      throw new OtlpFormatError('The request body is not valid JSON.')
    }
    return parsed
  }
}

/** The encoding the answer is in: the request's (OTLP), protobuf when it was neither. */
function encodingOf(request: FastifyRequest): OtlpEncoding {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase()
  return type === 'application/json' ? 'json' : 'protobuf'
}

const exportResponseSchema = z
  .object({
    partialSuccess: z
      .object({
        rejectedSpans: z
          .string()
          .describe('How many spans were refused (int64, a decimal string in OTLP/JSON).'),
        errorMessage: z.string().describe('Why, and what was taken differently from how it was sent.'),
      })
      .optional()
      .describe('Absent when every span was taken and there is nothing to say.'),
  })
  .describe(
    'ExportTraceServiceResponse, in the encoding of the request (protobuf for application/x-protobuf).',
  )

/** For the OpenAPI document only: the body is read by spans.ts, not validated by a schema. */
const exportRequestSchema = z
  .object({
    resourceSpans: z
      .array(z.object({}).passthrough())
      .optional()
      .describe('ResourceSpans: resource, scopeSpans[].spans[] with their attributes and events.'),
  })
  .passthrough()
  .describe(
    'ExportTraceServiceRequest (opentelemetry-proto), as protobuf or in the OTLP/JSON mapping: ' +
      'lowerCamelCase keys, traceId and spanId in hex, 64-bit integers as decimal strings.',
  )
  .meta({
    examples: [
      {
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '5b8efff798038103d269b633813fc60c',
                    spanId: 'eee19b7ec3c1b174',
                    name: 'chat gpt-4o',
                    startTimeUnixNano: '1767225600000000000',
                    endTimeUnixNano: '1767225601000000000',
                    attributes: [
                      { key: 'gen_ai.conversation.id', value: { stringValue: 'order-1234' } },
                      { key: 'user.id', value: { stringValue: 'end-user-42' } },
                      {
                        key: 'gen_ai.input.messages',
                        value: {
                          stringValue:
                            '[{"role":"user","parts":[{"type":"text","content":"Where is my parcel?"}]}]',
                        },
                      },
                      {
                        key: 'gen_ai.output.messages',
                        value: {
                          stringValue:
                            '[{"role":"assistant","parts":[{"type":"text","content":"It left our depot today."}],"finish_reason":"stop"}]',
                        },
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
  })

const statusSchema = z
  .object({
    code: z.number().int().describe('The gRPC status code (3 invalid argument, 16 unauthenticated, …).'),
    message: z.string(),
  })
  .describe('google.rpc.Status, in the encoding of the request (protobuf for application/x-protobuf).')

/** A documented google.rpc.Status answer. */
const status = (
  description: string,
  code: number,
  message: string,
  headers: readonly ResponseHeader[] = [],
) =>
  documented(statusSchema, {
    description: `${description} A google.rpc.Status in the encoding of the request.`,
    example: { code, message },
    headers,
  })

/**
 * POST /v1/traces, OTLP/HTTP trace export (registered in capture's scope: the same API keys and the same
 * rate limit per key). The body is an ExportTraceServiceRequest in protobuf (application/x-protobuf) or
 * OTLP/JSON (application/json), uncompressed or gzip. GenAI spans become capture requests (ingest.ts)
 * taken by capture's own command path; other spans are acknowledged and ignored. Answers are OTLP's:
 * ExportTraceServiceResponse with partial_success, and google.rpc.Status for every 4xx and 5xx, in the
 * request's encoding; 429 and 503 carry Retry-After, which OTLP exporters honour.
 */
export async function registerOtlp(scope: FastifyInstance, deps: OtlpRouteDeps): Promise<void> {
  await scope.register(async (otlp) => {
    otlp.removeAllContentTypeParsers()
    for (const encoding of ['protobuf', 'json'] as const) {
      otlp.addContentTypeParser(CONTENT_TYPES[encoding], { parseAs: 'buffer' }, (_request, body, done) =>
        done(null, (body as Buffer).length === 0 ? undefined : new OtlpBody(body as Buffer, encoding)),
      )
    }
    otlp.addContentTypeParser('*', (_request, payload, done) => {
      payload.resume()
      done(
        new AppError(
          'unsupported_media_type',
          'OTLP/HTTP bodies are application/x-protobuf or application/json.',
        ),
        undefined,
      )
    })
    // The body schema is for the OpenAPI document: spans.ts reads and checks the body itself.
    otlp.setValidatorCompiler(() => (data) => ({ value: data }))
    otlp.setErrorHandler((err: FastifyError, request, reply) => answerError(otlp, err, request, reply))

    otlp.post(
      '/v1/traces',
      {
        bodyLimit: OTLP_BODY_LIMIT,
        preParsing: [
          async (request) => {
            if (!(await deps.keys.identify(request))) {
              throw new AppError(
                'unauthorized',
                "A valid API key is required: the chatbot's key as Authorization: Bearer svc_live_…",
              )
            }
          },
          decompressRequestBody,
        ],
        schema: {
          tags: ['capture'],
          operationId: 'exportTraces',
          summary: 'Ingest OpenTelemetry GenAI traces (OTLP/HTTP)',
          description:
            'The standard OTLP/HTTP trace export: point an OpenTelemetry exporter at the service (its base ' +
            'URL as OTEL_EXPORTER_OTLP_ENDPOINT) with the chatbot API key in Authorization: Bearer. The body ' +
            'is an ExportTraceServiceRequest in protobuf (application/x-protobuf) or OTLP/JSON ' +
            '(application/json), uncompressed or with Content-Encoding: gzip, at most 16 MiB. Spans that ' +
            'follow the GenAI semantic conventions (gen_ai.input.messages / gen_ai.output.messages, the ' +
            'earlier gen_ai.prompt.N / gen_ai.completion.N attributes and gen_ai.*.message / gen_ai.choice ' +
            'events, the Vercel AI SDK’s ai.prompt.messages) become conversations and messages, as capture ' +
            'stores them: the conversation is gen_ai.conversation.id, else session.id, else the trace; the ' +
            'end user is user.id or enduser.id. Each message gets an id from its conversation, role, text ' +
            'and repeats, so history repeated by later spans is stored once. Other spans are acknowledged ' +
            'and ignored. Spans that cannot be stored (a message over 32,768 characters, text with U+0000) ' +
            'are counted in partialSuccess.rejectedSpans; warnings come in partialSuccess.errorMessage. ' +
            'Errors are a google.rpc.Status; rate limited like capture, per API key.',
          security: [{ apiKey: [] }],
          body: exportRequestSchema,
          consumes: [CONTENT_TYPES.protobuf, CONTENT_TYPES.json],
          produces: [CONTENT_TYPES.protobuf, CONTENT_TYPES.json],
          response: {
            200: documented(exportResponseSchema, {
              description:
                'Taken: every span stored or ignored, or some refused (partialSuccess). ' +
                'ExportTraceServiceResponse, in the encoding of the request.',
              example: {
                partialSuccess: {
                  rejectedSpans: '1',
                  errorMessage: 'span eee19b7ec3c1b174: a user message is longer than 32,768 characters',
                },
              },
              headers: rateLimitHeaders,
            }),
            400: status(
              'Not an ExportTraceServiceRequest (bad protobuf, JSON or gzip), or no body.',
              3,
              'The request body is not a protobuf ExportTraceServiceRequest: invalid wire type 4 at offset 1.',
            ),
            401: status('No API key, or not a valid one.', 16, 'A valid API key is required.'),
            413: status(
              'The body is over 16 MiB, compressed or decompressed.',
              3,
              'The request body is larger than 16777216 bytes.',
            ),
            415: status(
              'A Content-Type other than application/x-protobuf or application/json, or a ' +
                'Content-Encoding other than gzip.',
              3,
              'OTLP/HTTP bodies are application/x-protobuf or application/json.',
            ),
            429: status(
              'Rate limited (per API key, one budget with capture): retry after Retry-After seconds.',
              8,
              'Too many requests; retry in 1 minute.',
              ['RetryAfter', ...rateLimitHeaders],
            ),
            500: status(
              'A failure of ours; it has been logged.',
              13,
              'Something went wrong on our side; it has been logged.',
            ),
            503: status(
              'Overloaded, or the database is unavailable: retry after Retry-After seconds.',
              14,
              'The database is unavailable; retry after the time given.',
              ['RetryAfter'],
            ),
          },
        },
      },
      async (request, reply) => {
        const identity = request.apiKeyIdentity
        if (!identity) throw new AppError('unauthorized', 'A valid API key is required.')
        const body = request.body as unknown
        const encoding = encodingOf(request)
        if (!(body instanceof OtlpBody)) {
          throw new OtlpFormatError('The request body is missing: send an ExportTraceServiceRequest.')
        }
        const plan = planIngest(readSpans(body.decode()))
        const trace = eventTrace(request)
        const results = await Promise.all(
          plan.conversations.map(async (bodies) => {
            const out: CaptureResult[] = []
            // A conversation's bodies in order: each waits for the one before it.
            for (const captureBody of bodies) {
              out.push(await deps.committer.capture({ keyHash: identity.keyHash, body: captureBody, trace }))
              otlp.metrics.use(CAPTURE_METRICS).messagesStored.inc(out.at(-1)!.messagesStored)
              otlp.metrics
                .use(CAPTURE_METRICS)
                .duplicatesDropped.inc(captureBody.messages.length - out.at(-1)!.messagesStored)
            }
            return out
          }),
        )
        const warnings = [...plan.warnings, ...results.flat().flatMap((r) => r.warnings)]
        const said = [...plan.rejected, ...warnings]
        reply.header('content-type', CONTENT_TYPES[encoding])
        return encodeResponse(
          encoding,
          said.length > 0 ? { rejectedSpans: plan.rejected.length, errorMessage: said.join('; ') } : null,
        )
      },
    )
  })
}

/**
 * Every error of the route as OTLP/HTTP says: a google.rpc.Status in the request's encoding, with the
 * HTTP status capture would answer (429 and 503 with Retry-After, which OTLP exporters retry on).
 */
function answerError(app: FastifyInstance, err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  let status: number
  let message: string
  if (err instanceof OtlpFormatError) {
    status = 400
    message = err.message
  } else if (err instanceof UnavailableError) {
    app.metrics.unavailable.inc({ reason: err.reason })
    reply.header('retry-after', String(err.retryAfterSeconds))
    status = 503
    message = err.message
  } else if (!(err instanceof AppError) && isDatabaseUnavailable(err)) {
    request.log.warn({ err: { message: err.message, code: err.code } }, 'database unavailable')
    app.metrics.unavailable.inc({ reason: 'database_unavailable' })
    reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
    status = 503
    message = 'The database is unavailable; retry after the time given.'
  } else if (err instanceof AppError) {
    status = err.status
    message = err.message
    if (status >= 500 && err.code !== 'unavailable') request.log.error({ err }, 'request failed')
    if (status === 503 && !reply.hasHeader('retry-after')) {
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
    }
  } else if (err.statusCode === 429) {
    status = 429
    message = 'Too many requests; retry after the time given.'
  } else if (
    err.code?.startsWith('FST_') &&
    err.statusCode &&
    err.statusCode >= 400 &&
    err.statusCode < 500
  ) {
    status = err.statusCode
    message =
      err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? `The request body is larger than ${OTLP_BODY_LIMIT} bytes.`
        : err.message
  } else {
    request.log.error({ err }, 'unexpected error')
    status = 500
    message = 'Something went wrong on our side; it has been logged.'
  }
  const encoding = encodingOf(request)
  reply
    .code(status)
    .header('content-type', CONTENT_TYPES[encoding])
    .send(encodeStatus(encoding, GRPC_CODE_BY_HTTP_STATUS[status] ?? 2, message))
}
