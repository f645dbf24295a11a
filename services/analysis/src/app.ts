import { type AnalysisConfig, analysis as analysisConfig, defaultsOf } from '@cas/config'
import {
  createEventConsumer,
  createLagProbe,
  type EventConsumer,
  type EventLogBackend,
  eventLogFields,
  StageReporter,
  type StreamType,
} from '@cas/eventlog'
import { analyzerId } from '@cas/events'
import type { Keyring } from '@cas/keyring'
import {
  deadLetterReadiness,
  type Infrastructure,
  journalConflictReadiness,
  observePipelineStatus,
  PIPELINE_METRICS,
  pipelineStatusReadiness,
  type ServiceModule,
} from '@cas/platform'
import type pg from 'pg'
import type { Logger } from 'pino'
import type { Analyzer } from './analyzer.ts'
import { type CommandPolicy, CommandRunner } from './command-runner.ts'
import { analysisPipeline } from './consumer.ts'
import { AnalysisJobRunner, jobLogFields } from './job-runner.ts'
import { hasPendingJobs, type JobCounts, jobCounts } from './jobs.ts'
import { ANALYSIS_METRICS } from './metrics.ts'
import { type AnalyzerConfig, analyzerReadiness, analyzerStatus, createAnalyzer } from './providers/index.ts'
import { type SignalRefineOptions, SignalRefiner } from './signals/llm-refine.ts'
import { decideSignals } from './signals/store.ts'
import {
  Reclusterer,
  type ReclusterPolicy,
  type ReclusterRun,
  reclusterPolicy,
} from './topics/reclusterer.ts'

export type { Analyzer } from './analyzer.ts'
export { AnalyzerError } from './analyzer.ts'
export { ANALYSIS_METRICS, type AnalysisSource } from './metrics.ts'

export interface AnalysisServiceDeps {
  readonly pool: pg.Pool
  readonly eventLog: EventLogBackend
  /** Opens the sealed message content the analyzer needs. */
  readonly keyring: Keyring
  readonly analyzer: Analyzer
  readonly logger: Logger | false
  readonly concurrency?: number
  readonly maxAttempts?: number
  readonly maxPending?: number
  readonly retryBaseMs?: number
  readonly leaseMs?: number
  /** How often the job runner looks for due jobs when nothing wakes it (default 50 ms). */
  readonly jobPollIntervalMs?: number
  /** The longest analysed results wait to share a commit while other jobs are analysed (default 50 ms). */
  readonly commitHoldMs?: number
  /** Topics a chatbot's end users' messages may make at most (ANALYSIS_MAX_TOPICS). */
  readonly maxTopics?: number
  readonly groupId?: string
  readonly now?: () => Date
  /** How often conversations past their quiet period are looked at again (abandonment; default 30 s). */
  readonly signalSweepMs?: number
  /** Re-clustering each chatbot's topics in the background (topics/reclusterer.ts); none when unset. */
  readonly recluster?: ReclusterPolicy
  /** Told of every re-clustering run as it ends (the process's metrics). */
  readonly onReclusterRun?: (run: ReclusterRun) => void
  /** SIGNALS_LLM_REFINE=borderline: an LLM judges borderline signals (signals/llm-refine.ts); none when unset. */
  readonly signalRefine?: SignalRefineOptions
  /** How often the analysis's status is reported (default 2 s). */
  readonly statusIntervalMs?: number
  /** Applying owners' and admins' command events (command-runner.ts); its default policy when unset. */
  readonly commands?: CommandPolicy
}

export interface AnalysisService {
  readonly consumer: EventConsumer
  readonly jobRunner: AnalysisJobRunner
  /** Re-clusters chatbots' topics in the background; undefined when the service runs without it. */
  readonly reclusterer: Reclusterer | undefined
  /** Asks the LLM about borderline signals; undefined when SIGNALS_LLM_REFINE is off. */
  readonly signalRefiner: SignalRefiner | undefined
  /** Applies the command events of owners and admins (topic commands) queued by the consumer. */
  readonly commands: CommandRunner
  /**
   * Keeps the `analysis` row of the pipeline status: how far analysis is behind the messages captured for
   * it (events not yet queued, jobs waiting). Started and stopped with the service.
   */
  readonly status: StageReporter
  /** The job queue across every analysis process (for metrics). */
  jobs(): Promise<JobCounts>
  start(): Promise<void>
  stop(): Promise<void>
}

export const ANALYSIS_GROUP = 'analysis'
const ANALYSIS_STREAM_TYPES: readonly StreamType[] = ['conversation', 'chatbot']

/** The service's tuning from the configuration, for the processes that run it. */
export function analysisSettings(config: AnalysisConfig) {
  return {
    concurrency: config.ANALYSIS_CONCURRENCY,
    maxAttempts: config.ANALYSIS_MAX_ATTEMPTS,
    maxPending: config.ANALYSIS_MAX_PENDING,
    maxTopics: config.ANALYSIS_MAX_TOPICS,
    recluster: reclusterPolicy(config),
    signalRefine: signalRefineOf(config),
  }
}

