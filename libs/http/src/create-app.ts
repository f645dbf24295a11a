import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { installErrorHandler } from './error-handler.ts'
import { type ReadinessCheck, registerHealthRoutes } from './health.ts'

export interface HttpAppOptions {
  /** A pino logger, or false for none (tests). */
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
  /** Largest accepted request body (API.md: 4 MiB). */
  readonly bodyLimit?: number
}

export const BODY_LIMIT = 4 * 1024 * 1024

/** A Fastify instance with the API.md error body, request ids and the health routes. */
export function createHttpApp(opts: HttpAppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger || undefined,
    logger: opts.logger ? undefined : false,
    bodyLimit: opts.bodyLimit ?? BODY_LIMIT,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
  }) as unknown as FastifyInstance
  installErrorHandler(app)
  registerHealthRoutes(app, opts.readiness)
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  return app
}
