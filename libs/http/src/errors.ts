/** The error codes of API.md, each with its HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export interface ErrorDetail {
  /** JSON Pointer into the part of the request named by `in` (the body when absent). */
  readonly path: string
  readonly message: string
  readonly in?: string
}

/** An expected failure: a stable code, a sentence for humans, and whether trying again may succeed. */
export class AppError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: readonly ErrorDetail[],
    readonly retryable = code === 'unavailable' || code === 'rate_limited',
  ) {
    super(message)
    this.name = 'AppError'
    this.status = ERROR_STATUS[code]
  }
}

/** Why a request was answered 503 (the `reason` label of cas_http_unavailable_responses_total). */
export type UnavailableReason = 'event_loop_delay' | 'pool_saturated' | 'database_unavailable'

/** 503 with a Retry-After: overloaded, or a dependency is down. Trying again later may well succeed. */
export class UnavailableError extends AppError {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('unavailable', message)
    this.name = 'UnavailableError'
  }
}

export interface ErrorBody {
  ok: false
  error: { code: ErrorCode; message: string; details?: readonly ErrorDetail[] }
}

export function errorBody(code: ErrorCode, message: string, details?: readonly ErrorDetail[]): ErrorBody {
  return { ok: false, error: details ? { code, message, details } : { code, message } }
}
