import type { z } from 'zod'
import { ERROR_STATUS, type ErrorCode } from './errors.ts'

/**
 * The parts of the OpenAPI document written once and referenced from every operation: the API.md error
 * responses (one per status, with an example and the headers it carries), the response headers, and the
 * health routes. `finishOpenApiDocument` puts them in; the routes' own schemas say the rest (summary,
 * description, operationId, and each success response's description and example through `documented`).
 * openapi/redocly.yaml lists the rules every operation must pass; `npm run lint` runs them.
 */

/** A response header, by its name in components.headers. */
export type ResponseHeader =
  | 'RequestId'
  | 'RetryAfter'
  | 'RateLimitLimit'
  | 'RateLimitRemaining'
  | 'RateLimitReset'
  | 'Deprecation'

/** A whole number, as a header carries it (a string of digits). */
const SECONDS_OR_COUNT = { type: 'string', pattern: '^[0-9]+$' }

export const RESPONSE_HEADERS: Record<ResponseHeader, { header: string; value: object }> = {
  RequestId: {
    header: 'X-Request-Id',
    value: {
      description:
        "On every response: the request's id, the caller's X-Request-Id when it is 1–128 characters of " +
        '[A-Za-z0-9._:@/+=-], else a new UUID. Every log line and event of the request carries it.',
      schema: { type: 'string' },
      example: '6f1c2f9e-2b43-4c1a-9a57-3f0a4f7c8d21',
    },
  },
  RetryAfter: {
    header: 'Retry-After',
    value: {
      description: 'Seconds to wait before trying again (429 and 503).',
      schema: SECONDS_OR_COUNT,
      example: '5',
    },
  },
  RateLimitLimit: {
    header: 'RateLimit-Limit',
    value: {
      description: "Requests allowed in the rate limit's window (IETF draft RateLimit header fields).",
      schema: SECONDS_OR_COUNT,
      example: '600',
    },
  },
  RateLimitRemaining: {
    header: 'RateLimit-Remaining',
    value: {
      description: 'Requests left in the current window.',
      schema: SECONDS_OR_COUNT,
      example: '599',
    },
  },
  RateLimitReset: {
    header: 'RateLimit-Reset',
    value: {
      description: 'Seconds until the current window ends.',
      schema: SECONDS_OR_COUNT,
      example: '42',
    },
  },
  Deprecation: {
    header: 'Deprecation',
    value: {
      description:
        'Present, with the value `true`, when the request used a deprecated field (capture: `userId` or ' +
        '`metadata`; use `user.id` and `custom`). The request was still taken.',
      schema: { type: 'string', enum: ['true'] },
      example: 'true',
    },
  },
}

const RATE_LIMIT_HEADERS: readonly ResponseHeader[] = [
  'RateLimitLimit',
  'RateLimitRemaining',
  'RateLimitReset',
]

interface ErrorResponseDoc {
  readonly name: string
  readonly description: string
  readonly message: string
  readonly details?: readonly { path: string; message: string; in?: string }[]
  readonly headers?: readonly ResponseHeader[]
}

/** The shared error responses, one per API.md code: components.responses.<name>. */
export const ERROR_RESPONSES: Record<ErrorCode, ErrorResponseDoc> = {
  invalid_request: {
    name: 'BadRequest',
    description:
      'The request is invalid: a field, parameter or the body itself (not JSON, not UTF-8, nested too ' +
      'deep, text holding U+0000 or a lone surrogate). `details` lists each invalid value by JSON Pointer, ' +
      'and `in` says where (the body when absent). Nothing was changed.',
    message: 'The request body is invalid.',
    details: [{ path: '/messages/0/role', message: 'Invalid option: expected one of "user"|"assistant"' }],
  },
  unauthorized: {
    name: 'Unauthorized',
    description:
      'No valid credentials: capture without a valid API key (missing, malformed, unknown, rotated away or ' +
      'of a deleted chatbot), or a dashboard route without a signed-in session.',
    message: 'A valid API key is required: Authorization: Bearer svc_live_…',
  },
  forbidden: {
    name: 'Forbidden',
    description:
      'Signed in, but not allowed: the role may not do this (see the permission matrix in docs/api.md), the ' +
      'session works in no organization, or a cross-site request was refused by the Origin check.',
    message: 'Your role may not do this.',
  },
  not_found: {
    name: 'NotFound',
    description:
      "Nothing with this id in the session's current organization (another organization's data is 404 too).",
    message: 'chatbot not found',
  },
  conflict: {
    name: 'Conflict',
    description:
      'The request conflicts with the current state (e.g. it would leave an organization without an owner).',
    message: 'The last owner cannot leave the organization.',
  },
  payload_too_large: {
    name: 'PayloadTooLarge',
    description: 'The body is larger than 4 MiB, compressed or once gzip-decompressed.',
    message: 'Request body is too large',
  },
  unsupported_media_type: {
    name: 'UnsupportedMediaType',
    description:
      'The body is not `application/json`, or its Content-Encoding is neither gzip (x-gzip) nor absent.',
    message: 'Unsupported Media Type: text/plain',
  },
  rate_limited: {
    name: 'RateLimited',
    description:
      'Too many requests: wait for Retry-After seconds, then try again. Nothing of the request was taken.',
    message: 'Too many requests; retry in 1 minute.',
    headers: ['RetryAfter', ...RATE_LIMIT_HEADERS],
  },
  internal: {
    name: 'InternalError',
    description: 'A failure on our side; its cause is logged under the X-Request-Id, never sent.',
    message: 'Something went wrong on our side; it has been logged.',
  },
  unavailable: {
    name: 'Unavailable',
    description:
      'Overloaded (load shedding), the database unreachable, or a read waiting for the projection: try ' +
      'again after Retry-After seconds. Nothing was changed.',
    message: 'The database is unavailable; retry after the time given.',
    headers: ['RetryAfter'],
  },
}

