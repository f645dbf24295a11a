/**
 * Capture latency with and without a slow analysis provider running: the provider takes 2 s per call,
 * and capture latency must stay what it is without analysis (analysis runs after the response, from the
 * event log, and its backlog waits there).
 *
 *   npm run bench:capture-slow-analysis [-- --requests 2000 --concurrency 16]
 *
 * Same process, same embedded PostgreSQL (fsync on), real HTTP on loopback; prints the machine and
 * p50/p99/max for each run.
 */

import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { loadConfig } from '@cas/config'
import { createPool, migrate } from '@cas/db'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import { type Analyzer, createAnalysisService } from '@cas/service-analysis'
import { buildGatewayApp } from '@cas/service-gateway'
import { benchKeyring } from './support/keyring.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { startBenchServers } from './support/servers.ts'
import { createAccount } from './support/service.ts'

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '16' } },
})
const REQUESTS = Number(values.requests)
const CONCURRENCY = Number(values.concurrency)

/** Answers every call after two seconds: a provider under heavy load. */
const slowAnalyzer: Analyzer = {
  info: { name: 'slow', version: 'bench' },
  async analyzeMessages(messages) {
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    return messages.map((m) => ({
      messageId: m.id,
      sentiment: { score: 0, label: 'neutral' as const },
      topics: [],
    }))
  },
}

const servers = await startBenchServers({ name: 'capture' })
const { postgres } = servers
try {
  await migrate(postgres.url)
  const pool = createPool(postgres.url, { max: 20 })
  const config = loadConfig({ DATABASE_URL: postgres.url, CAPTURE_RATE_LIMIT_PER_MINUTE: '100000000' })
  const app = await buildGatewayApp({ pool, keyring: benchKeyring, config, logger: false, readiness: [] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  console.log(machineLine(await machineInfo({ databaseUrl: postgres.url })))
  console.log(`${REQUESTS} captures of 10 messages, ${CONCURRENCY} concurrent`)
  const { apiKey } = await createAccount(base)

  report('without analysis running', await load(base, apiKey, 'a'))
  const analysis = createAnalysisService({
    pool,
    keyring: benchKeyring,
    eventLog: EMBEDDED_EVENT_LOG,
    analyzer: slowAnalyzer,
    logger: false,
    maxPending: 1_000,
  })
  await analysis.start()
  report('with a 2 s-per-call provider running', await load(base, apiKey, 'b'))
  console.log(
    `analysis lag at the end: ${analysis.jobRunner.stats.inFlight} in flight, the rest queued or in the log`,
  )
  await analysis.stop()
  await app.close()
  await pool.end()
} finally {
  await servers.stop()
}

async function load(base: string, apiKey: string, run: string): Promise<number[]> {
  const latencies: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++
        const body = JSON.stringify({
          conversationId: `${run}-${i % 500}`,
          messages: Array.from({ length: 10 }, (_, m) => ({
            id: `${i}-${m}`,
            role: m % 2 ? 'assistant' : 'user',
            content: 'How do I reset my password? The link in the email has expired.',
          })),
        })
        const start = process.hrtime.bigint()
        const res = await fetch(`${base}/api/v1/capture`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
          body,
        })
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`capture answered ${res.status}`)
        latencies.push(Number(process.hrtime.bigint() - start) / 1e6)
      }
    }),
  )
  return latencies.sort((a, b) => a - b)
}

function report(what: string, ms: number[]) {
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(1)
  console.log(
    `  ${what.padEnd(40)} p50 ${at(0.5).padStart(6)} ms   p99 ${at(0.99).padStart(6)} ms   max ${at(1).padStart(6)} ms`,
  )
}
