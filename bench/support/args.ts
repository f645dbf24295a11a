import { parseArgs } from 'node:util'

export const MODES = ['embedded', 'kafka'] as const
export type Mode = (typeof MODES)[number]

export const SECTIONS = ['ceilings', 'gateway', 'capture', 'pipeline', 'queries', 'clients'] as const
export type Section = (typeof SECTIONS)[number]

/** What `npm run bench` measures, and how much of it. */
export interface BenchOptions {
  readonly quick: boolean
  readonly modes: readonly Mode[]
  readonly sections: readonly Section[]
  /** Concurrent connections of the capture load (and of the ceilings). */
  readonly concurrency: readonly number[]
  /** Seconds of load per concurrency level. */
  readonly durationSeconds: number
  readonly warmupSeconds: number
  /** Seconds of paced (sustained) load while freshness probes run. */
  readonly freshnessSeconds: number
  /** Requests/s of the sustained load; half the best capture level's rate when unset. */
  readonly sustainedRate?: number
  /** Longest wait, after each load level, for the pipeline to catch up before the next one. */
  readonly drainTimeoutSeconds: number
  /** Events per Kafka producer measurement. */
  readonly kafkaEvents: number
  /** Events in the journal the rebuild replays. */
  readonly rebuildEvents: number
  /** Events the live projector is timed over (at most rebuildEvents). */
  readonly projectorEvents: number
  /** Messages in the read models the queries run over. */
  readonly queryScales: readonly number[]
  readonly queryRuns: number
  /** DATABASE_POOL_SIZE of the service, and the pool of the database ceiling. */
  readonly poolSize: number
  /** Where REPORT.md and report.json go. */
  readonly outDir: string
  /** pg_stat_statements during the capture runs and --cpu-prof of the service. */
  readonly profile: boolean
  /** Log the plans of statements slower than this (auto_explain) to postgres.log in outDir. */
  readonly explainSlowMs?: number
}

const FULL = {
  concurrency: [1, 16, 64, 256],
  durationSeconds: 10,
  warmupSeconds: 3,
  freshnessSeconds: 60,
  drainTimeoutSeconds: 60,
  kafkaEvents: 100_000,
  rebuildEvents: 1_000_000,
  projectorEvents: 100_000,
  queryScales: [1_000_000, 10_000_000],
  queryRuns: 20,
  outDir: 'bench',
}

const QUICK: typeof FULL = {
  concurrency: [1, 16, 64, 256],
  durationSeconds: 2,
  warmupSeconds: 1,
  freshnessSeconds: 4,
  drainTimeoutSeconds: 15,
  kafkaEvents: 10_000,
  rebuildEvents: 20_000,
  projectorEvents: 10_000,
  queryScales: [100_000, 1_000_000],
  queryRuns: 5,
  outDir: 'bench/quick',
}

export const USAGE = `usage: npm run bench -- [options]
  --quick                     small sizes and short runs (checks the harness in a few minutes)
  --modes embedded,kafka      event-log modes to measure
  --only ${SECTIONS.join(',')}
                              sections to run (default: all)
  --concurrency 1,16,64,256   capture connections per level
  --duration S                seconds of load per level (${FULL.durationSeconds}; quick ${QUICK.durationSeconds})
  --warmup S                  seconds of warm-up load before the levels
  --freshness S               seconds of sustained (paced) load while freshness is probed (${FULL.freshnessSeconds})
  --sustained-rate R          requests/s of that load (default: half the best capture level's rate)
  --drain-timeout S           longest wait for the pipeline to catch up after a level
  --kafka-events N            events per Kafka producer measurement
  --rebuild-events N          events the rebuild replays (${FULL.rebuildEvents}; quick ${QUICK.rebuildEvents})
  --projector-events N        events the projector is timed over
  --query-scales N,N          messages in the read models for the queries
  --query-runs N              timed runs per query
  --pool-size N               the service's DATABASE_POOL_SIZE (and the database ceiling's pool)
  --out DIR                   where REPORT.md and report.json go (bench; quick: bench/quick)
  --profile                   pg_stat_statements and a CPU profile of the service during capture, and of
                              the benchmark process during the pipeline's projector and rebuild
  --explain-slow MS           the plan, with actual rows, of every statement slower than MS (auto_explain),
                              in postgres.log beside the report (costs some speed: for diagnosis)`

