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
    readonly paused: boolean
    readonly lastAppliedOccurredAt: string | null
  }
  lag(): Promise<readonly { topic: string; partition: number; lag: number }[]>
}

/** The events consumers set aside (the dead_letters table), per consumer group. */
export interface DeadLetterSource {
  count(): Promise<Readonly<Record<string, number>>>
}

/** The relay: its counters, and its lag (journal events waiting to be published). */
export interface RelaySource {
  readonly stats: {
    readonly published: number
    readonly byReference?: number
    readonly errors: number
    readonly isLeader: boolean
  }
  lag(): Promise<number>
}

/** The analysis service: its worker's counters and the job queue. */
export interface AnalysisSource {
  readonly stats: {
    readonly analyzedMessages: number
    readonly retries: number
    readonly deadLetters: number
  }
  /**
   * Jobs queued or running, and jobs dead-lettered (kept for inspection), in the database; and since when
   * the oldest waiting job's analysis has been owed.
   */
  jobs(): Promise<{ backlog: number; dead: number; oldestWaitingSince?: Date | null }>
  /** The analyzer in use: its name and version, and whether it is the model, its fallback, or loading. */
  analyzer?(): { readonly name: string; readonly version: string; readonly state: string }
  /** The LLM's refinement of borderline signals (SIGNALS_LLM_REFINE), when on. */
  signalRefinement?(): SignalRefinementStats | undefined
}

/** Borderline signals the LLM confirmed or rejected, and asks that left the local signals, by reason. */
export interface SignalRefinementStats {
  readonly confirmed: number
  readonly rejected: number
  readonly failed: { readonly timeout: number; readonly error: number; readonly invalid: number }
}

/** How current a stage of the pipeline is (PipelineStatus from @cas/eventlog satisfies it). */
export interface PipelineSource {
  /** The stages this process runs, whose status it exposes. */
  readonly stages: readonly string[]
  status(): Promise<
    Record<
      string,
      { readonly state: string; readonly behindSeconds: number | null; readonly events: number | null }
    >
  >
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
 * The Prometheus metrics of one service process, all of them defined here (docs/operations.md's table lists
 * them). HTTP apps feed the HTTP ones; services register what they run (pools, consumers, the relay,
 * the analysis worker), and the gauges read those at scrape time.
 */
export class Metrics {
  readonly registry = new Registry()
  private readonly pools = new Map<string, PoolSource>()
  private readonly consumers = new Map<string, ConsumerSource>()
  private readonly relays: RelaySource[] = []
  private readonly analyses: AnalysisSource[] = []
  private readonly pipelines: PipelineSource[] = []
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
  readonly messagesStored = new Counter({
    name: 'cas_capture_messages_stored_total',
    help: 'Messages stored by capture (new message ids).',
    registers: [this.registry],
  })
  readonly duplicatesDropped = new Counter({
    name: 'cas_capture_duplicate_messages_total',
    help: 'Messages sent to capture that were already stored (or repeated within one request), so not stored again.',
    registers: [this.registry],
  })

