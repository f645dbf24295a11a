/**
 * The capture's SQL, profiled: the database ceiling (the gateway's own key check and capture transaction
 * in a loop, group commit as configured, no HTTP) at each concurrency, with what Postgres did for it:
 * statements by total time (pg_stat_statements), WAL bytes and records per capture (pg_stat_wal), and
 * what each table and index grew by per capture. Durable settings (fsync, synchronous_commit on).
 *
 *   npm run bench:capture-sql -- [--concurrency 16,64,256] [--duration 10]
 */
import { readdir, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '@cas/config'
import { createPool } from '@cas/db'
import { databaseCeiling } from './support/database-ceiling.ts'
import {
  buildDashboardApp,
  createBenchDatabase,
  createChatbotInProcess,
  signUpInProcess,
} from './support/in-process.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { BENCH_POSTGRES_SETTINGS, startBenchServers } from './support/servers.ts'
import { topStatements } from './support/statements.ts'

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '16,64,256' },
    duration: { type: 'string', default: '10' },
  },
})
const levels = values.concurrency.split(',').map(Number)
const seconds = Number(values.duration)

const servers = await startBenchServers({
  name: 'capture-sql',
  postgres: {
    ...BENCH_POSTGRES_SETTINGS,
    shared_preload_libraries: 'pg_stat_statements',
    'pg_stat_statements.track': 'all',
  },
})
try {
  const url = await createBenchDatabase(servers.postgres.url, 'bench_capture_sql')
  const pool = createPool(url, { max: 64, applicationName: 'bench-capture-sql' })
  const machine = await machineInfo({ databaseUrl: url })
  console.log(machineLine(machine))
  const config = loadConfig(process.env)
  const groupCommit = { maxTransactions: config.CAPTURE_MAX_TRANSACTIONS, maxGroup: config.CAPTURE_MAX_GROUP }
  console.log(`group commit ${groupCommit.maxTransactions} × ${groupCommit.maxGroup}; ${seconds} s per level`)
  const app = await buildDashboardApp({ pool, databaseUrl: url })
  const { cookie } = await signUpInProcess(app)
  const { apiKey } = await createChatbotInProcess(app, cookie, 'capture-sql')
  await app.close()
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  await databaseCeiling(pool, apiKey, 16, 2, 'warmup', groupCommit)

  for (const connections of levels) {
    const sizesBefore = await relationSizes(pool)
    await pool.query('SELECT pg_stat_statements_reset(), pg_stat_reset_shared($1)', ['wal'])
    const cpuBefore = { postgres: await postgresCpuMs(), node: process.cpuUsage() }
    const result = await databaseCeiling(pool, apiKey, connections, seconds, `c${connections}`, groupCommit)
    const wal = (
      await pool.query<{ bytes: string; records: string; fpi: string }>(
        'SELECT wal_bytes::text AS bytes, wal_records::text AS records, wal_fpi::text AS fpi FROM pg_stat_wal',
      )
    ).rows[0]!
    const { rows: xacts } = await pool.query<{ calls: string }>(
      `SELECT coalesce(sum(calls), 0)::text AS calls FROM pg_stat_statements WHERE query ILIKE 'COMMIT%'`,
    )
    const n = result.ok
    const postgresMs = (await postgresCpuMs()) - cpuBefore.postgres
    const nodeUsage = process.cpuUsage(cpuBefore.node)
    const nodeMs = (nodeUsage.user + nodeUsage.system) / 1_000
    console.log(
      `\n${connections} concurrent: ${Math.round(result.requestsPerSecond)} captures/s, p50 ${result.latency.p50.toFixed(1)} ms, ` +
        `p99 ${result.latency.p99.toFixed(1)} ms, ${result.errors} errors, ${n} captures in ${xacts[0]!.calls} commits; ` +
        `WAL ${Math.round(Number(wal.bytes) / n)} bytes, ${(Number(wal.records) / n).toFixed(1)} records ` +
        `(${(Number(wal.fpi) / n).toFixed(2)} full pages) per capture; CPU per capture: Postgres ` +
        `${(postgresMs / n).toFixed(3)} ms, this process ${(nodeMs / n).toFixed(3)} ms`,
    )
    const statements = await topStatements(pool, 12)
    for (const r of statements) {
      console.log(
        `  ${(r.totalMs / n).toFixed(3).padStart(7)} ms/capture  ${r.meanMs.toFixed(2).padStart(7)} ms × ${String(r.calls).padStart(6)}  ${r.query.slice(0, 110)}`,
      )
    }
    const sizesAfter = await relationSizes(pool)
    const growth = [...sizesAfter]
      .map(([name, bytes]) => [name, (bytes - (sizesBefore.get(name) ?? 0)) / n] as const)
      .filter(([, b]) => b > 0)
      .sort((a, b) => b[1] - a[1])
    console.log(`  growth per capture: ${growth.map(([r, b]) => `${r} ${Math.round(b)} B`).join(', ')}`)
  }

  console.log(
    `\n${os.cpus().length} cores; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
  await pool.end()
} finally {
  await servers.stop()
}

async function relationSizes(pool: import('pg').Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid)::text AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't')`,
  )
  return new Map(rows.map((r) => [r.name, Number(r.bytes)]))
}

/** CPU time (user + system) of this benchmark's Postgres (postmaster and its children), from /proc, in ms. */
async function postgresCpuMs(): Promise<number> {
  const postmaster = (await readFile(path.join(servers.scratch, 'pg', 'postmaster.pid'), 'utf8')).split(
    '\n',
  )[0]!
  const ticksPerMs = 100 / 1_000 // USER_HZ is 100 on Linux
  let total = 0
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
    const close = stat.lastIndexOf(')')
    const fields = stat.slice(close + 2).split(' ')
    if (pid !== postmaster && fields[1] !== postmaster) continue
    total += (Number(fields[11]) + Number(fields[12])) / ticksPerMs
  }
  return total
}
