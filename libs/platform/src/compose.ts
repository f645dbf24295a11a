import type { ServerConfig } from '@cas/config'
import { createHttpApp, createProcessMetrics, type HttpAppOptions, type ReadinessCheck } from '@cas/http'
import type { MetricSet, Metrics } from '@cas/metrics'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { type Infrastructure, observeInfrastructure } from './infrastructure.ts'
import type { RunningService } from './run-service.ts'

/**
 * One service, as a process composes it (after the Fastify demo's app.ts: each part is a plugin the
 * process only registers). Every service (gateway, query, projector, analysis, relay) exports a function
 * making one of these; each main.ts and the all-in-one compose them with `startComposed`.
 */
export interface ServiceModule {
  readonly name: string
  /**
   * Starts its consumers and background tasks (before the process listens), given the process's metrics
   * with every service's sets registered, so that what its background tasks do from the first is counted.
   */
  start?(metrics: Metrics): Promise<void>
  /** Its readiness checks and /readyz details (asked once started). */
  readiness?(): readonly ReadinessCheck[]
  /**
   * Its metric families (docs/operations.md), declared where the service is: the process registers the
   * union of its services' sets, each once, before any service starts.
   */
  readonly metricSets?: readonly MetricSet<unknown>[]
  /** Feeds its metrics what it runs (once started). */
  metrics?(metrics: Metrics): void
  /** Its routes on the process's HTTP app (once started). */
  routes?(app: FastifyInstance): Promise<void>
  /** Stops what it started, finishing what is in flight, and releases what it opened. */
  close(): Promise<void>
}

export interface Composed extends RunningService {
  readonly app: FastifyInstance
}

/**
 * Starts `services` in order on `infra`, then the process's one HTTP app (health and readiness of the
 * infrastructure and of every service, their metrics and routes), and listens. `close` stops accepting,
 * answers the requests in flight, stops the services in reverse order and closes the infrastructure.
 * A failure while starting stops what had started.
 */
export async function startComposed(opts: {
  readonly infra: Infrastructure
  readonly config: Pick<ServerConfig, 'PORT' | 'HOST'>
  readonly logger: Logger | false
  readonly services: readonly ServiceModule[]
  /** The HTTP app's options (proxy trust, load shedding) besides logger, readiness and the process's metrics. */
  readonly http?: Omit<HttpAppOptions, 'logger' | 'readiness' | 'metrics'>
}): Promise<Composed> {
  const started: ServiceModule[] = []
  let app: FastifyInstance | undefined
  const close = async () => {
    await app?.close()
    for (const s of started.splice(0).reverse()) await s.close()
    await opts.infra.close()
  }
  try {
    // The metrics exist before the services start: a background run that ends before the process
    // listens is counted too.
    const metrics = createProcessMetrics(opts.logger)
    for (const set of opts.services.flatMap((s) => s.metricSets ?? [])) metrics.use(set)
    for (const s of opts.services) {
      started.push(s)
      await s.start?.(metrics)
    }
    // A check two services share (the dead-letter store's) is asked once.
    const readiness = new Map<string, ReadinessCheck>()
    for (const check of [...opts.infra.readiness, ...opts.services.flatMap((s) => s.readiness?.() ?? [])])
      if (!readiness.has(check.name)) readiness.set(check.name, check)
    const built = await createHttpApp({
      ...opts.http,
      logger: opts.logger,
      readiness: [...readiness.values()],
      metrics,
    })
    app = built
    observeInfrastructure(built.metrics, opts.infra)
    for (const s of opts.services) s.metrics?.(built.metrics)
    for (const s of opts.services) await s.routes?.(built)
    await built.listen({ port: opts.config.PORT, host: opts.config.HOST })
    return { app: built, close }
  } catch (err) {
    await close()
    throw err
  }
}
