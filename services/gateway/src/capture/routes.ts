import type { CaptureConfig, SignInConfig } from '@cas/config'
import { AppError, decompressRequestBody, errorResponses, eventTrace } from '@cas/http'
import type { Keyring } from '@cas/keyring'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Redis } from 'ioredis'
import type pg from 'pg'
import { ApiKeyIdentifier } from './api-key-auth.ts'
import { CaptureCommitter } from './group-commit.ts'
import { CAPTURE_FIELDS, captureBodySchema, captureResponseSchema } from './schema.ts'

export interface CaptureRouteDeps {
  readonly pool: pg.Pool
  readonly keyring: Keyring
  readonly config: CaptureConfig & Pick<SignInConfig, 'UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE'>
  readonly now: () => Date
  /** Shared rate-limit counters (REDIS_URL); in memory when absent. */
  readonly redis?: Redis
}

/**
 * POST /api/v1/capture. In its own plugin scope: the rate limit applies per API key, or per client address
 * for requests without a valid key. Bodies are JSON only (anything else is 415), as everywhere, and may be
 * gzip-compressed (other encodings are 415). Order of checks: rate limit and key (401) before the body is
 * read (413, 415), then validation (400).
 */
export async function registerCapture(app: FastifyInstance, deps: CaptureRouteDeps): Promise<void> {
  const { config, pool } = deps
  await app.register(async (scope) => {
    const keys = new ApiKeyIdentifier(pool)
    // The top-level fields of each body that the schema does not know (it drops them): said in warnings.
    const unknownFields = new WeakMap<FastifyRequest, string[]>()
    const committer = new CaptureCommitter(pool, deps.keyring, deps.now, {
      maxTransactions: config.CAPTURE_MAX_TRANSACTIONS,
      maxGroup: config.CAPTURE_MAX_GROUP,
      onCommit: (size) => scope.metrics.captureGroupSize.observe(size),
    })
    await scope.register(rateLimit, {
      hook: 'onRequest',
      timeWindow: 60_000,
      enableDraftSpec: true,
      nameSpace: 'cas-capture:',
      redis: deps.redis,
      // A shared store that is down must not take capture down with it.
      skipOnError: true,
      keyGenerator: async (request) => {
        const identity = await keys.identify(request)
        return identity ? `key:${identity.chatbotId}` : `ip:${request.ip}`
      },
      max: (_request, key) =>
        key.startsWith('key:')
          ? config.CAPTURE_RATE_LIMIT_PER_MINUTE
          : config.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
      errorResponseBuilder: (_request, context) =>
        new AppError('rate_limited', `Too many requests; retry in ${context.after}.`),
    })

    scope.withTypeProvider<ZodTypeProvider>().post(
      '/api/v1/capture',
      {
        // After the rate limit (an onRequest hook, so failed attempts count against the client address)
        // and before the body is read.
        preParsing: [
          async (request) => {
            if (!(await keys.identify(request))) {
              throw new AppError(
                'unauthorized',
                'A valid API key is required: Authorization: Bearer svc_live_…',
              )
            }
          },
          decompressRequestBody,
        ],
        preValidation: async (request) => {
          const body = request.body
          if (body === null || typeof body !== 'object' || Array.isArray(body)) return
          const unknown = Object.keys(body).filter((field) => !CAPTURE_FIELDS.has(field))
          if (unknown.length > 0) unknownFields.set(request, unknown)
        },
        schema: {
          tags: ['capture'],
          summary: 'Capture messages of one conversation',
          description:
            'The body is JSON in UTF-8 (anything else is 400), uncompressed or with Content-Encoding: gzip ' +
            '(other encodings are 415), at most 4 MiB once decompressed (413). Text holding U+0000 or a lone ' +
            'UTF-16 surrogate (an escaped \\ud800 not in a pair) is refused with 400 naming it, and so is a ' +
            'string value of user, organization, session, custom or metadata longer than 1,024 characters. ' +
            'What is taken but not stored as sent comes back in warnings.',
          security: [{ apiKey: [] }],
          body: captureBodySchema,
          response: {
            200: captureResponseSchema,
            ...errorResponses(
              'invalid_request',
              'unauthorized',
              'payload_too_large',
              'unsupported_media_type',
              'rate_limited',
              'unavailable',
            ),
          },
        },
      },
      async (request, reply) => {
        const identity = request.apiKeyIdentity
        if (!identity) throw new AppError('unauthorized', 'A valid API key is required.')
        const result = await committer.capture({
          keyHash: identity.keyHash,
          body: request.body,
          trace: eventTrace(request),
        })
        scope.metrics.messagesStored.inc(result.messagesStored)
        scope.metrics.duplicatesDropped.inc(request.body.messages.length - result.messagesStored)
        if (result.deprecated) reply.header('deprecation', 'true')
        return {
          ok: true as const,
          conversationId: result.conversationId,
          messagesStored: result.messagesStored,
          analysisQueued: result.analysisQueued,
          warnings: [...(unknownFields.get(request) ?? []).map(unknownFieldWarning), ...result.warnings],
        }
      },
    )
  })
}

/** `field userID is not a capture field and was ignored (did you mean userId?)` */
function unknownFieldWarning(field: string): string {
  const meant = [...CAPTURE_FIELDS].find((known) => known.toLowerCase() === field.toLowerCase())
  return `field ${field} is not a capture field and was ignored${meant ? ` (did you mean ${meant}?)` : ''}`
}
