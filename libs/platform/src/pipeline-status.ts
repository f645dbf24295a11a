import {
  countDeadLetters,
  countJournalConflicts,
  type PipelineStage,
  readPipelineStatus,
} from '@cas/eventlog'
import type { ReadinessCheck } from '@cas/http'
import { type Metrics, metricSet } from '@cas/metrics'
import type pg from 'pg'
import { Gauge } from 'prom-client'

/**
 * /readyz `details.<stage>` for each stage: the pipeline status as the dashboard reads it (state,
 * behindSeconds, events, jobs, checkedAt). Described, never checked: lag is not unreadiness.
 */
export function pipelineStatusReadiness(
  pool: pg.Pool,
  stages: readonly PipelineStage[],
  now: () => Date = () => new Date(),
): ReadinessCheck[] {
  return stages.map((stage) => ({
    name: stage,
    detail: async () => (await readPipelineStatus(pool, now()))[stage],
  }))
}

/**
 * /readyz `details.deadLetters`: the events consumers set aside, in all and per consumer group
 * (`npm run dead-letters` lists them). Described, never checked: the rest of the pipeline flows.
 */
export function deadLetterReadiness(pool: pg.Pool): ReadinessCheck {
  return {
    name: 'deadLetters',
    detail: async () => {
      const byGroup = await countDeadLetters(pool)
      return { total: Object.values(byGroup).reduce((a, b) => a + b, 0), byGroup }
    },
  }
}

/**
 * /readyz `details.journalConflicts`: the events Kafka consumer groups left out because the journal does
 * not hold them (journal_conflicts) and the operator has not acknowledged yet (`npm run journal-conflicts`),
 * in all and per group. Any at all says the topics hold events of a journal this database lost: an older
 * backup restored under the same KAFKA_TOPIC_PREFIX. Described, never checked: the journal's own events
 * still flow, each applied once.
 */
export function journalConflictReadiness(pool: pg.Pool): ReadinessCheck {
  return {
    name: 'journalConflicts',
    detail: async () => {
      const byGroup = await countJournalConflicts(pool)
      const total = Object.values(byGroup).reduce((a, b) => a + b, 0)
      return total === 0
        ? { total, byGroup }
        : {
            total,
            byGroup,
            problem:
              'Kafka holds events this database does not: a backup restored under the same topics (docs/operations.md#backups)',
          }
    },
  }
}

/** The metrics of the stages this process runs (cas_pipeline_*), read from the pipeline status at scrape. */
export function observePipelineStatus(
  metrics: Metrics,
  pool: pg.Pool,
  stages: readonly PipelineStage[],
): void {
  metrics.use(PIPELINE_METRICS).observe({ stages, status: () => readPipelineStatus(pool, new Date()) })
  metrics.observeDeadLetters({ count: () => countDeadLetters(pool) })
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

/**
 * The pipeline status's metrics (docs/operations.md, cas_pipeline_*): how current each stage this process
 * runs is, as the dashboard says it. Declared by the processes running the projection or the analysis.
 */
export const PIPELINE_METRICS = metricSet('pipeline', ({ registers, collect }) => {
  const pipelines: PipelineSource[] = []
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
  return {
    observe(pipeline: PipelineSource): void {
      pipelines.push(pipeline)
    },
  }
})
