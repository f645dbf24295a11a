import { readFileSync } from 'node:fs'
import { appendFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { freePort } from '@cas/db'
import { modelConfigEnv } from '../../test/support/model.ts'
import { spawnWorker, type Worker } from '../../test/support/worker-process.ts'
import { BENCH_MASTER_KEY } from './keyring.ts'
import { sleep } from './stats.ts'

export interface ServiceOptions {
  readonly databaseUrl: string
  /** Kafka mode when set (with the relay in the process); the journal-only embedded mode otherwise. */
  readonly kafkaBrokers?: readonly string[]
  readonly topicPrefix?: string
  readonly poolSize: number
  /** Write a V8 CPU profile of the service here when it stops. */
  readonly cpuProfileDir?: string
  /** Extra settings (environment variables). */
  readonly env?: Record<string, string>
  /** The bundle to run: the all-in-one (default) or one service, e.g. DIST_GATEWAY. */
  readonly entry?: string
}

export interface RunningService {
  readonly url: string
  readonly worker: Worker
  /**
   * The analyzer the service analyses with once started (`cas_analysis_analyzer_info`), e.g.
   * `all-MiniLM-L6-v2 … (ready)` for the language model or `lexical … (fallback)`; null without analysis.
   */
  readonly analyzer: string | null
  stop(): Promise<void>
}

const ROOT = path.resolve(import.meta.dirname, '../..')
export const DIST_ALL_IN_ONE = path.join(ROOT, 'dist/all-in-one.js')
/** The gateway alone, as deployed for volume: capture and the dashboard's commands, no consumers. */
export const DIST_GATEWAY = path.join(ROOT, 'dist/gateway.js')

/**
 * Starts the all-in-one service (gateway, query, projector, analysis, and the relay in Kafka mode) as
 * `npm start` runs it, from the esbuild bundle in dist/, in a process of its own, and waits until
 * /readyz answers. Rate limits are raised so that the load is never throttled.
 */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const port = await freePort()
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: opts.databaseUrl,
    DATABASE_POOL_SIZE: String(opts.poolSize),
    KAFKA_BROKERS: opts.kafkaBrokers?.join(',') ?? '',
    KAFKA_TOPIC_PREFIX: opts.topicPrefix ?? '',
    CAPTURE_RATE_LIMIT_PER_MINUTE: '1000000000',
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000000',
    REDIS_URL: '',
    ENCRYPTION_MASTER_KEY: BENCH_MASTER_KEY,
    // The language model from ../shared/models (or ANALYSIS_MODEL_DIR), as the tests load it: this
    // machine cannot reach the hub, and without the model the service would analyse with the lexical
    // fallback, far cheaper than the product's default. The report says which analyzer ran.
    ...modelConfigEnv(),
    ...opts.env,
  }
  const nodeArgs = ['--enable-source-maps']
  if (opts.cpuProfileDir) {
    await rm(opts.cpuProfileDir, { recursive: true, force: true })
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`)
  }
  const worker = spawnWorker(env, opts.entry ?? DIST_ALL_IN_ONE, nodeArgs)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (worker.process.exitCode !== null) {
      throw new Error(
        `the service exited (${worker.process.exitCode}): ${worker.stderr() || worker.lines.slice(-5).join('\n')}`,
      )
    }
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ready) break
    if (Date.now() > deadline) {
      await worker.kill()
      throw new Error(
        `the service was not ready within 60 s: ${worker.stderr() || worker.lines.slice(-5).join('\n')}`,
      )
    }
    await sleep(200)
  }
  const analyzer = await analyzerInUse(url, deadline)
  return {
    url,
    worker,
    analyzer,
    // SIGTERM: a graceful shutdown, which also writes the CPU profile.
    stop: async () => {
      const stopped = await worker.kill('SIGTERM')
      // The service's log (warnings and up, LOG_LEVEL=warn) appended to a file, to find why a run went wrong.
      const file = process.env.BENCH_SERVICE_LOG
      if (file) await appendFile(file, `${worker.lines.join('\n')}\n--- stderr\n${worker.stderr()}\n=====\n`)
      return stopped
    },
  }
}

/**
 * Waits (until `deadline`) for the service's analyzer to be chosen: the model loads after /readyz, and a
 * load measured meanwhile would run without it. Null for a service without analysis (the gateway).
 */
async function analyzerInUse(url: string, deadline: number): Promise<string | null> {
  for (;;) {
    const metrics = await fetch(`${url}/metrics`).then((r) => (r.ok ? r.text() : ''))
    const info = /^cas_analysis_analyzer_info\{([^}]*)\} 1$/m.exec(metrics)?.[1]
    if (!info) return null
    const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(info)?.[1] ?? '?'
    if (label('state') !== 'loading' || Date.now() > deadline) {
      return `${label('analyzer')} ${label('version')} (${label('state')})`
    }
    await sleep(200)
  }
}

export interface Account {
  /** `cas_session=…`, for the dashboard API. */
  readonly cookie: string
  readonly chatbotId: string
  readonly apiKey: string
}

/** Signs up (a user with an organization) and creates a chatbot, through the HTTP API at `url`. */
export async function createAccount(url: string, name = 'bench'): Promise<Account> {
  const json = { 'content-type': 'application/json' }
  const signup = await fetch(`${url}/api/v1/auth/signup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({
      email: `${name}-${Date.now()}@example.com`,
      password: 'a long bench password',
      organizationName: name,
    }),
  })
  if (!signup.ok) throw new Error(`sign-up answered ${signup.status}: ${await signup.text()}`)
  const cookie = signup.headers.get('set-cookie')!.split(';')[0]!
  const created = await fetch(`${url}/api/v1/chatbots`, {
    method: 'POST',
    headers: { ...json, cookie },
    body: JSON.stringify({ name }),
  })
  if (!created.ok) throw new Error(`creating a chatbot answered ${created.status}: ${await created.text()}`)
  const body = (await created.json()) as { apiKey: string; chatbot: { id: string } }
  return { cookie, chatbotId: body.chatbot.id, apiKey: body.apiKey }
}

/**
 * Samples a process's resident memory (VmRSS from /proc) every `everyMs` until stopped; Linux only
 * (elsewhere it reports nothing). stop() returns the highest and the last sample, in MiB.
 */
export function sampleRss(pid: number | undefined, everyMs = 500) {
  let max = 0
  let last = 0
  const read = () => {
    if (pid === undefined) return
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      last = kb / 1024
      max = Math.max(max, last)
    } catch {
      // The process has gone, or this is not Linux.
    }
  }
  read()
  const timer = setInterval(read, everyMs)
  return {
    stop(): { maxMb: number; lastMb: number } | undefined {
      clearInterval(timer)
      read()
      return max > 0 ? { maxMb: Math.round(max), lastMb: Math.round(last) } : undefined
    },
  }
}
