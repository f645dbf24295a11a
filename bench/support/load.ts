import { fileURLToPath } from 'node:url'
import { spawnWorker } from '../../test/support/worker-process.ts'

export interface LoadConfig {
  /** Base URL of the server. */
  readonly url: string
  readonly path: string
  readonly apiKey?: string
  readonly connections: number
  readonly durationSeconds: number
  /** Requests per second over all connections; as fast as it goes when unset. */
  readonly overallRate?: number
  /** Makes the ids of this run's conversations and messages unique. */
  readonly idPrefix: string
  readonly timeoutSeconds?: number
}

export interface LoadResult {
  readonly connections: number
  readonly seconds: number
  /** 2xx responses. */
  readonly ok: number
  readonly non2xx: number
  /** Responses by status code. */
  readonly statusCodes: Record<string, number>
  /** Connection errors (no response). */
  readonly errors: number
  readonly timeouts: number
  /** 2xx responses per second. */
  readonly requestsPerSecond: number
  /** Of the 2xx responses, in ms (autocannon corrects paced runs for coordinated omission). */
  readonly latency: { p50: number; p99: number; max: number; mean: number }
}

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url))

/** Runs autocannon (load-worker.ts) in a child process and returns its summary. */
export async function runLoad(config: LoadConfig): Promise<LoadResult> {
  const worker = spawnWorker({ BENCH_LOAD: JSON.stringify(config) }, WORKER)
  try {
    const line = await worker.waitForLine(
      (l) => l.startsWith('RESULT '),
      (config.durationSeconds + (config.timeoutSeconds ?? 10) + 60) * 1_000,
    )
    return JSON.parse(line.slice('RESULT '.length)) as LoadResult
  } finally {
    await worker.kill('SIGTERM')
  }
}
