import type { FastifyInstance } from 'fastify'
import { errorBody } from './errors.ts'

/** A dependency /readyz checks: resolves when reachable, rejects (or times out) when not. */
export interface ReadinessCheck {
  readonly name: string
  check(): Promise<void>
  /** What /readyz also says of it, under `details.<name>` (e.g. which analyzer is in use). */
  detail?(): unknown
}

const CHECK_TIMEOUT_MS = 2_000

/** GET /healthz (process alive, no dependency checked) and GET /readyz (every dependency reachable). */
export function registerHealthRoutes(app: FastifyInstance, checks: readonly ReadinessCheck[]): void {
  app.get('/healthz', async () => ({ ok: true }))
  app.get('/readyz', async (_request, reply) => {
    const results = await Promise.all(
      checks.map(async (c) => {
        try {
          await withTimeout(c.check(), CHECK_TIMEOUT_MS)
          return [c.name, 'ok'] as const
        } catch {
          return [c.name, 'unreachable'] as const
        }
      }),
    )
    const status = Object.fromEntries(results)
    const described = checks.filter((c) => c.detail)
    const details =
      described.length > 0 ? { details: Object.fromEntries(described.map((c) => [c.name, c.detail!()])) } : {}
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
