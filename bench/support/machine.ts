import { execFileSync } from 'node:child_process'
import os from 'node:os'
import pg from 'pg'

export interface MachineInfo {
  readonly cores: number
  readonly cpuModel: string
  readonly memoryGiB: number
  readonly node: string
  readonly postgres?: string
  readonly kafka?: string
  /** ISO 8601, when the run started. */
  readonly date: string
  /** Short commit hash, with "+changes" when the working tree had uncommitted changes; null outside git. */
  readonly commit: string | null
  /** One-minute load average when the run started: other work on the machine skews every figure. */
  readonly loadAverage: number
}

/** The machine a benchmark runs on, and the versions of the servers it runs against. */
export async function machineInfo(opts: { databaseUrl?: string; kafkaVersion?: string } = {}) {
  let postgres: string | undefined
  if (opts.databaseUrl) {
    const client = new pg.Client({ connectionString: opts.databaseUrl })
    await client.connect()
    try {
      postgres = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!
        .v
    } finally {
      await client.end()
    }
  }
  const info: MachineInfo = {
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres,
    kafka: opts.kafkaVersion,
    date: new Date().toISOString(),
    commit: gitCommit(),
    loadAverage: Math.round(os.loadavg()[0]! * 100) / 100,
  }
  return info
}

/** One line, as the single benchmarks print it first. */
export function machineLine(m: MachineInfo): string {
  return (
    `machine: ${m.cores} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}` +
    (m.postgres ? `, PostgreSQL ${m.postgres} (embedded)` : '') +
    (m.kafka ? `, Apache Kafka ${m.kafka}` : '') +
    `, commit ${m.commit ?? 'unknown'}, load average ${m.loadAverage}`
  )
}

/** The one-, five- and fifteen-minute load averages, as a run's progress lines print them ("3.25 8.05 11.02"). */
export function loadAverages(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
}

/** Whether the machine was busy with other work: a load average above half its cores. */
export function machineWasBusy(loadAverage: number, cores: number): boolean {
  return loadAverage > cores / 2
}

function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }).trim() !== ''
    return dirty ? `${head}+changes` : head
  } catch {
    return null
  }
}
