/**
 * Dashboard read latency at scale: overview and sentiment trend over 30 and 365 days, and the
 * conversation list, for read models holding 1M and 10M messages (one organization, 10 chatbots, a year
 * of traffic, ten messages per conversation, three per end user).
 *
 *   npm run bench:analytics [-- --scales 1000000,10000000 --runs 20]
 *
 * The seed writes, with SQL, exactly the rows the projector keeps for that many messages in the tables
 * these reads use (hourly rollups, hourly activity, conversations); they never read messages, so those
 * are not generated. Requests go through the real HTTP routes (app.inject), session and row-level
 * security included. Prints the machine, then p50/p95/max per query. Also part of `npm run bench`.
 */
import { parseArgs } from 'node:util'
import { createBenchDatabase } from './support/in-process.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { measureQueries } from './support/queries.ts'
import { BENCH_POSTGRES_SETTINGS, startBenchServers } from './support/servers.ts'

const { values } = parseArgs({
  options: {
    scales: { type: 'string', default: '1000000,10000000' },
    runs: { type: 'string', default: '20' },
  },
})

const servers = await startBenchServers({ name: 'analytics', postgres: BENCH_POSTGRES_SETTINGS })
try {
  console.log(machineLine(await machineInfo({ databaseUrl: servers.postgres.url })))
  await measureQueries({
    databaseUrl: await createBenchDatabase(servers.postgres.url, 'bench_queries'),
    scales: values.scales.split(',').map(Number),
    runs: Number(values.runs),
    log: console.log,
  })
} finally {
  await servers.stop()
}
