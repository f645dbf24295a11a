import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** What a pg.Pool tells about itself (pg.Pool satisfies it). */
export interface PoolSource {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
  readonly options: { readonly max?: number }
}

/** An event-log consumer (EventConsumer from @cas/eventlog satisfies it). */
export interface ConsumerSource {
  readonly groupId: string
  readonly stats: {
    readonly applied: number
    readonly duplicates: number
    readonly dropped: number
    /** Events the consumer's steps dropped, by reason (consumer-pipeline.ts in @cas/eventlog). */
    readonly droppedEvents?: Readonly<Record<string, number>>
    readonly errors: number
    readonly deadLettered?: number
    readonly restarts?: number
    readonly paused: boolean
    readonly lastAppliedOccurredAt: string | null
  }
  lag(): Promise<readonly { topic: string; partition: number; lag: number }[]>
}

/** The events consumers set aside (the dead_letters table), per consumer group. */
export interface DeadLetterSource {
  count(): Promise<Readonly<Record<string, number>>>
}

/** What a set of metric families is declared with: the process's registry, and a safe collector. */
export interface MetricScope {
  readonly registers: Registry[]
  /**
   * Reads a source at scrape time, giving up after COLLECT_TIMEOUT_MS; a failure is reported to the
   * Metrics' onError and the scrape still answers (undefined).
   */
  collect<T>(what: string, read: () => Promise<T>): Promise<T | undefined>
}

/**
 * A service's metric families (docs/operations.md's table), declared where the service is: `create`
 * registers them in a scope and returns what the service feeds or observes them through. A process
 * declares each set it runs once (Metrics.use); the all-in-one, the union of its services' sets.
 */
export interface MetricSet<T> {
  readonly name: string
  create(scope: MetricScope): T
}

export function metricSet<T>(name: string, create: (scope: MetricScope) => T): MetricSet<T> {
  return { name, create }
}

// A collector asking the database or Kafka gives up after this; the scrape still answers.
const COLLECT_TIMEOUT_MS = 2_000

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

let processRegistry: Registry | undefined

/** Node's process metrics (CPU, memory, event-loop lag, GC), collected once per process. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/**
 * The Prometheus metrics of one service process (docs/operations.md's table lists them). Defined here:
 * what every process has, HTTP (its app feeds them), its Postgres pools, and the event-log consumers and
 * their dead letters (the projector, the analysis consumer, a rebuild). Each service declares its own
 * families as a MetricSet beside its code (capture: the gateway; the relay; the analysis job runner; the
 * pipeline status: libs/platform), declared in a process with `use`. The gauges read their sources at
 * scrape time.
 */
export class Metrics {
  readonly registry = new Registry()
  private readonly pools = new Map<string, PoolSource>()
  private readonly consumers = new Map<string, ConsumerSource>()
  private readonly sets = new Map<MetricSet<unknown>, unknown>()
  private readonly deadLetterSources: DeadLetterSource[] = []
  private readonly onError: (what: string, err: unknown) => void

