import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort, runningEmbeddedPostgres } from '@cas/db'
import { waitFor } from './wait.ts'
import { spawnWorker, type Worker } from './worker-process.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * `npm run build`: the services into dist/, the dashboard into dist/web. Once per test run: the test files
 * that need the built app run side by side, and one rebuilding dist/ while another starts its service
 * from it could hand that one a file half written. The first to ask builds; the others wait for it (the
 * run's scratch directory, CAS_TEST_BUILD_DIR, from test/support/global-setup.ts). Without it, it builds.
 */
export async function buildApp(): Promise<void> {
  const build = () => promisify(execFile)(process.execPath, ['infra/build.mjs'], { cwd: ROOT })
  const shared = process.env.CAS_TEST_BUILD_DIR
  if (!shared) return void (await build())
  const outcome = path.join(shared, 'outcome')
  try {
    await mkdir(shared)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    const result = await waitFor(() => readFile(outcome, 'utf8').catch(() => ''), {
      timeoutMs: 600_000,
      intervalMs: 200,
      what: 'the build another test file of this run started',
    })
    if (result !== 'ok') throw new Error(`the build another test file of this run started failed: ${result}`)
    return
  }
  try {
    await build()
    await writeFile(outcome, 'ok')
  } catch (err) {
    await writeFile(outcome, String(err))
    throw err
  }
}

export interface BuiltApp {
  readonly baseUrl: string
  /** The service's current process (a new one after restart). */
  readonly process: Worker
  /** Its embedded Postgres, as the superuser the app itself connects as. */
  databaseUrl(): string
  /**
   * Ends the service's process (SIGKILL by default: a crash, in the middle of whatever it was doing),
   * keeping its data directory; afterwards nothing answers on its port until start().
   */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** Starts the service again on the same port and data directory; resolves once /healthz answers. */
  start(): Promise<void>
  /** Stops the service (and so its embedded Postgres) and removes its data directory. */
  stop(): Promise<void>
}

/**
 * The built all-in-one (dist/all-in-one.js, what `npm start` runs after building) in a child process on a
 * fresh DATA_DIR, so with its own embedded Postgres, answering on a free port; resolves once /healthz does.
 */
export async function startBuiltApp(
  env: Record<string, string> = {},
  opts: { port?: number } = {},
): Promise<BuiltApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cas-built-app-'))
  // Postgres runs as its own user when we are root: it must be able to reach its data directory.
  await chmod(dataDir, 0o755)
  const port = opts.port ?? (await freePort())
  const baseUrl = `http://127.0.0.1:${port}`
  const spawnService = () =>
    spawnWorker(
      {
        // `npm start`'s defaults, whatever servers the test run itself was pointed at (empty is unset).
        DATABASE_URL: '',
        QUERY_DATABASE_URL: '',
        KAFKA_BROKERS: '',
        REDIS_URL: '',
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...env,
      },
      `${ROOT}dist/all-in-one.js`,
      ['--enable-source-maps'],
    )
  let child = spawnService()
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    await child.kill(signal)
    await stopLeftoverPostgres(dataDir)
  }
  const stop = async () => {
    await child.kill('SIGTERM')
    await stopLeftoverPostgres(dataDir)
    await rm(dataDir, { recursive: true, force: true })
  }
  const untilHealthy = async () => {
    const current = child
    const exited = new Promise<never>((_, reject) =>
      current.process.once('exit', (code) =>
        reject(new Error(`the built app exited (${code}) while starting: ${current.stderr()}`)),
      ),
    )
    exited.catch(() => {})
    const healthy = waitFor(async () => (await fetch(`${baseUrl}/healthz`).catch(() => undefined))?.ok, {
      timeoutMs: 90_000,
      what: 'the built app to answer /healthz',
    })
    healthy.catch(() => {})
    await Promise.race([healthy, exited])
  }
  try {
    await untilHealthy()
  } catch (err) {
    await stop()
    throw err
  }
  const start = async () => {
    child = spawnService()
    await untilHealthy()
  }
  const databaseUrl = () => {
    const url = runningEmbeddedPostgres(path.join(dataDir, 'postgres'))
    if (!url) throw new Error(`the built app's Postgres is not running (${dataDir})`)
    return url
  }
  return {
    baseUrl,
    get process() {
      return child
    },
    databaseUrl,
    kill,
    start,
    stop,
  }
}

/**
 * A service that stopped gracefully has stopped its embedded Postgres; one that was killed has not. The
 * server this test started is found by its own data directory's postmaster.pid, and asked to shut down.
 */
async function stopLeftoverPostgres(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n', 1)[0])
  if (!Number.isInteger(pid) || pid <= 0) return
  try {
    process.kill(pid, 'SIGINT')
  } catch {
    return
  }
  await waitFor(
    () => {
      try {
        process.kill(pid, 0)
        return false
      } catch {
        return true
      }
    },
    { timeoutMs: 30_000, what: `the test's Postgres (${pid}) to stop` },
  ).catch(() => {})
}
