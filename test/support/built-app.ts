import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort } from '@cas/db'
import { waitFor } from './wait.ts'
import { spawnWorker, type Worker } from './worker-process.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** `npm run build`: the services into dist/, the dashboard into dist/web. */
export async function buildApp(): Promise<void> {
  await promisify(execFile)(process.execPath, ['infra/build.mjs'], { cwd: ROOT })
}

export interface BuiltApp {
  readonly baseUrl: string
  readonly process: Worker
  stop(): Promise<void>
}

/**
 * The built all-in-one (dist/all-in-one.js, what `npm start` runs after building) in a child process on
 * `databaseUrl`, answering on a free port; resolves once /healthz does.
 */
export async function startBuiltApp(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<BuiltApp> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const child = spawnWorker(
    { DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    `${ROOT}dist/all-in-one.js`,
    ['--enable-source-maps'],
  )
  const exited = new Promise<never>((_, reject) =>
    child.process.once('exit', (code) => reject(new Error(`the built app exited (${code}) while starting`))),
  )
  exited.catch(() => {})
  const healthy = waitFor(async () => (await fetch(`${baseUrl}/healthz`).catch(() => undefined))?.ok, {
    timeoutMs: 30_000,
    what: 'the built app to answer /healthz',
  })
  healthy.catch(() => {})
  try {
    await Promise.race([healthy, exited])
  } catch (err) {
    await child.kill()
    throw err
  }
  return { baseUrl, process: child, stop: () => child.kill('SIGTERM') }
}
