/**
 * Services as real child processes (dist/<service>.js, their main.ts bundled by the suite's global setup),
 * for fault tests that SIGKILL them.
 * Each writes its output to a log file under FAULT_LOG_DIR (default: a temporary directory); a failing
 * test prints the tail of every process it started.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@cas/db'

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const SERVICES = ['gateway', 'query', 'projector', 'relay', 'analysis', 'all-in-one'] as const
export type ServiceName = (typeof SERVICES)[number]

/** Where the processes' logs go: FAULT_LOG_DIR (CI keeps it as an artifact) or a fresh temporary dir. */
export const FAULT_LOG_DIR = path.resolve(
  process.env.FAULT_LOG_DIR ?? path.join(os.tmpdir(), `cas-faults-${randomBytes(3).toString('hex')}`),
)

export interface ServiceProcess {
  readonly name: string
  readonly port: number
  /** http://127.0.0.1:<port> */
  readonly url: string
  readonly logFile: string
  /** The current run's pid. */
  readonly pid: number
  readonly running: boolean
  /** Starts it (again, same port and environment) and resolves once GET /healthz answers 200. */
  start(): Promise<void>
  /** Sends the signal (SIGKILL by default) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** SIGTERM: the service's graceful shutdown; SIGKILL if it has not exited after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>
  /** The last lines of its log. */
  logTail(lines?: number): string
  /** GET <path> on it, parsed as JSON. */
  getJson<T = unknown>(path: string): Promise<T>
}

export interface ServiceOptions {
  /** A label for logs, e.g. projector-2 (default: the service name). */
  readonly label?: string
  /** Configuration (libs/config variables); PORT and LOG_LEVEL are filled in unless given. */
  readonly env: Record<string, string>
  /** How long start() waits for /healthz (default 60 s). */
  readonly readyTimeoutMs?: number
}

const started = new Set<ServiceProcess>()

/** Creates a service process (not started yet: call start()). */
export async function serviceProcess(name: ServiceName, opts: ServiceOptions): Promise<ServiceProcess> {
  const port = opts.env.PORT ? Number(opts.env.PORT) : await freePort()
  const label = opts.label ?? name
  fs.mkdirSync(FAULT_LOG_DIR, { recursive: true })
  const logFile = path.join(FAULT_LOG_DIR, `${label}-${port}.log`)
  const script = path.join(REPO_ROOT, 'dist', `${name}.js`)
  if (!fs.existsSync(script))
    throw new Error(`${script} is missing: run npm run build (the fault suite's setup does)`)
  // A clean environment: nothing from the test runner's (a KAFKA_BROKERS or DATABASE_URL meant for the
  // tests) leaks into the service's configuration.
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    TMPDIR: process.env.TMPDIR ?? os.tmpdir(),
    LOG_LEVEL: 'warn',
    ...opts.env,
    PORT: String(port),
  }
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  const url = `http://127.0.0.1:${port}`

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null

  const handle: ServiceProcess = {
    name: label,
    port,
    url,
    logFile,
    get pid() {
      return child?.pid ?? -1
    },
    get running() {
      return running()
    },
    async start() {
      if (running()) throw new Error(`${label} is already running`)
      const out = fs.openSync(logFile, 'a')
      fs.writeSync(out, `\n--- ${new Date().toISOString()} starting ${label} ---\n`)
      try {
        child = spawn(process.execPath, ['--enable-source-maps', script], {
          cwd: REPO_ROOT,
          env,
          stdio: ['ignore', out, out],
        })
      } finally {
        fs.closeSync(out)
      }
      const c = child
      exited = new Promise((resolve) => c.once('exit', () => resolve()))
      started.add(handle)
      const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000)
      for (;;) {
        if (!running()) {
          throw new Error(
            `${label} exited during start-up (${c.exitCode ?? c.signalCode}):\n${handle.logTail()}`,
          )
        }
        try {
          const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })
          if (res.ok) return
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline) {
          await handle.kill()
          throw new Error(`${label} did not answer /healthz in time:\n${handle.logTail()}`)
        }
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    async kill(signal = 'SIGKILL') {
      if (running()) child!.kill(signal)
      await exited
    },
    async stop(timeoutMs = 30_000) {
      if (!running()) return
      child!.kill('SIGTERM')
      const timer = setTimeout(() => child!.kill('SIGKILL'), timeoutMs)
      await exited
      clearTimeout(timer)
    },
    logTail(lines = 40) {
      try {
        return fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
      } catch {
        return '(no log)'
      }
    },
    async getJson<T>(p: string) {
      const res = await fetch(`${url}${p}`, { signal: AbortSignal.timeout(5_000) })
      if (!res.ok) throw new Error(`${label} GET ${p}: ${res.status}`)
      return (await res.json()) as T
    },
  }
  return handle
}

/** Creates and starts a service process. */
export async function startService(name: ServiceName, opts: ServiceOptions): Promise<ServiceProcess> {
  const service = await serviceProcess(name, opts)
  await service.start()
  return service
}

/** Kills every service process still running (for afterEach/afterAll). */
export async function killAllServices(): Promise<void> {
  await Promise.all([...started].map((s) => s.kill()))
  started.clear()
}

/** The log tails of every service process started, for a failing test's message. */
export function serviceLogs(lines = 30): string {
  return [...started].map((s) => `--- ${s.name} (${s.logFile}) ---\n${s.logTail(lines)}`).join('\n')
}