/** Documentation of a success response, given to `documented`. */
export interface ResponseDoc<T> {
  /** What the response means (the linter refuses "Default Response"). */
  readonly description: string
  /** An example body; the linter checks it against the schema. */
  readonly example: T
  /** Headers it carries besides X-Request-Id (which every response has). */
  readonly headers?: readonly ResponseHeader[]
}

/**
 * A success response schema with its description, example and headers for the OpenAPI document. The
 * schema validates and serializes as before: these are metadata only.
 */
export function documented<S extends z.ZodType>(schema: S, doc: ResponseDoc<z.output<S>>): S {
  return schema.meta({
    description: doc.description,
    examples: [doc.example],
    ...(doc.headers ? { [HEADERS_KEY]: [...doc.headers] } : {}),
  }) as S
}

/** The rate-limit headers, for `documented` on rate-limited routes. */
export const rateLimitHeaders = RATE_LIMIT_HEADERS

/** The marker that errorResponses puts on an error schema (and finishOpenApiDocument takes off). */
export const ERROR_RESPONSE_KEY = 'x-cas-error-code'
const HEADERS_KEY = 'x-cas-response-headers'

const ERROR_BY_STATUS = new Map(
  (Object.entries(ERROR_STATUS) as [ErrorCode, number][]).map(([code, status]) => [String(status), code]),
)

type Json = Record<string, unknown>

function headerRefs(names: readonly ResponseHeader[]): Json {
  return Object.fromEntries(
    ['RequestId' as const, ...names].map((name) => [
      RESPONSE_HEADERS[name].header,
      { $ref: `#/components/headers/${name}` },
    ]),
  )
}

function errorComponent(code: ErrorCode, doc: ErrorResponseDoc): Json {
  const error = doc.details
    ? { code, message: doc.message, details: doc.details }
    : { code, message: doc.message }
  return {
    description: doc.description,
    headers: headerRefs(doc.headers ?? []),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: { ok: false, error },
      },
    },
  }
}

const ERROR_SCHEMA: Json = {
  type: 'object',
  description:
    'Every error: a stable `code` (one per HTTP status), a `message` for humans, and for 400 `details`, ' +
    'each invalid value by JSON Pointer (`path`) in the part of the request named by `in` (body when absent).',
  properties: {
    ok: { type: 'boolean', enum: [false] },
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              path: { type: 'string', description: 'JSON Pointer to the invalid value.' },
              message: { type: 'string' },
              in: { type: 'string', description: 'body (when absent), querystring, params or headers.' },
            },
            required: ['path', 'message'],
            additionalProperties: false,
          },
        },
      },
      required: ['code', 'message'],
      additionalProperties: false,
    },
  },
  required: ['ok', 'error'],
  additionalProperties: false,
}