  readonly captureGroupSize = new Histogram({
    name: 'cas_capture_group_size',
    help: 'Captures committed per transaction (group commit of concurrent captures).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
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
      help: 'Events a consumer dropped, by reason: undecodable, or dropped by one of its steps (open, skip the deleted, handle).',
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

    const relays = this.relays
    new Gauge({
      name: 'cas_relay_lag_events',
      help: 'Journal events committed but not yet acknowledged by Kafka.',
      registers,
      async collect() {
        this.reset()
        for (const r of relays) {
          const lag = await collect('relay lag', () => r.lag())
          if (lag !== undefined) this.set(lag)
        }
      },
    })
    new Counter({
      name: 'cas_relay_published_events_total',
      help: 'Events published to Kafka and acknowledged.',
      registers,
      collect() {
        this.reset()
        for (const r of relays) this.inc(r.stats.published)
      },
    })
    new Counter({
      name: 'cas_relay_events_by_reference_total',
      help: 'Events Kafka kept refusing as records (too large), published by reference instead: the envelope, its payload read from the journal.',
      registers,
      collect() {
        this.reset()
        for (const r of relays) this.inc(r.stats.byReference ?? 0)
      },
    })
    new Counter({
      name: 'cas_relay_errors_total',
      help: 'Relay batches that failed and were retried.',
      registers,
      collect() {
        this.reset()
        for (const r of relays) this.inc(r.stats.errors)
      },
    })
    new Gauge({
      name: 'cas_relay_leader',
      help: '1 when this relay holds the publishing lock, 0 on standby.',
      registers,
      collect() {
        this.reset()
        for (const r of relays) this.set(r.stats.isLeader ? 1 : 0)
      },
    })

    const analyses = this.analyses
    const analysisCounter = (name: string, help: string, value: (a: AnalysisSource) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset()
          for (const a of analyses) this.inc(value(a))
        },
      })
    analysisCounter(
      'cas_analysis_messages_analyzed_total',
      'Messages analyzed and committed.',
      (a) => a.stats.analyzedMessages,
    )
    analysisCounter(
      'cas_analysis_retries_total',
      'Analysis attempts that failed and were scheduled again.',
      (a) => a.stats.retries,
    )
    analysisCounter(
      'cas_analysis_dead_lettered_total',
      'Analysis jobs dead-lettered by this process after their last attempt.',
      (a) => a.stats.deadLetters,
    )
    new Counter({
      name: 'cas_analysis_signal_refinements_total',
      help:
        'Borderline signals the LLM confirmed or rejected (SIGNALS_LLM_REFINE=borderline), and asks that left ' +
        'the local signals: timeout, error (status or connection) or invalid (not the requested JSON).',
      labelNames: ['outcome'] as const,
      registers,
      collect() {
        this.reset()
        for (const a of analyses) {
          const r = a.signalRefinement?.()
          if (!r) continue
          this.inc({ outcome: 'confirmed' }, r.confirmed)
          this.inc({ outcome: 'rejected' }, r.rejected)
          for (const [outcome, n] of Object.entries(r.failed)) this.inc({ outcome }, n)
        }
      },
    })
    type Jobs = Awaited<ReturnType<AnalysisSource['jobs']>>
    const jobsGauge = (name: string, help: string, value: (j: Jobs) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.reset()
          const source = analyses[0]
          if (!source) return
          const jobs = await collect('analysis jobs', () => source.jobs())
          if (jobs) this.set(value(jobs))
        },
      })
    new Gauge({
      name: 'cas_analysis_analyzer_info',
      help:
        'The analyzer in use, 1 with its name, version and state: ready (the language model), fallback (the ' +
        'lexical analyzer, the model being unavailable) or loading.',
      labelNames: ['analyzer', 'version', 'state'] as const,
      registers,
      collect() {
        this.reset()
        for (const a of analyses) {
          const status = a.analyzer?.()
          if (status) this.set({ analyzer: status.name, version: status.version, state: status.state }, 1)
        }
      },
    })
    jobsGauge(
      'cas_analysis_backlog_jobs',
      'Analysis jobs queued or running (all processes).',
      (j) => j.backlog,
    )
    jobsGauge(
      'cas_analysis_dead_letters',
      'Analysis jobs dead-lettered and kept (all processes).',
      (j) => j.dead,
    )
    jobsGauge(
      'cas_analysis_oldest_job_age_seconds',
      'How long the oldest analysis job waiting (all processes) has been owed: since its capture, or since a re-analysis was asked for; 0 when none waits.',
      (j) => (j.oldestWaitingSince ? Math.max(0, (Date.now() - j.oldestWaitingSince.getTime()) / 1000) : 0),
    )

    const pipelines = this.pipelines
    const pipelineGauge = (
      name: string,
      help: string,
      labelNames: readonly ('stage' | 'state')[],
      set: (
        gauge: Gauge<'stage' | 'state'>,
        stage: string,
        status: Awaited<ReturnType<PipelineSource['status']>>[string],
      ) => void,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset()
          for (const source of pipelines) {
            const status = await collect('pipeline status', () => source.status())
            for (const stage of source.stages) {
              const s = status?.[stage]
              if (s) set(this, stage, s)
            }
          }
        },
      })
    pipelineGauge(
      'cas_pipeline_behind_seconds',
      'How long ago the oldest work a stage has not done yet was committed: an event not applied to the read models (projection), a message not analysed (analysis); 0 when none. Absent while unknown. The dashboard says the same.',
      ['stage'],
      (g, stage, s) => {
        if (s.behindSeconds !== null) g.set({ stage }, s.behindSeconds)
      },
    )
    pipelineGauge(
      'cas_pipeline_pending_events',
      'Events committed that a stage has not applied yet (in Kafka mode, including those not yet relayed), at its last report.',
      ['stage'],
      (g, stage, s) => {
        if (s.events !== null) g.set({ stage }, s.events)
      },
    )
    pipelineGauge(
      'cas_pipeline_state',
      "1 for a stage's state: up-to-date (behind by less than 5 s), behind, or unknown (no report for 30 s: its processes are down).",
      ['stage', 'state'],
      (g, stage, s) => g.set({ stage, state: s.state }, 1),
    )
  }

  /** Reports this pool's usage under `name` (e.g. `primary`, `reader`). */
  observePool(name: string, pool: PoolSource): void {
    this.pools.set(name, pool)
  }

  observeConsumer(consumer: ConsumerSource): void {
    this.consumers.set(consumer.groupId, consumer)
  }

  observeRelay(relay: RelaySource): void {
    this.relays.push(relay)
  }

  observeAnalysis(analysis: AnalysisSource): void {
    this.analyses.push(analysis)
  }

  /** Exposes how many events the consumers have set aside (read from the store at scrape). */
  observeDeadLetters(source: DeadLetterSource): void {
    // One store per process: services that share it (the projector's, the analysis's) declare it once.
    this.deadLetterSources.splice(0, this.deadLetterSources.length, source)
  }

  /** Exposes how current the stages this process runs are (read from the pipeline status at scrape). */
  observePipeline(pipeline: PipelineSource): void {
    this.pipelines.push(pipeline)
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