/** The LLM refinement of borderline signals, when SIGNALS_LLM_REFINE=borderline (the config checks LLM_*). */
export function signalRefineOf(config: AnalysisConfig): SignalRefineOptions | undefined {
  if (config.SIGNALS_LLM_REFINE !== 'borderline') return undefined
  if (!config.LLM_BASE_URL || !config.LLM_API_KEY || !config.LLM_MODEL) return undefined
  return {
    baseUrl: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL,
    timeoutMs: config.LLM_TIMEOUT_MS,
    concurrency: config.LLM_CONCURRENCY,
  }
}

/**
 * The analysis service: its consumer queues a job for every conversation.messages-captured event that
 * asked for analysis, in the transaction that records its checkpoint; its job runner analyzes the jobs and
 * appends analysis.messages-analyzed and analysis.conversation-analyzed (or analysis.failed). Capture
 * never waits for any of it.
 */
export function createAnalysisService(deps: AnalysisServiceDeps): AnalysisService {
  const log = deps.logger || undefined
  const now = deps.now ?? (() => new Date())
  const defaults = defaultsOf(analysisConfig)
  const maxPending = deps.maxPending ?? defaults.ANALYSIS_MAX_PENDING
  const groupId = deps.groupId ?? ANALYSIS_GROUP
  const commands = new CommandRunner({
    pool: deps.pool,
    analyzer: deps.analyzer,
    keyring: deps.keyring,
    window: deps.recluster?.window,
    policy: deps.commands,
    now,
    log: (msg, fields) => log?.warn(fields ?? {}, msg),
  })
  const consumer = createEventConsumer(deps.eventLog, {
    pool: deps.pool,
    groupId,
    streamTypes: ANALYSIS_STREAM_TYPES,
    // It queues jobs; the job runner appends the results in transactions of its own.
    neverAppends: true,
    // Back-pressure: with the queue full, the backlog stays in the event log (read again once the
    // analyzer catches up), not in the jobs table or in memory. Asked before each batch, so a queue may
    // pass the mark by up to a batch per analysis process.
    admit: async () => !(await hasPendingJobs(deps.pool, maxPending)),
    log: (msg, fields) => log?.warn(fields ?? {}, msg),
    onApplied: (records) => {
      for (const record of records) log?.info(eventLogFields(record), 'analysis consumer applied event')
      if (records.some((r) => r.streamType === 'chatbot')) commands.wake()
      // Its jobs are committed: claimed now, not at the job runner's next look (up to 50 ms later).
      if (records.some((r) => r.type === 'conversation.messages-captured')) jobRunner.wake()
    },
    // Open, then handle (consumer.ts): drops counted by reason (cas_consumer_dropped_events_total).
    ...analysisPipeline({
      consumer: groupId,
      keyring: deps.keyring,
      now,
      log: (msg, fields) => log?.warn(fields ?? {}, msg),
    }).consumerOptions(),
  })
  const jobRunner = new AnalysisJobRunner({
    pool: deps.pool,
    analyzer: deps.analyzer,
    concurrency: deps.concurrency ?? defaults.ANALYSIS_CONCURRENCY,
    maxAttempts: deps.maxAttempts ?? defaults.ANALYSIS_MAX_ATTEMPTS,
    retryBaseMs: deps.retryBaseMs,
    leaseMs: deps.leaseMs,
    pollIntervalMs: deps.jobPollIntervalMs,
    commitHoldMs: deps.commitHoldMs,
    maxTopics: deps.maxTopics,
    signalSweepMs: deps.signalSweepMs,
    signalRefine: deps.signalRefine,
    now,
    log: (msg, fields) => log?.warn(fields ?? {}, msg),
    onAnalyzed: (job) =>
      log?.info({ ...jobLogFields(job), messages: job.messages.length }, 'analyzed messages'),
  })
  const reclusterer = deps.recluster
    ? new Reclusterer({
        pool: deps.pool,
        analyzer: deps.analyzer,
        policy: deps.recluster,
        now,
        log: (msg, fields, level = 'warn') => log?.[level](fields ?? {}, msg),
        onRun: deps.onReclusterRun,
      })
    : undefined
  const signalRefiner = deps.signalRefine
    ? new SignalRefiner({
        ...deps.signalRefine,
        pool: deps.pool,
        analyzer: deps.analyzer.info,
        decide: decideSignals,
        now,
        log: (msg, fields) => log?.warn(fields ?? {}, msg),
      })
    : undefined
  const probe = createLagProbe({
    pool: deps.pool,
    eventLog: deps.eventLog,
    groupId,
    streamTypes: ANALYSIS_STREAM_TYPES,
    now,
  })
  const status = new StageReporter({
    pool: deps.pool,
    stage: 'analysis',
    // Behind by the older of what the consumer has not queued yet and the oldest job waiting.
    measure: async () => {
      const [events, jobs] = await Promise.all([probe.probe(), jobCounts(deps.pool)])
      const oldest = [events.oldestPendingAt, jobs.oldestWaitingSince].filter((d) => d !== null)
      const analyzer = analyzerStatus(deps.analyzer)
      return {
        events: events.events,
        jobs: jobs.waiting,
        oldestPendingAt: oldest.length > 0 ? new Date(Math.min(...oldest.map((d) => d.getTime()))) : null,
        analyzer: analyzer.state === 'loading' ? null : analyzerId(analyzer),
      }
    },
    release: () => probe.close(),
    intervalMs: deps.statusIntervalMs,
    now,
    log: (msg, fields) => log?.warn(fields ?? {}, msg),
  })
  let starting: Promise<void> = Promise.resolve()
  let stopped = false
  return {
    consumer,
    jobRunner,
    reclusterer,
    signalRefiner,
    commands,
    status,
    jobs: () => jobCounts(deps.pool),
    async start() {
      status.start()
      await consumer.start()
      // Jobs queue meanwhile: the job runner starts once the analyzer is usable (the model loaded, or its
      // fallback chosen), without holding up the process's start.
      const ready = deps.analyzer.ready ?? Promise.resolve()
      starting = ready.then(() => {
        if (stopped) return
        jobRunner.start()
        reclusterer?.start()
        signalRefiner?.start()
        commands.start()
      })
    },
    async stop() {
      stopped = true
      await status.stop()
      await consumer.stop()
      await starting
      await reclusterer?.stop()
      await signalRefiner?.stop()
      await commands.stop()
      await jobRunner.stop()
    },
  }
}