const HEALTH_PATHS: Json = {
  '/healthz': {
    get: {
      tags: ['operations'],
      operationId: 'getHealth',
      summary: 'Is the process alive',
      description: 'Answers 200 while the process runs; checks no dependency (for liveness probes).',
      security: [],
      responses: {
        200: {
          description: 'The process is alive.',
          headers: headerRefs([]),
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { ok: { type: 'boolean', enum: [true] } },
                required: ['ok'],
              },
              example: { ok: true },
            },
          },
        },
      },
    },
  },
  '/readyz': {
    get: {
      tags: ['operations'],
      operationId: 'getReadiness',
      summary: 'Are the dependencies reachable',
      description:
        'Checks each dependency (database, event log, analyzer) within 2 s: 200 when all are reachable, 503 ' +
        'with Retry-After otherwise (for readiness probes and load balancers). `details` describes some of ' +
        'them (which analyzer is in use, how far behind the pipeline is, whether a relay leads: `relay` ' +
        '`{leader, since}`, a standby being ready) without affecting readiness.',
      security: [],
      responses: {
        200: {
          description: 'Every dependency is reachable.',
          headers: headerRefs([]),
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  ok: { type: 'boolean', enum: [true] },
                  checks: { type: 'object', additionalProperties: { type: 'string', enum: ['ok'] } },
                  details: { type: 'object' },
                },
                required: ['ok', 'checks'],
              },
              example: { ok: true, checks: { postgres: 'ok', eventlog: 'ok' } },
            },
          },
        },
        503: {
          description: 'A dependency is unreachable; `checks` names it.',
          headers: headerRefs(['RetryAfter']),
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  ok: { type: 'boolean', enum: [false] },
                  error: { type: 'object' },
                  checks: {
                    type: 'object',
                    additionalProperties: { type: 'string', enum: ['ok', 'unreachable'] },
                  },
                  details: { type: 'object' },
                },
                required: ['ok', 'error', 'checks'],
              },
              example: {
                ok: false,
                error: { code: 'unavailable', message: 'A dependency is unreachable.' },
                checks: { postgres: 'unreachable', eventlog: 'ok' },
              },
            },
          },
        },
      },
    },
  },
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']

/**
 * The document as served: the shared components added, each error response replaced by a reference to
 * its shared definition, the headers each success response declared (and X-Request-Id) referenced, 500
 * and 503 added where a route did not list them (every route can answer them: a failure of ours, load
 * shedding, the database down), 413 and 415 likewise on every route that takes a body, and the health routes.
 */
export function finishOpenApiDocument<D>(document: D): D {
  const doc = document as Json & { paths: Record<string, Record<string, Json>>; components?: Json }
  doc.components ??= {}
  const components = doc.components as Record<string, Json>
  components.schemas = { ...(components.schemas ?? {}), Error: ERROR_SCHEMA }
  components.headers = Object.fromEntries(
    Object.entries(RESPONSE_HEADERS).map(([name, { value }]) => [name, value]),
  )
  components.responses = Object.fromEntries(
    (Object.entries(ERROR_RESPONSES) as [ErrorCode, ErrorResponseDoc][]).map(([code, d]) => [
      d.name,
      errorComponent(code, d),
    ]),
  )
  doc.paths = { ...doc.paths, ...(HEALTH_PATHS as typeof doc.paths) }
  for (const item of Object.values(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      const responses = (operation.responses ?? {}) as Record<string, Json>
      for (const [status, response] of Object.entries(responses)) {
        if ('$ref' in response) continue
        const media = (response.content as Record<string, Json> | undefined)?.['application/json']
        const schema = media?.schema as Json | undefined
        const errorCode = schema?.[ERROR_RESPONSE_KEY] as ErrorCode | undefined
        if (errorCode) {
          responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[errorCode].name}` }
          continue
        }
        const declared = (schema?.[HEADERS_KEY] ?? []) as ResponseHeader[]
        if (schema) delete schema[HEADERS_KEY]
        // documented() put the response's description on its schema too: said once is enough.
        if (schema && schema.description === response.description) delete schema.description
        response.headers = { ...headerRefs(declared), ...((response.headers as Json | undefined) ?? {}) }
      }
      // Every route that takes a body refuses one over its body limit (BODY_LIMIT, 4 MiB, unless the route
      // sets its own) with 413, and one that is not JSON, or is compressed where the route does not
      // decompress (request-body.ts), with 415.
      const statuses = operation.requestBody ? ['413', '415', '500', '503'] : ['500', '503']
      for (const status of statuses) {
        const code = ERROR_BY_STATUS.get(status)!
        responses[status] ??= { $ref: `#/components/responses/${ERROR_RESPONSES[code].name}` }
      }
      operation.responses = Object.fromEntries(
        Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
      )
    }
  }
  return document
}
