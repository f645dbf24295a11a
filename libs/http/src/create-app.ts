import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { Metrics } from '@cas/metrics'
import swagger from '@fastify/swagger'
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify'
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import { installErrorHandler } from './error-handler.ts'
import { errorBody } from './errors.ts'
import { type ReadinessCheck, registerHealthRoutes } from './health.ts'
import { MAX_BODY_DEPTH } from './json-depth.ts'
import { installLoadShedding, type LoadSheddingOptions } from './load-shedding.ts'
import { finishOpenApiDocument } from './openapi.ts'
import { installBodyParsing } from './request-body.ts'
import { loggedRequest } from './request-log.ts'
import { refuseIllFormedText } from './text-check.ts'
import { drainUnreadBody, UNREAD_BODY_DRAIN_MS } from './unread-body.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's Prometheus metrics, served at GET /metrics. */
    metrics: Metrics
  }
}

export interface HttpAppOptions {
  /** A pino logger, or false for none (tests). */
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
  /** Largest accepted request body (API.md: 4 MiB). */
  readonly bodyLimit?: number
  /** Trust X-Forwarded-* headers from a reverse proxy. */
  readonly trustProxy?: boolean
  /** The process's metrics, when several parts of it share them; a fresh set otherwise. */
  readonly metrics?: Metrics
  /** Shed requests with 503 under overload (the gateway and the query service); off when absent. */
  readonly loadShedding?: LoadSheddingOptions
  /** How long the rest of a body answered before it was read is waited for (unread-body.ts); tests shorten it. */
  readonly unreadBodyDrainMs?: number
}

export const BODY_LIMIT = 4 * 1024 * 1024

/** A process's metrics, whose failures to read a source are logged as warnings. */
export function createProcessMetrics(logger: Logger | false): Metrics {
  const log = logger || undefined
  return new Metrics({
    onError: (what, err) => log?.warn({ err: (err as Error).message }, `metrics: ${what} failed`),
  })
}

/** An incoming X-Request-Id we keep: short, and only characters safe in logs and headers. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** The caller's X-Request-Id when well-formed, else a new UUID. */
export function requestIdOf(raw: IncomingMessage): string {
  const header = raw.headers['x-request-id']
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}

/**
 * The router's own refusals, in the API.md error body like every other (Fastify's default body is its
 * own): a path whose percent-encoded bytes are not UTF-8, which cannot become a parameter. Answered here
 * in full: the router refuses before the request has a route, its hooks or the error handler.
 */
function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code !== 'FST_ERR_BAD_URL') {
    reply.send(error)
    return
  }
  reply
    .code(400)
    .header('x-request-id', request.id)
    .send(
      errorBody('invalid_request', 'The request path is not valid: percent-encoded bytes must be UTF-8.', [
        { path: '/', message: 'not valid UTF-8 once percent-decoded', in: 'params' },
      ]),
    )
}

/**
 * A Fastify instance with zod route schemas (validation, serialization and the OpenAPI document at
 * GET /api/v1/openapi.json, generated from them), the API.md error body, request ids (the caller's
 * X-Request-Id when well-formed, echoed back; logged as `requestId`), Prometheus metrics at GET /metrics,
 * optional load shedding and the health routes. Register routes after this returns; the document lists
 * every route registered by then.
 */
export async function createHttpApp(opts: HttpAppOptions): Promise<FastifyInstance> {
  const bodyLimit = opts.bodyLimit ?? BODY_LIMIT
  const unreadBody = { bodyLimit, drainMs: opts.unreadBodyDrainMs ?? UNREAD_BODY_DRAIN_MS }
  const app = Fastify({
    // Its "incoming request" lines name the URL without query values or personal path parameters.
    loggerInstance: opts.logger ? opts.logger.child({}, { serializers: { req: loggedRequest } }) : undefined,
    logger: opts.logger ? undefined : false,
    bodyLimit,
    trustProxy: opts.trustProxy ?? false,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    genReqId: requestIdOf,
    return503OnClosing: true,
    // Path parameters are validated by the route schemas (a user id may be 256 characters, percent-encoded
    // up to 12 bytes each); the router's own default limit of 100 answered 414 to valid requests.
    routerOptions: { maxParamLength: 4096 },
    // The router's own refusals, in the API.md error body like every other (Fastify's default body is
    // its own): a path whose percent-encoded bytes are not UTF-8, which cannot become a parameter.
    frameworkErrors: answerRouterError,
  }) as unknown as FastifyInstance
  const metrics = opts.metrics ?? createProcessMetrics(opts.logger)
  app.decorate('metrics', metrics)
  installBodyParsing(app)
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  installErrorHandler(app)
  // Graceful shutdown: app.close() stops accepting connections and waits for the requests in flight.
  // Their answers close their connections, so that a client keeping its connection alive cannot hold
  // the process open until the keep-alive timeout.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  if (opts.loadShedding) installLoadShedding(app, opts.loadShedding)
  refuseIllFormedText(app)
  // The API's answers hold an organization's conversations, members and keys: no browser or shared cache
  // keeps them (a shared computer's back button, a proxy), and none is read as anything but JSON.
  app.addHook('onSend', async (request, reply) => {
    if (!request.url.startsWith('/api/')) return
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
    reply.header('x-content-type-options', 'nosniff')
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Conversation Analytics API',
        version: '1.0.0',
        description:
          'Capture chatbot conversations and read their analytics. Request bodies are JSON in UTF-8 and nest at ' +
          `most ${MAX_BODY_DEPTH} levels of objects and arrays; an empty body is no body, whatever its ` +
          'Content-Type. Text anywhere in a request (body, query string, path; values and keys) must not hold ' +
          'U+0000 or a lone UTF-16 surrogate: such a request is refused with 400 naming where.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'svc_live_… chatbot API key' },
          session: { type: 'apiKey', in: 'cookie', name: 'cas_session' },
        },
      },
    },
    transform: jsonSchemaTransform,
    // Schemas with an id (JsonValue) are referenced with $ref: this puts them under components.schemas.
    // Then the shared error responses, headers and health routes (libs/http/src/openapi.ts).
    transformObject: (documentObject) => finishOpenApiDocument(jsonSchemaTransformObject(documentObject)),
  })
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  registerHealthRoutes(app, opts.readiness)
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, body } = await metrics.render()
    reply.header('content-type', contentType)
    return body
  })
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
    if (closing) reply.header('connection', 'close')
    // `complete` is false until the whole body has been received (absent under app.inject, whose body is whole).
    else if (request.raw.complete === false) drainUnreadBody(request, reply, unreadBody)
  })
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const status = reply.statusCode
    metrics.httpDuration.observe(
      { method: request.method, route, status_code: String(status) },
      reply.elapsedTime / 1000,
    )
    if (status === 429) metrics.rateLimited.inc({ route })
  })
  return app
}