export class UsageError extends Error {
  override name = 'UsageError'
}

/** Parses `npm run bench` arguments: --quick picks the small defaults, any other option overrides one. */
export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        quick: { type: 'boolean', default: false },
        profile: { type: 'boolean', default: false },
        'explain-slow': { type: 'string' },
        modes: { type: 'string' },
        only: { type: 'string' },
        concurrency: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        freshness: { type: 'string' },
        'sustained-rate': { type: 'string' },
        'drain-timeout': { type: 'string' },
        'kafka-events': { type: 'string' },
        'rebuild-events': { type: 'string' },
        'projector-events': { type: 'string' },
        'query-scales': { type: 'string' },
        'query-runs': { type: 'string' },
        'pool-size': { type: 'string' },
        out: { type: 'string' },
      },
    }).values
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const quick = values.quick === true
  const base = quick ? QUICK : FULL
  const str = (name: string) => values[name] as string | undefined
  const rebuildEvents = positiveInt('rebuild-events', str('rebuild-events')) ?? base.rebuildEvents
  return {
    quick,
    profile: values.profile === true,
    explainSlowMs: nonNegativeInt('explain-slow', str('explain-slow')),
    modes: oneOf('modes', str('modes'), MODES) ?? MODES,
    sections: oneOf('only', str('only'), SECTIONS) ?? SECTIONS,
    concurrency: intList('concurrency', str('concurrency')) ?? base.concurrency,
    durationSeconds: positiveInt('duration', str('duration')) ?? base.durationSeconds,
    warmupSeconds: nonNegativeInt('warmup', str('warmup')) ?? base.warmupSeconds,
    freshnessSeconds: positiveInt('freshness', str('freshness')) ?? base.freshnessSeconds,
    sustainedRate: positiveInt('sustained-rate', str('sustained-rate')),
    drainTimeoutSeconds: nonNegativeInt('drain-timeout', str('drain-timeout')) ?? base.drainTimeoutSeconds,
    kafkaEvents: positiveInt('kafka-events', str('kafka-events')) ?? base.kafkaEvents,
    rebuildEvents,
    projectorEvents: Math.min(
      rebuildEvents,
      positiveInt('projector-events', str('projector-events')) ?? base.projectorEvents,
    ),
    queryScales: intList('query-scales', str('query-scales')) ?? base.queryScales,
    queryRuns: positiveInt('query-runs', str('query-runs')) ?? base.queryRuns,
    poolSize: positiveInt('pool-size', str('pool-size')) ?? 20,
    outDir: str('out') ?? base.outDir,
  }
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  const n = nonNegativeInt(name, value)
  if (n === 0) throw new UsageError(`--${name}: must be at least 1`)
  return n
}

function nonNegativeInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  // Underscores allowed for readability: --rebuild-events 1_000_000.
  const n = Number(value.replaceAll('_', ''))
  if (!Number.isSafeInteger(n) || n < 0 || value.trim() === '') {
    throw new UsageError(`--${name}: expected a whole number, got "${value}"`)
  }
  return n
}

function intList(name: string, value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined
  const list = value.split(',').map((v) => positiveInt(name, v.trim())!)
  if (list.length === 0) throw new UsageError(`--${name}: expected a comma-separated list`)
  return list
}

function oneOf<T extends string>(
  name: string,
  value: string | undefined,
  allowed: readonly T[],
): T[] | undefined {
  if (value === undefined) return undefined
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)
  const bad = list.filter((v) => !allowed.includes(v as T))
  if (bad.length > 0 || list.length === 0) {
    throw new UsageError(`--${name}: expected some of ${allowed.join(', ')}, got "${value}"`)
  }
  // Keep the canonical order whatever order they were given in.
  return allowed.filter((a) => list.includes(a))
}
