import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { UnavailableError } from './errors.ts'

/** A connection pool's usage (pg.Pool satisfies it). */
export interface PoolUsage {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
  readonly options: { readonly max?: number }
}

export interface LoadSheddingOptions {
  /** Shed while the mean event-loop delay of the last sample exceeds this (ms); 0 never. */
  readonly maxEventLoopDelayMs: number
  /** Shed while a pool has every connection busy and this many queries already waiting; 0 never. */
  readonly maxPoolWaiting: number
  readonly pools: readonly PoolUsage[]
  /** How often the event-loop delay is sampled (default 500 ms). */
  readonly sampleIntervalMs?: number
}

/** Operations endpoints answer whatever the load: monitoring must see an overloaded service. */
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics'])

const OVERLOAD_RETRY_AFTER_SECONDS = 2
const RESOLUTION_MS = 10

const overloaded = (reason: 'event_loop_delay' | 'pool_saturated') =>
  new UnavailableError(
    reason,
    'The service is overloaded; retry after the time given.',
    OVERLOAD_RETRY_AFTER_SECONDS,
  )

/**
 * Answers 503 + Retry-After at once, before any work, when the process is overloaded, rather than letting
 * requests queue until they time out or fail:
 * - the event loop is delayed: the mean delay over the last sample (Node's monitorEventLoopDelay, as
 *   @fastify/under-pressure measures it) is above the limit. Sampling starts once the app is ready, so the
 *   synchronous work of starting up (compiling route schemas) never counts as load;
 * - a Postgres pool is saturated: every connection is busy and enough queries already wait for one.
 */
export function installLoadShedding(app: FastifyInstance, opts: LoadSheddingOptions): void {
  let delayMs = 0
  let histogram: IntervalHistogram | undefined
  let timer: NodeJS.Timeout | undefined
  if (opts.maxEventLoopDelayMs > 0) {
    app.addHook('onReady', async () => {
      const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
      h.enable()
      histogram = h
      timer = setInterval(() => {
        // No sample yet (the loop was busy the whole time): keep the last measurement.
        if (h.count > 0) delayMs = Math.max(0, h.mean / 1e6 - RESOLUTION_MS)
        h.reset()
      }, opts.sampleIntervalMs ?? 500)
      timer.unref()
    })
    app.addHook('onClose', async () => {
      clearInterval(timer)
      histogram?.disable()
    })
  }
  const saturated = (pool: PoolUsage) =>
    opts.maxPoolWaiting > 0 &&
    pool.idleCount === 0 &&
    pool.totalCount >= (pool.options.max ?? 10) &&
    pool.waitingCount >= opts.maxPoolWaiting
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (EXEMPT.has(request.routeOptions.url ?? '')) return
    if (opts.maxEventLoopDelayMs > 0 && delayMs > opts.maxEventLoopDelayMs)
      throw overloaded('event_loop_delay')
    if (opts.pools.some(saturated)) throw overloaded('pool_saturated')
  })
}
