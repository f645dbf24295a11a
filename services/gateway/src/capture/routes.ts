import type { CaptureConfig, SignInConfig } from '@cas/config'
import {
  AppError,
  decompressRequestBody,
  documented,
  errorResponses,
  eventTrace,
  rateLimitHeaders,
} from '@cas/http'
import type { Keyring } from '@cas/keyring'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type pg from 'pg'
import { requestClient } from '../client-address.ts'
import { CAPTURE_METRICS } from '../metrics.ts'
import { registerOtlp } from '../otlp/routes.ts'
import { type RateLimitRedis, rateLimitStore } from '../rate-limit-redis.ts'
import { ApiKeyIdentifier } from './api-key-auth.ts'
import { CaptureCommitter } from './group-commit.ts'
import { CAPTURE_FIELDS, captureBodyExample, captureBodySchema, captureResponseSchema } from './schema.ts'

export interface CaptureRouteDeps {
  readonly pool: pg.Pool
  readonly keyring: Keyring
  readonly config: CaptureConfig & Pick<SignInConfig, 'UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE'>
  readonly now: () => Date
  /** Shared rate-limit counters (REDIS_URL); in memory when absent. */
  readonly redis?: RateLimitRedis
}

/** Capture's rules and answers, for the OpenAPI document (docs/api.md's "What capture takes" in full). */
const CAPTURE_DESCRIPTION = `Sends messages of one conversation with the chatbot's API key (\`Authorization: Bearer svc_live_…\`), from the chatbot's backend. The messages are stored durably before the answer, and analysed (sentiment, topics) afterwards.

Rules:
- **Idempotent per message id.** A conversation (\`conversationId\`, the caller's id) stores each message \`id\` once: sending a batch again stores nothing new, and \`messagesStored\` counts only the new messages, exactly, also under concurrent sends. Retry freely with the same ids.
- **Sizes.** 1–100 messages; \`conversationId\` and message ids 1–256 characters; \`content\` up to 32,768; \`user.id\` up to 256; every other string value of \`user\`, \`organization\`, \`session\`, \`custom\` and \`metadata\` up to 1,024 (these objects are flat: strings, numbers, booleans). Longer is a 400 naming the field, never cut. The body is at most 4 MiB (413), also once gzip-decompressed.
- **Body.** JSON in UTF-8 (\`Content-Type: application/json\`, else 415), uncompressed or \`Content-Encoding: gzip\` (other encodings are 415). Text holding U+0000 or a lone UTF-16 surrogate is a 400 naming where. Timestamps need a zone (\`Z\` or \`+hh:mm\`).
- **Later captures** of a conversation replace the \`user\`, \`organization\`, \`session\` and \`custom\` fields they carry.
- **Warnings, not silence.** The capture succeeds and \`warnings\` says, one sentence each: a custom field outside \`settings.customFields\` or of another type (stored as given); a top-level field capture does not know (ignored); a message id repeated in one request with a different message (the first is stored), or an id an earlier capture stored sent with a different role or content (the stored one is kept; a retry says nothing); \`userId\`/\`metadata\` disagreeing with \`user.id\`/\`custom\` (the new field is kept); a \`sentAt\` more than 24 hours after the receive time (the receive time is stored); a new conversation whose last message is already older than the chatbot's \`settings.retentionDays\` (stored, and erased at the next retention sweep).
- **Deprecated fields** \`userId\` and \`metadata\` still work; the answer then carries \`Deprecation: true\`.

Errors (the API.md error body): 400 \`invalid_request\` with \`details\` naming each invalid field by JSON Pointer; 401 \`unauthorized\` for a missing, malformed, unknown, rotated-away or deleted key; 413 \`payload_too_large\`; 415 \`unsupported_media_type\`; 429 \`rate_limited\` past CAPTURE_RATE_LIMIT_PER_MINUTE per key (with \`Retry-After\`: retry then); 503 \`unavailable\` under overload or with the database down (with \`Retry-After\`). Retry 429 and 5xx with the same message ids; do not retry other 4xx.`

/**
 * POST /api/v1/capture, and POST /v1/traces (OTLP, see ../otlp/routes.ts). In their own plugin scope: the rate limit applies per API key, or per client address
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
      onCommit: (size) => scope.metrics.use(CAPTURE_METRICS).captureGroupSize.observe(size),
    })
    await scope.register(rateLimit, {
      hook: 'onRequest',
      timeWindow: 60_000,
      enableDraftSpec: true,
      ...rateLimitStore(deps.redis, 'cas-capture:'),
      // A shared store that is down must not take capture down with it.
      skipOnError: true,
      keyGenerator: async (request) => {
        const identity = await keys.identify(request)
        return identity ? `key:${identity.chatbotId}` : `ip:${requestClient(request)}`
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
          operationId: 'capture',
          summary: 'Capture messages of one conversation',
          description: CAPTURE_DESCRIPTION,
          security: [{ apiKey: [] }],
          body: captureBodySchema.meta({ examples: [captureBodyExample] }),
          response: {
            200: documented(captureResponseSchema, {
              description:
                'Taken: the messages are stored durably and analysed afterwards. `messagesStored` counts the ' +
                'messages new to the conversation (a message id already stored is not stored again, so a ' +
                'retry is safe); `warnings` says what was taken other than as sent. With a deprecated field ' +
                '(`userId`, `metadata`) the answer carries `Deprecation: true`.',
              example: {
                ok: true,
                conversationId: '0f8e5d2c-7c1b-4e0a-9b3e-2d4f6a8c1e57',
                messagesStored: 2,
                analysisQueued: true,
                warnings: ['custom field seats should be number'],
              },
              headers: [...rateLimitHeaders, 'Deprecation'],
            }),
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
        scope.metrics.use(CAPTURE_METRICS).messagesStored.inc(result.messagesStored)
        scope.metrics
          .use(CAPTURE_METRICS)
          .duplicatesDropped.inc(request.body.messages.length - result.messagesStored)
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
    // OTLP/HTTP trace export: the same keys, rate limit and capture transactions (services/gateway/src/otlp).
    await registerOtlp(scope, { keys, committer })
  })
}

/** `field userID is not a capture field and was ignored (did you mean userId?)` */
function unknownFieldWarning(field: string): string {
  const meant = [...CAPTURE_FIELDS].find((known) => known.toLowerCase() === field.toLowerCase())
  return `field ${field} is not a capture field and was ignored${meant ? ` (did you mean ${meant}?)` : ''}`
}