/**
 * The analysis service as a process composes it (startComposed): its analyzer (loaded in the
 * background), consumer, job runner and re-clusterer, started before the process listens; the analysis
 * stage's readiness and the analyzer's; its metrics; (`statusRoute`, its own process) GET /analysis.
 * Closing stops consuming (committing the batch in flight), lets the jobs in flight commit, then closes
 * the analyzer.
 */
export function analysisService(
  infra: Pick<Infrastructure, 'pool' | 'keyring' | 'eventLog'>,
  config: AnalyzerConfig,
  logger: Logger | false,
  opts: { readonly statusRoute?: boolean } = {},
): ServiceModule & { readonly service: AnalysisService | undefined } {
  let analyzer: Analyzer | undefined
  let service: AnalysisService | undefined
  const running = () => {
    if (!analyzer || !service) throw new Error('the analysis service has not started')
    return { analyzer, service }
  }
  const log = logger || undefined
  const warn = (msg: string, fields?: Record<string, unknown>) => log?.warn(fields ?? {}, msg)
  return {
    name: 'analysis',
    get service() {
      return service
    },
    async start(metrics) {
      const a = await createAnalyzer(config, warn)
      analyzer = a
      const analysisMetrics = metrics.use(ANALYSIS_METRICS)
      a.ready?.then(() => log?.info({ analyzer: analyzerStatus(a) }, 'analyzer ready'))
      service = createAnalysisService({
        pool: infra.pool,
        keyring: infra.keyring,
        eventLog: infra.eventLog,
        analyzer: a,
        logger,
        ...analysisSettings(config),
        // Wired before the re-clusterer starts (compose.ts): its first run is counted too.
        onReclusterRun: (run) => analysisMetrics.reclusterRun(run),
      })
      await service.start()
    },
    readiness: () => [
      analyzerReadiness(running().analyzer),
      ...pipelineStatusReadiness(infra.pool, ['analysis']),
      deadLetterReadiness(infra.pool),
      ...(infra.eventLog.kind === 'kafka' ? [journalConflictReadiness(infra.pool)] : []),
    ],
    metricSets: [ANALYSIS_METRICS, PIPELINE_METRICS],
    metrics(metrics) {
      const { analyzer, service } = running()
      observePipelineStatus(metrics, infra.pool, ['analysis'])
      metrics.observeConsumer(service.consumer)
      const analysisMetrics = metrics.use(ANALYSIS_METRICS)
      analysisMetrics.observe({
        stats: service.jobRunner.stats,
        jobs: () => service.jobs(),
        analyzer: () => analyzerStatus(analyzer),
        signalRefinement: () => service.signalRefiner?.stats,
      })
    },
    async routes(app) {
      if (!opts.statusRoute) return
      const { analyzer, service } = running()
      app.get('/analysis', async () => ({
        ok: true,
        analyzer: analyzerStatus(analyzer),
        worker: service.jobRunner.stats,
        reclustering: service.reclusterer?.stats ?? null,
        signalRefinement: service.signalRefiner?.stats ?? null,
      }))
    },
    async close() {
      await service?.stop()
      await analyzer?.close?.()
    },
  }
}

export { analyzerReadiness, analyzerStatus, createAnalyzer } from './providers/index.ts'
