import { metricSet } from '@cas/metrics'
import { Counter, Gauge, Histogram } from 'prom-client'
import type { ReclusterRun } from './topics/reclusterer.ts'

/** The analysis service: its worker's counters and the job queue. */
export interface AnalysisSource {
  readonly stats: {
    readonly analyzedMessages: number
    readonly retries: number
    readonly deadLetters: number
    readonly fencedOut: number
  }
  /**
   * Jobs queued or running, and jobs dead-lettered (kept for inspection), in the database; and since when
   * the oldest waiting job's analysis has been owed.
   */
  jobs(): Promise<{ waiting: number; dead: number; oldestWaitingSince?: Date | null }>
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

/**
 * The analysis service's metrics (docs/operations.md): its job runner's counters, the job queue (all
 * processes, read at scrape), the analyzer in use, and its topic re-clustering runs' durations. Its
 * consumer's are the consumers' (@cas/metrics).
 */
export const ANALYSIS_METRICS = metricSet('analysis', ({ registers, collect }) => {
  const analyses: AnalysisSource[] = []
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
  analysisCounter(
    'cas_analysis_fenced_out_total',
    "Analysis jobs this process let go because another process claimed them after this one's lease ran out " +
      '(its renewals lapsed): their results or failure discarded, the job left to the other.',
    (a) => a.stats.fencedOut,
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
  jobsGauge('cas_analysis_backlog_jobs', 'Analysis jobs queued or running (all processes).', (j) => j.waiting)
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
  const reclusterDuration = new Histogram({
    name: 'cas_analysis_recluster_duration_seconds',
    help:
      'Topic re-clustering runs of this process and how long each took, by outcome: reclustered (committed) or ' +
      'failed (retried per its policy; one stopped at TOPIC_RECLUSTER_TIMEOUT_SECONDS took that long).',
    labelNames: ['outcome'] as const,
    // From a small window's fraction of a second to the default timeout (120 s) and the longest allowed.
    buckets: [0.5, 1, 2.5, 5, 10, 20, 40, 60, 90, 120, 180, 300, 600, 1800, 3600],
    registers,
  })
  return {
    observe(analysis: AnalysisSource): void {
      analyses.push(analysis)
    },
    /** A re-clustering run that ended (topics/reclusterer.ts). */
    reclusterRun(run: ReclusterRun): void {
      reclusterDuration.observe({ outcome: run.outcome }, run.durationMs / 1000)
    },
  }
})
