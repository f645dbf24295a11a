import { randomUUID } from 'node:crypto'
import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance } from 'fastify'
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import { installErrorHandler } from './error-handler.ts'
import { type ReadinessCheck, registerHealthRoutes } from './health.ts'
import { refuseNulCharacters } from './nul-check.ts'

export interface HttpAppOptions {
  /** A pino logger, or false for none (tests). */
  readonly logger: Logger | false
  readonly readiness: readonly ReadinessCheck[]
  /** Largest accepted request body (API.md: 4 MiB). */
  readonly bodyLimit?: number
  /** Trust X-Forwarded-* headers from a reverse proxy. */
  readonly trustProxy?: boolean
}

export const BODY_LIMIT = 4 * 1024 * 1024

/**
 * A Fastify instance with zod route schemas (validation, serialization and the OpenAPI document at
 * GET /api/v1/openapi.json, generated from them), the API.md error body, request ids and the health
 * routes. Register routes after this returns; the document lists every route registered by then.
 */
export async function createHttpApp(opts: HttpAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger || undefined,
    logger: opts.logger ? undefined : false,
    bodyLimit: opts.bodyLimit ?? BODY_LIMIT,
    trustProxy: opts.trustProxy ?? false,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // Path parameters are validated by the route schemas (a user id may be 256 characters, percent-encoded
    // up to 12 bytes each); the router's own default limit of 100 answered 414 to valid requests.
    routerOptions: { maxParamLength: 4096 },
  }) as unknown as FastifyInstance
  // Every API speaks JSON: a text/plain body is refused (415) rather than parsed as a string.
  app.removeContentTypeParser('text/plain')
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  installErrorHandler(app)
  refuseNulCharacters(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Conversation Analytics API',
        version: '1.0.0',
        description: 'Capture chatbot conversations and read their analytics.',
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
    transformObject: jsonSchemaTransformObject,
  })
  app
    .withTypeProvider<ZodTypeProvider>()
    .get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  registerHealthRoutes(app, opts.readiness)
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  return app
}
