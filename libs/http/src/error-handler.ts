import { isDatabaseUnavailable } from '@cas/db'
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import { AppError, ERROR_STATUS, type ErrorCode, errorBody, UnavailableError } from './errors.ts'

/** Fastify's own errors for bad requests, mapped onto API.md codes. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_VALIDATION: 'invalid_request',
}

/** Retry-After (seconds) when the database is unreachable: a restart takes a few seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

const CODE_BY_STATUS = new Map(
  (Object.entries(ERROR_STATUS) as [ErrorCode, number][]).map(([code, status]) => [status, code]),
)

/**
 * One handler turns every error into the body of API.md. Expected failures (AppError, Fastify's request
 * errors) keep their message; the database being unreachable (down, restarting, no connection free in
 * time) is a 503 with Retry-After; anything else is a 500 whose internals go to the log, never the client.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(errorBody('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`))
  })
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (!(err instanceof AppError) && isDatabaseUnavailable(err)) {
      request.log.warn({ err: { message: err.message, code: err.code } }, 'database unavailable')
      const unavailable = new UnavailableError(
        'database_unavailable',
        'The database is unavailable; retry after the time given.',
        DATABASE_RETRY_AFTER_SECONDS,
      )
      return sendUnavailable(app, unavailable, reply)
    }
    if (err instanceof UnavailableError) return sendUnavailable(app, err, reply)
    if (err instanceof AppError) {
      // A 503 AppError is expected and retryable (e.g. a read waiting for the projection): a warning
      // without a stack. A 500 AppError is a failure of ours: an error, with its stack.
      if (err.code === 'unavailable')
        request.log.warn({ code: err.code, reason: err.message }, 'request unavailable')
      else if (err.status >= 500) request.log.error({ err }, 'request failed')
      if (err.status === 503 && !reply.hasHeader('retry-after'))
        reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
      reply.code(err.status).send(errorBody(err.code, err.message, err.details))
      return
    }
    const mapped = err.code ? FASTIFY_CODES[err.code] : undefined
    // A validator that threw (rather than reporting the input invalid) comes as FST_ERR_VALIDATION with
    // status 500: that is a failure of ours, answered and logged as one below, never a 4xx code.
    if (mapped && (err.statusCode === undefined || err.statusCode < 500)) {
      const message =
        err.code === 'FST_ERR_VALIDATION'
          ? `The request ${err.validationContext ?? 'body'} is invalid.`
          : mapped === 'invalid_request'
            ? 'The request body is not valid JSON.'
            : err.message
      const details = err.validation?.map((v) => ({
        path: v.instancePath || '/',
        message: v.message ?? 'invalid',
      }))
      reply.code(err.statusCode ?? 400).send(errorBody(mapped, message, details))
      return
    }
    if (err.statusCode === 429) {
      reply.code(429).send(errorBody('rate_limited', 'Too many requests; retry after the time given.'))
      return
    }
    // Any other request error of Fastify's (e.g. a body-carrying method without Content-Type): a 4xx,
    // never a 500. Their messages describe the request, not our internals.
    if (err.code?.startsWith('FST_') && err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      const code = CODE_BY_STATUS.get(err.statusCode) ?? 'invalid_request'
      reply.code(ERROR_STATUS[code]).send(errorBody(code, err.message))
      return
    }
    request.log.error({ err }, 'unexpected error')
    reply.code(500).send(errorBody('internal', 'Something went wrong on our side; it has been logged.'))
  })
}

function sendUnavailable(app: FastifyInstance, err: UnavailableError, reply: FastifyReply) {
  app.metrics?.unavailable.inc({ reason: err.reason })
  reply.header('retry-after', String(err.retryAfterSeconds))
  reply.code(503).send(errorBody('unavailable', err.message))
}
