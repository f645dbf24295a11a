import type { BenchOptions, Mode } from './args.ts'
import type { CpuProfileSummary } from './cpu-profile.ts'
import type { CeilingResult } from './database-ceiling.ts'
import type { ProduceResult } from './kafka-produce.ts'
import type { LoadResult } from './load.ts'
import type { MachineInfo } from './machine.ts'
import type { QueryScale } from './queries.ts'
import type { Latency } from './stats.ts'

/** Everything one `npm run bench` measured: written as report.json, rendered as REPORT.md. */
export interface BenchResults {
  readonly machine: MachineInfo
  /** One-minute load average when the run ended. */
  loadAverageAtEnd?: number
  readonly options: BenchOptions
  readonly postgresSettings: Readonly<Record<string, string>>
  readonly startedAt: string
  finishedAt?: string
  ceilings?: Ceilings
  /** kafkajs and @platformatic/kafka producing the same batches (acks=all). */
  clients?: ProduceResult[]
  /** dist/gateway.js alone (no consumers), per concurrency, with its resident memory. */
  gateway?: { load: LoadResult; rss?: Rss }[]
  modes: ModeResults[]
  queries?: QueryScale[]
  /** Things that went wrong or look off, in the order they happened. */
  readonly notes: string[]
}

export interface Ceilings {
  /** A bare Fastify route taking the same body, per concurrency. */
  http: LoadResult[]
  /** The capture's own SQL in a loop, per concurrency. */
  database: CeilingResult[]
  /** kafkajs at its best (most batches in flight) producing a capture's events. */
  kafka?: ProduceResult
  /** Sizes (bytes) of the Kafka messages one capture of a new conversation produces, by event type. */
  captureEvents?: { type: string; bytes: number }[]
}

/** Resident memory of a service process over a measurement, MiB. */
export interface Rss {
  readonly maxMb: number
  readonly lastMb: number
}

export interface CaptureLevel {
  readonly load: LoadResult
  /** The service's resident memory during the level. */
  readonly rss?: Rss
  /** Events the projector had still to apply when the load stopped. */
  readonly projectorBacklog: number
  /** Seconds after the load until the projector had caught up (null: not within the drain timeout). */
  readonly projectorCaughtUpSeconds: number | null
  /** Seconds until projector and analysis had both caught up (null: not within the drain timeout). */
  readonly allCaughtUpSeconds: number | null
}

export interface Freshness {
  /** Requests/s of the paced (sustained) background load: --sustained-rate, or half the best level's. */
  readonly rate: number
  /** The service's resident memory over the sustained load. */
  readonly rss?: Rss
  /** How far behind analysis was when the load stopped (jobs), and seconds until it had caught up. */
  readonly analysisBacklogAtEnd?: number
  readonly analysisCaughtUpSeconds?: number | null
  readonly load: LoadResult
  /** From a probe capture's 200 to GET /api/v1/conversations/:id answering it with all its messages. */
  readonly latency: Latency
  /** The probe captures' own latency. */
  readonly probeCaptureLatency: Latency
  readonly failures: number
}

export interface Throughput {
  readonly events: number
  readonly seconds: number
  readonly eventsPerSecond: number
}

export interface StageThroughput extends Throughput {
  /** The benchmark process's peak resident memory during the stage (it runs in that process). */
  readonly peakRssMiB?: number
  readonly cpuSeconds?: StageCpu
}

/**
 * CPU seconds a stage took: the benchmark process's (where the stage runs) and the Postgres server's.
 * A loaded machine stretches a stage's time, much less its CPU: compare these across runs.
 */
export interface StageCpu {
  readonly node: number
  readonly postgres?: number
}

export interface Pipeline {
  /** Seconds to seed the journal. */
  readonly seedSeconds: number
  /** Journal → Kafka (Kafka mode only). */
  relay?: Throughput
  /** The live projector (the service's settings), over the first events of the journal or topics. */
  projector?: StageThroughput
  /** Every projection rebuilt from all the events, swap included. */
  rebuild?: StageThroughput & {
    /** The longest a read of the read models took meanwhile (one every 100 ms, on a connection of its own). */
    readonly longestReadMs?: number
    readonly reads?: number
  }
  /** Per stage, with --profile. */
  profiles?: StageProfile[]
}

/** What one pipeline stage spent its time on (--profile). */
export interface StageProfile {
  readonly stage: string
  readonly statements: StatementStat[]
  readonly cpuProfile?: CpuProfileSummary
}

export interface StatementStat {
  readonly query: string
  readonly calls: number
  readonly totalMs: number
  readonly meanMs: number
  readonly rows: number
}

export interface ModeResults {
  readonly mode: Mode
  /** The analyzer the all-in-one analysed with during the capture measurements (see RunningService). */
  analyzer?: string | null
  capture?: CaptureLevel[]
  freshness?: Freshness
  pipeline?: Pipeline
  /** pg_stat_statements over the capture levels (--profile). */
  statements?: StatementStat[]
  /** The service's CPU profile over its whole run (--profile). */
  cpuProfile?: CpuProfileSummary
}
