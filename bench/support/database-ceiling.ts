import type { FastifyRequest } from 'fastify'
import type pg from 'pg'
import { ApiKeyIdentifier } from '../../services/gateway/src/capture/api-key-auth.ts'
import { CaptureCommitter, type GroupCommitOptions } from '../../services/gateway/src/capture/group-commit.ts'
import { type CaptureBody, captureBodySchema } from '../../services/gateway/src/capture/schema.ts'
import { captureBody } from './capture-body.ts'
import { benchKeyring } from './keyring.ts'
import { type Latency, msSince, summarize } from './stats.ts'

export interface CeilingResult {
  readonly connections: number
  readonly seconds: number
  readonly ok: number
  readonly errors: number
  readonly requestsPerSecond: number
  readonly latency: Latency
}

/**
 * The database ceiling: what a capture request does in Postgres, by the gateway's own functions (the API
 * key lookup, then the capture transaction), from `connections` concurrent loops for `seconds`, with
 * nothing else in between: no HTTP, no JSON, no validation. Each capture has new ids, like the load's.
 */
export async function databaseCeiling(
  pool: pg.Pool,
  apiKey: string,
  connections: number,
  seconds: number,
  idPrefix: string,
  /** The service's group commit settings (CAPTURE_MAX_TRANSACTIONS, CAPTURE_MAX_GROUP). */
  groupCommit: GroupCommitOptions,
): Promise<CeilingResult> {
  // Validated once, as the route would; each capture then gets its own ids.
  const template: CaptureBody = captureBodySchema.parse(captureBody('template'))
  const keys = new ApiKeyIdentifier(pool)
  const committer = new CaptureCommitter(pool, benchKeyring, () => new Date(), groupCommit)
  const latencies: number[] = []
  let next = 0
  let errors = 0
  const start = process.hrtime.bigint()
  const end = Date.now() + seconds * 1_000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const id = `${idPrefix}-${next++}`
        const body: CaptureBody = {
          ...template,
          conversationId: `conv-${id}`,
          user: { ...template.user, id: `user-${id}` },
          messages: template.messages.map((m, i) => ({ ...m, id: `${id}-${i}` })),
        }
        const began = process.hrtime.bigint()
        try {
          const request = { headers: { authorization: `Bearer ${apiKey}` } } as FastifyRequest
          const identity = await keys.identify(request)
          if (!identity) throw new Error('the API key was not found')
          await committer.capture({ keyHash: identity.keyHash, body })
          latencies.push(msSince(began))
        } catch {
          errors++
        }
      }
    }),
  )
  const elapsed = msSince(start) / 1_000
  return {
    connections,
    seconds: elapsed,
    ok: latencies.length,
    errors,
    requestsPerSecond: latencies.length / elapsed,
    latency: summarize(latencies),
  }
}
