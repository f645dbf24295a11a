import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { type BackgroundLoop, backgroundLoop } from '@cas/db'
import type { ClientBase, Pool } from 'pg'

/**
 * How current the service's figures are, per stage of the pipeline (migrations/0016_pipeline-status.sql):
 * - `projection`: the read models (conversations, messages, analytics), against every event committed;
 * - `analysis`: sentiment and topics, against every message captured for analysis (and re-analyses asked).
 * Each stage's processes keep its row (StageReporter); the dashboard (GET /api/v1/status), /readyz and
 * the metrics read it (readPipelineStatus), so they all say the same.
 */
export const PIPELINE_STAGES = ['projection', 'analysis'] as const
export type PipelineStage = (typeof PIPELINE_STAGES)[number]

/**
 * Behind by less than this is up to date: a stage that keeps up still has the last second's events in
 * hand, which nobody needs to hear about; figures 5 s old or more are worth saying.
 */
export const BEHIND_AFTER_SECONDS = 5
/** A row not refreshed for this long has nobody keeping it (the stage's processes are down): unknown. */
export const STALE_AFTER_SECONDS = 30

/** What a stage's reporter measured. */
export interface StageReport {
  readonly events: number
  /** Analysis: jobs waiting. */
  readonly jobs?: number
  readonly oldestPendingAt: Date | null
  /** Analysis: the analyzer it runs now, as name@version; null while its model loads. */
  readonly analyzer?: string | null
}

export interface StageStatus {
  /** `unknown` when nobody has reported for STALE_AFTER_SECONDS (or ever). */
  readonly state: 'up-to-date' | 'behind' | 'unknown'
  /** How long ago the oldest work not done yet was committed (0 when none); null when unknown. */
  readonly behindSeconds: number | null
  /** Events committed and not yet applied by the stage, at the last report. */
  readonly events: number | null
  /** Analysis: jobs waiting, at the last report. */
  readonly jobs?: number | null
  /** Analysis: the analyzer it runs, as name@version, at the last report; null when unknown or loading. */
  readonly analyzer?: string | null
  /** When the stage last reported. */
  readonly checkedAt: string | null
}

export type PipelineStatus = Record<PipelineStage, StageStatus>

interface StatusRow {
  stage: PipelineStage
  events: string
  jobs: number | null
  oldest_pending_at: Date | null
  checked_at: Date
  analyzer: string | null
}

/** The status of every stage as of `now`, from the status read model. */
export async function readPipelineStatus(db: Pool | ClientBase, now: Date): Promise<PipelineStatus> {
  const { rows } = await db.query<StatusRow>(
    'SELECT stage, events::text, jobs, oldest_pending_at, checked_at, analyzer FROM pipeline_status',
  )
  const byStage = new Map(rows.map((r) => [r.stage, r]))
  return {
    projection: stageStatus('projection', byStage.get('projection'), now),
    analysis: stageStatus('analysis', byStage.get('analysis'), now),
  }
}

function stageStatus(stage: PipelineStage, row: StatusRow | undefined, now: Date): StageStatus {
  const withJobs = (jobs: number | null, analyzer: string | null) =>
    stage === 'analysis' ? { jobs, analyzer } : {}
  if (!row) {
    return { state: 'unknown', behindSeconds: null, events: null, ...withJobs(null, null), checkedAt: null }
  }
  const oldest = row.oldest_pending_at
  const behindSeconds = oldest ? Math.max(0, Math.floor((now.getTime() - oldest.getTime()) / 1000)) : 0
  const stale = now.getTime() - row.checked_at.getTime() > STALE_AFTER_SECONDS * 1000
  const state = stale ? 'unknown' : behindSeconds >= BEHIND_AFTER_SECONDS ? 'behind' : 'up-to-date'
  return {
    state,
    // Stale but with work pending, it is at least that far behind (nobody is doing it); with none, unknown.
    behindSeconds: stale && !oldest ? null : behindSeconds,
    events: Number(row.events),
    // A stale row's analyzer may be gone with its process: unknown, like its state.
    ...withJobs(row.jobs, stale ? null : row.analyzer),
    checkedAt: row.checked_at.toISOString(),
  }
}

