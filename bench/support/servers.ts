import { appendFileSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { type RunningPostgres, startEmbeddedPostgres } from '@cas/db'
import { type KafkaBroker, startKafka } from '../../infra/kafka/broker.ts'
import { type PostgresLogWatch, WATCHED_POSTGRES_SETTINGS, watchPostgresLog } from './postgres-log.ts'

/**
 * Postgres settings of the benchmarks: durable (fsync and synchronous_commit stay on), with memory for a
 * dataset of 10M messages and checkpoints far enough apart that seeding does not trigger them constantly.
 */
export const BENCH_POSTGRES_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '1GB',
  work_mem: '64MB',
  max_wal_size: '8GB',
}

export interface BenchServers {
  /** A scratch directory, removed by stop(). */
  readonly scratch: string
  readonly postgres: RunningPostgres
  readonly kafka?: KafkaBroker
  /** The Postgres server's log, kept when watchPostgresLog was asked (postgres-log.ts). */
  readonly postgresLog?: PostgresLogWatch
  stop(): Promise<void>
}

export interface BenchServerOptions {
  /** Names the scratch directory. */
  readonly name: string
  /** Extra `postgres -c` settings; durability stays on (fsync, synchronous_commit) unless overridden. */
  readonly postgres?: Record<string, string>
  /** Start a Kafka broker too (from its jars, infra/kafka). */
  readonly kafka?: boolean
  readonly kafkaHeapMb?: number
  /** Append the Postgres server's log (its stderr) to this file. */
  readonly postgresLog?: string
  /**
   * Keep the Postgres server's log in memory (BenchServers.postgresLog) and log every statement of 100 ms
   * or more (WATCHED_POSTGRES_SETTINGS, before `postgres`): deadlocks, errors and slow statements.
   */
  readonly watchPostgresLog?: boolean
}

/**
 * The real servers a benchmark runs against, in a scratch directory: the embedded PostgreSQL with its
 * durable defaults and, when asked, the Kafka broker. stop() stops both and removes the directory.
 */
export async function startBenchServers(opts: BenchServerOptions): Promise<BenchServers> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), `cas-bench-${opts.name}-`))
  // Postgres runs as its own user when we are root: it must be able to reach its data directory.
  await chmod(scratch, 0o755)
  const stops: (() => Promise<void>)[] = [() => rm(scratch, { recursive: true, force: true })]
  const stop = async () => {
    for (const s of stops.splice(0)) await s().catch(() => {})
  }
  try {
    const watch = opts.watchPostgresLog ? watchPostgresLog() : undefined
    const file = opts.postgresLog
    const postgres = await startEmbeddedPostgres({
      dataDir: path.join(scratch, 'pg'),
      // A throwaway cluster: Ctrl-C on the benchmark ends it with the benchmark.
      detached: false,
      settings: {
        max_connections: '300',
        ...(watch ? WATCHED_POSTGRES_SETTINGS : {}),
        // Its log read here, through the pipe, not from the files the logging collector would write.
        ...(file || watch ? { logging_collector: 'off' } : {}),
        ...opts.postgres,
      },
      log:
        file || watch
          ? (line) => {
              if (file) appendFileSync(file, `${line}\n`)
              watch?.add(line)
            }
          : undefined,
    })
    stops.unshift(() => postgres.stop())
    let kafka: KafkaBroker | undefined
    if (opts.kafka) {
      kafka = await startKafka({ dataDir: path.join(scratch, 'kafka'), heapMb: opts.kafkaHeapMb ?? 1024 })
      const broker = kafka
      stops.unshift(() => broker.stop())
    }
    return { scratch, postgres, kafka, postgresLog: watch, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
