import type { FastifyInstance } from 'fastify'
import { errorBody } from './errors.ts'

/**
 * A dependency /readyz checks (`check` resolves when reachable, rejects or times out when not), or only
 * describes: without `check` it is shown under `details` and never makes the process unready.
 */
export interface ReadinessCheck {
  readonly name: string
  check?(): Promise<void>
  /**
   * What /readyz also says of it, under `details.<name>` (which analyzer is in use, how far behind the
   * projection is); null when it could not be had in time.
   */
  detail?(): unknown
}

const CHECK_TIMEOUT_MS = 2_000

/** GET /healthz (process alive, no dependency checked) and GET /readyz (every dependency reachable). */
export function registerHealthRoutes(app: FastifyInstance, checks: readonly ReadinessCheck[]): void {
  // Documented in the OpenAPI document by hand (libs/http/src/openapi.ts): a response schema here would
  // also serialize, and /readyz's answers vary with the checks.
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }))
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checked = checks.filter((c) => c.check)
    const described = checks.filter((c) => c.detail)
    const [results, detailed] = await Promise.all([
      Promise.all(
        checked.map(async (c) => {
          try {
            await withTimeout(
              Promise.resolve().then(() => c.check!()),
              CHECK_TIMEOUT_MS,
            )
            return [c.name, 'ok'] as const
          } catch {
            return [c.name, 'unreachable'] as const
          }
        }),
      ),
      Promise.all(
        described.map(async (c) => {
          const detail = await withTimeout(
            Promise.resolve().then(() => c.detail!()),
            CHECK_TIMEOUT_MS,
          ).catch(() => null)
          return [c.name, detail] as const
        }),
      ),
    ])
    const status = Object.fromEntries(results)
    const details = detailed.length > 0 ? { details: Object.fromEntries(detailed) } : {}
    if (results.every(([, s]) => s === 'ok')) return { ok: true, checks: status, ...details }
    reply.code(503).header('retry-after', '5')
    return { ...errorBody('unavailable', 'A dependency is unreachable.'), checks: status, ...details }
  })
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
    p.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}
