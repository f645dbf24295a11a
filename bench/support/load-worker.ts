/**
 * The load generator, in a process of its own so that it never shares an event loop with what it
 * measures: autocannon posting capture bodies with unique ids to `url` + `path`, then one line
 * `RESULT <json>` on stdout. Configured by BENCH_LOAD (a JSON LoadConfig, see load.ts).
 */
import autocannon from 'autocannon'
import { captureBody } from './capture-body.ts'
import type { LoadConfig, LoadResult } from './load.ts'

const config = JSON.parse(process.env.BENCH_LOAD ?? '{}') as LoadConfig
let next = 0
const result = await autocannon({
  url: config.url,
  connections: config.connections,
  duration: config.durationSeconds,
  timeout: config.timeoutSeconds ?? 10,
  ...(config.overallRate ? { overallRate: config.overallRate } : {}),
  headers: {
    'content-type': 'application/json',
    ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
  },
  requests: [
    {
      method: 'POST',
      path: config.path,
      // A new conversation and new message ids for every request: anything repeated would be deduplicated.
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify(captureBody(`${config.idPrefix}-${next++}`)),
      }),
    },
  ],
})
const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count]))
const out: LoadResult = {
  connections: config.connections,
  seconds: result.duration,
  ok: result['2xx'],
  non2xx: result.non2xx,
  statusCodes,
  errors: result.errors,
  timeouts: result.timeouts,
  requestsPerSecond: result['2xx'] / result.duration,
  latency: {
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    mean: result.latency.mean,
  },
}
console.log(`RESULT ${JSON.stringify(out)}`)
