import type { components, paths } from './openapi.gen.js'

type CapturePost = paths['/api/v1/capture']['post']

/** The body of POST /api/v1/capture, as the service's OpenAPI document describes it. */
export type CaptureRequestBody = CapturePost['requestBody']['content']['application/json']
/** One message of a capture request body. */
export type CaptureRequestMessage = CaptureRequestBody['messages'][number]
/** The answer to a capture that was taken (200). */
export type CaptureResponseBody = CapturePost['responses'][200]['content']['application/json']
/** The body of every error answer: `{ ok: false, error: { code, message, details } }`. */
export type ErrorResponseBody = components['schemas']['Error']

/** A message given to `capture()`: its id and time are filled in when left out. */
export interface CaptureMessage {
  /**
   * Your id for the message; the service stores an id once per conversation. Left out, the SDK makes one
   * (a random UUID) when the message is queued, so that a retried request stores nothing twice.
   */
  id?: string
  role: CaptureRequestMessage['role']
  content: string
  /** When it was sent; left out, the time `capture()` was called. */
  sentAt?: string | Date
}

/** What `capture()` takes: the conversation's id, its new messages and, optionally, who and where. */
export interface CaptureInput {
  conversationId: string
  messages: CaptureMessage[]
  user?: CaptureRequestBody['user']
  organization?: CaptureRequestBody['organization']
  session?: CaptureRequestBody['session']
  custom?: CaptureRequestBody['custom']
}

/** Why messages were not delivered. */
export type CaptureErrorKind =
  /** The service refused the request (a 4xx other than 408 and 429); never retried. */
  | 'rejected'
  /** Every attempt failed (429, 5xx, 408, a network error or a timeout) and `maxRetries` ran out. */
  | 'retries_exhausted'
  /** The queue held `maxQueueSize` messages already: the new ones were dropped. */
  | 'queue_full'
  /** `capture()` was given something the service would refuse; nothing was queued. */
  | 'invalid'
  /** `shutdown()` ran out of time, or `capture()` was called after it. */
  | 'shutdown'

/** A failure to deliver, given to `onError`. */
export class CaptureError extends Error {
  override readonly name = 'CaptureError'
  /** The conversation (your id), when it concerns one. */
  readonly conversationId: string | undefined
  /** The last HTTP status, when there was one. */
  readonly status: number | undefined
  /** The service's error body (`{ ok: false, error: { code, message, details } }`), for `rejected`. */
  readonly response: ErrorResponseBody | undefined

  constructor(
    readonly kind: CaptureErrorKind,
    message: string,
    /** How many messages it concerns (not delivered). */
    readonly messageCount: number,
    details: {
      readonly conversationId?: string | undefined
      readonly status?: number | undefined
      readonly response?: ErrorResponseBody | undefined
      /** The last network error, when there was one. */
      readonly cause?: unknown
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.conversationId = details.conversationId
    this.status = details.status
    this.response = details.response
  }
}

/** What a warning is about; the service says it in a sentence, the SDK sorts it by its words. */
export type CaptureWarningKind =
  | 'custom_field'
  | 'unknown_field'
  | 'repeated_message_id'
  | 'deprecated_field'
  | 'sent_at_in_future'
  | 'other'

/** Something the service took differently from how it was sent (the response's `warnings`). */
export interface CaptureWarning {
  readonly kind: CaptureWarningKind
  /** The service's sentence, e.g. `custom field plan is not in the schema`. */
  readonly message: string
  readonly conversationId: string
}

/** Counts since the client was made. */
export interface CaptureStats {
  /** Messages waiting (queued or in the request being sent). */
  readonly queued: number
  /** Messages in requests the service answered 200. */
  readonly delivered: number
  /** The sum of `messagesStored` of those answers: `delivered` less what the service already had. */
  readonly stored: number
  /** Messages dropped because the queue was full. */
  readonly dropped: number
  /** Messages given up: refused (4xx), out of retries, or left at shutdown. */
  readonly failed: number
  /** Requests sent again after a 429, a 5xx, a 408, a network error or a timeout. */
  readonly retries: number
  /**
   * 429 answers: each attempt answered 429 counts once, whether it was retried, given up or left at
   * shutdown (the Python SDK's `rate_limited` counts the same).
   */
  readonly rateLimited: number
  /** Requests the service answered 200. */
  readonly requests: number
}