  readonly httpDuration = new Histogram({
    name: 'cas_http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status code, and how long they took to answer.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  })
  readonly rateLimited = new Counter({
    name: 'cas_http_rate_limited_requests_total',
    help: 'Requests answered 429 by a rate limit.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  })
  readonly unavailable = new Counter({
    name: 'cas_http_unavailable_responses_total',
    help: 'Requests answered 503: shed under overload (event-loop delay, pool saturation) or with the database unreachable.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  })
  constructor(opts: { onError?: (what: string, err: unknown) => void } = {}) {
    this.onError = opts.onError ?? (() => {})
    const registers = [this.registry]
    const pools = this.pools
    const poolGauge = (name: string, help: string, value: (p: PoolSource) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['pool'] as const,
        registers,
        collect() {
          this.reset()
          for (const [pool, source] of pools) this.set({ pool }, value(source))
        },
      })
    poolGauge('cas_pg_pool_connections', 'Open Postgres connections in the pool.', (p) => p.totalCount)
    poolGauge('cas_pg_pool_idle_connections', 'Open Postgres connections not in use.', (p) => p.idleCount)
    poolGauge(
      'cas_pg_pool_waiting_requests',
      'Queries waiting for a Postgres connection (the pool is exhausted).',
      (p) => p.waitingCount,
    )
    poolGauge('cas_pg_pool_max_connections', 'Size limit of the pool.', (p) => p.options.max ?? 10)

    const consumers = this.consumers
    const consumerCounter = (name: string, help: string, value: (c: ConsumerSource) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['group'] as const,
        registers,
        collect() {
          this.reset()
          for (const c of consumers.values()) this.inc({ group: c.groupId }, value(c))
        },
      })
    consumerCounter(
      'cas_consumer_applied_events_total',
      'Events applied and committed.',
      (c) => c.stats.applied,
    )
    consumerCounter(
      'cas_consumer_duplicate_events_total',
      'Events skipped as already applied (redeliveries, relay duplicates).',
      (c) => c.stats.duplicates,
    )
    consumerCounter(
      'cas_consumer_dropped_messages_total',
      'Messages that could not be read as events.',
      (c) => c.stats.dropped,
    )
    new Counter({
      name: 'cas_consumer_dropped_events_total',
      help: 'Events a consumer dropped, by reason: undecodable, not_in_journal (Kafka holds it, the journal does not: a restored backup), or dropped by one of its steps (open, skip the deleted, handle).',
      labelNames: ['group', 'reason'] as const,
      registers,
      collect() {
        this.reset()
        for (const c of consumers.values())
          for (const [reason, n] of Object.entries(c.stats.droppedEvents ?? {}))
            this.inc({ group: c.groupId, reason }, n)
      },
    })
    consumerCounter(
      'cas_consumer_batch_errors_total',
      'Batches that failed and were retried.',
      (c) => c.stats.errors,
    )
    consumerCounter(
      'cas_consumer_dead_lettered_events_total',
      'Events this process set aside in the dead-letter store after failing them again and again.',
      (c) => c.stats.deadLettered ?? 0,
    )
    consumerCounter(
      'cas_consumer_restarts_total',
      'Times the Kafka client stopped a consumer for good (an error it does not retry) and the consumer started again.',
      (c) => c.stats.restarts ?? 0,
    )
    const collect = this.collectSafely.bind(this)
    const deadLetterSources = this.deadLetterSources
    new Gauge({
      name: 'cas_dead_letter_events',
      help: 'Events in the dead-letter store, per consumer group: set aside, waiting for an operator to re-drive or discard them (npm run dead-letters).',
      labelNames: ['group'] as const,
      registers,
      async collect() {
        this.reset()
        for (const source of deadLetterSources) {
          const counts = await collect('dead letters', () => source.count())
          for (const [group, n] of Object.entries(counts ?? {})) this.set({ group }, n)
        }
      },
    })
    new Gauge({
      name: 'cas_consumer_lag_events',
      help: "Events in the log past the group's Postgres checkpoint, per partition this process owns (Kafka high-water mark, or the readable end of the journal).",
      labelNames: ['group', 'topic', 'partition'] as const,
      registers,
      async collect() {
        this.reset()
        for (const c of consumers.values()) {
          const lags = await collect(`consumer lag of ${c.groupId}`, () => c.lag())
          for (const l of lags ?? [])
            this.set({ group: c.groupId, topic: l.topic, partition: String(l.partition) }, l.lag)
        }
      },
    })
    new Gauge({
      name: 'cas_consumer_paused',
      help: 'Whether the consumer is held back by back-pressure (1) or reads (0): the analysis queue is full.',
      labelNames: ['group'] as const,
      registers,
      collect() {
        this.reset()
        for (const c of consumers.values()) this.set({ group: c.groupId }, c.stats.paused ? 1 : 0)
      },
    })
    new Gauge({
      name: 'cas_projection_lag_seconds',
      help: 'Now minus occurredAt of the last event this process applied, per consumer group.',
      labelNames: ['group'] as const,
      registers,
      collect() {
        this.reset()
        const now = Date.now()
        for (const c of consumers.values()) {
          const last = c.stats.lastAppliedOccurredAt
          if (last) this.set({ group: c.groupId }, Math.max(0, (now - Date.parse(last)) / 1000))
        }
      },
    })
  }

  /** Reports this pool's usage under `name` (e.g. `primary`, `reader`). */
  observePool(name: string, pool: PoolSource): void {
    this.pools.set(name, pool)
  }

  observeConsumer(consumer: ConsumerSource): void {
    this.consumers.set(consumer.groupId, consumer)
  }

  /** Exposes how many events the consumers have set aside (read from the store at scrape). */
  observeDeadLetters(source: DeadLetterSource): void {
    // One store per process: services that share it (the projector's, the analysis's) declare it once.
    this.deadLetterSources.splice(0, this.deadLetterSources.length, source)
  }

  /**
   * The families of `set` on this process's registry, declared on first use (a service's routes, its
   * ServiceModule's `metricSets`), the same instance after: each family is registered once per process.
   */
  use<T>(set: MetricSet<T>): T {
    if (!this.sets.has(set)) {
      this.sets.set(
        set,
        set.create({
          registers: [this.registry],
          collect: (what, read) => this.collectSafely(what, read),
        }),
      )
    }
    return this.sets.get(set) as T
  }

  /** The Prometheus text exposition: this service's metrics, then the process's. */
  async render(): Promise<{ contentType: string; body: string }> {
    const own = await this.registry.metrics()
    const process = await processMetrics().metrics()
    return { contentType: this.registry.contentType, body: `${own}\n${process}` }
  }

  private async collectSafely<T>(what: string, read: () => Promise<T>): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`timed out after ${COLLECT_TIMEOUT_MS} ms`)),
            COLLECT_TIMEOUT_MS,
          )
        }),
      ])
    } catch (err) {
      this.onError(what, err)
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }
}
