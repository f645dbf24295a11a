import { countDeadLetters, type PipelineStage, readPipelineStatus } from '@cas/eventlog'
import type { ReadinessCheck } from '@cas/http'
import type { Metrics } from '@cas/metrics'
import type pg from 'pg'

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

/** The metrics of the stages this process runs (cas_pipeline_*), read from the pipeline status at scrape. */
export function observePipelineStatus(
  metrics: Metrics,
  pool: pg.Pool,
  stages: readonly PipelineStage[],
): void {
  metrics.observePipeline({ stages, status: () => readPipelineStatus(pool, new Date()) })
  metrics.observeDeadLetters({ count: () => countDeadLetters(pool) })
}