export interface StageReporterOptions {
  readonly pool: Pool
  readonly stage: PipelineStage
  /** Measures the stage now (the group's progress; for analysis, the job queue too). */
  readonly measure: () => Promise<StageReport>
  /** How often the row is refreshed (default 2 s). */
  readonly intervalMs?: number
  /** How long a silent reporter keeps the row before another process of the stage takes over (3 intervals). */
  readonly takeOverAfterMs?: number
  /** Names this process in the row (default host/pid/random). */
  readonly reporterId?: string
  readonly now?: () => Date
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
  /** Called once stopped: releases what `measure` holds (a Kafka admin connection). */
  readonly release?: () => Promise<void>
}

/**
 * Keeps a stage's status row up to date, at a bounded rate whatever the number of processes: each one
 * looks at the row every interval, and only the one that wrote it last (or any, once that one has been
 * silent for `takeOverAfterMs`) measures and writes it again. One write per stage per interval, and the
 * measuring reporter keeps what it learnt from one look to the next (OldestPendingEstimator).
 */
export class StageReporter {
  readonly reporterId: string
  private readonly intervalMs: number
  private readonly takeOverAfterMs: number
  private readonly now: () => Date
  private readonly loop: BackgroundLoop

  constructor(private readonly opts: StageReporterOptions) {
    this.intervalMs = opts.intervalMs ?? 2_000
    this.takeOverAfterMs = opts.takeOverAfterMs ?? 3 * this.intervalMs
    this.reporterId = opts.reporterId ?? `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`
    this.now = opts.now ?? (() => new Date())
    this.loop = backgroundLoop({
      run: async () => void (await this.report()),
      intervalMs: this.intervalMs,
      // Readers see the row age and, past STALE_AFTER_SECONDS, say the stage's state is unknown.
      onError: (err, failures) => {
        if (failures === 0)
          opts.log?.('could not report the pipeline status; retrying', {
            stage: opts.stage,
            err: (err as Error).message,
          })
      },
    })
  }

  start(): void {
    this.loop.start()
  }

  async stop(): Promise<void> {
    await this.loop.stop()
    await this.opts.release?.()
  }

  /** One turn: measures and writes the row if it is this process's to keep; says whether it wrote. */
  async report(): Promise<boolean> {
    const { pool, stage } = this.opts
    const { rows } = await pool.query<{ reporter: string; checked_at: Date }>(
      'SELECT reporter, checked_at FROM pipeline_status WHERE stage = $1',
      [stage],
    )
    const row = rows[0]
    const takeOverBefore = new Date(this.now().getTime() - this.takeOverAfterMs)
    if (row && row.reporter !== this.reporterId && row.checked_at > takeOverBefore) return false
    const report = await this.opts.measure()
    const written = await pool.query(
      `INSERT INTO pipeline_status AS s (stage, reporter, events, jobs, oldest_pending_at, checked_at, analyzer)
       VALUES ($1, $2, $3, $4, $5, $6, $8)
       ON CONFLICT (stage) DO UPDATE SET reporter = EXCLUDED.reporter, events = EXCLUDED.events,
         jobs = EXCLUDED.jobs, oldest_pending_at = EXCLUDED.oldest_pending_at, checked_at = EXCLUDED.checked_at,
         analyzer = EXCLUDED.analyzer
        WHERE s.reporter = EXCLUDED.reporter OR s.checked_at <= $7`,
      [
        stage,
        this.reporterId,
        report.events,
        report.jobs ?? null,
        report.oldestPendingAt,
        this.now(),
        takeOverBefore,
        report.analyzer ?? null,
      ],
    )
    return (written.rowCount ?? 0) > 0
  }
}
