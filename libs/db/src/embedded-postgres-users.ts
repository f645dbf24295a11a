import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'

/**
 * `<dataDir>.users/`: one empty file a process of ours that uses the embedded server another process
 * started (`npm start` while a CLI runs it), named by its pid. The owner hands its server over to one of
 * them rather than stop it when it leaves (startEmbeddedPostgres's stop).
 */
function usersDirOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.users`
}

/** Registers this process as a user of the server on `dataDir`; the returned function unregisters it. */
export async function registerUser(dataDir: string): Promise<() => Promise<void>> {
  const dir = usersDirOf(dataDir)
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err
  })
  const file = path.join(dir, String(process.pid))
  await writeFile(file, '', { mode: 0o600 })
  return () => rm(file, { force: true })
}

/** The pids of the processes registered as users that still run, other than this one. */
export function liveUsers(dataDir: string): number[] {
  let names: string[]
  try {
    names = readdirSync(usersDirOf(dataDir))
  } catch {
    return []
  }
  return names
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid !== process.pid && isAlive(pid))
    .sort((a, b) => a - b)
}

/**
 * `<dataDir>.leaving`: names the process that is stopping the server or handing it over (its owner
 * leaving), from before it looks for users until it is done. It closes a race with a process starting to
 * use the server: a user registers, then reads this file; the owner writes it, then reads the users. So
 * either the owner sees the user (and hands the server over to it) or the user sees the file and waits
 * for it to go before it looks at the server (gone then, it starts its own). Only the user waits, and
 * only for a process that runs: a file left by an owner killed while leaving holds nothing up.
 */
function leavingFileOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.leaving`
}

/**
 * Runs `leave` (stop or hand over the server this process owns) announced in the leaving file: this
 * process's pid and, where /proc shows it, its start time, so that a file left behind (its leaver killed
 * mid-leave) whose pid the system gave to another process since is known as stale, not waited out.
 */
export async function whileLeaving<T>(dataDir: string, leave: () => Promise<T>): Promise<T> {
  const file = leavingFileOf(dataDir)
  const partial = `${file}.${process.pid}.tmp`
  const started = startTimeOf(process.pid)
  await writeFile(partial, `${process.pid}${started === undefined ? '' : ` ${started}`}\n`, { mode: 0o600 })
  await rename(partial, file)
  try {
    return await leave()
  } finally {
    if (leaverOf(dataDir)?.pid === process.pid) await rm(file, { force: true })
  }
}

/**
 * Waits until no other live process is stopping or handing over the server. A leaving file whose pid
 * runs with another start time than the file says is one left behind, its pid given to another process
 * since: not waited for. Without a start time to compare (no /proc, or a file of an older version), such
 * a file is waited out, `timeoutMs` at most.
 */
export async function untilNoneLeaves(dataDir: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const leaver = leaverOf(dataDir)
    if (leaver === undefined || leaver.pid === process.pid || !isAlive(leaver.pid)) return
    if (leaver.started !== undefined) {
      const started = startTimeOf(leaver.pid)
      if (started !== undefined && started !== leaver.started) return
    }
    if (Date.now() > deadline) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function leaverOf(dataDir: string): { pid: number; started: string | undefined } | undefined {
  try {
    const [pid, started] = readFileSync(leavingFileOf(dataDir), 'utf8').trim().split(' ')
    return Number(pid) ? { pid: Number(pid), started } : undefined
  } catch {
    return undefined
  }
}

/**
 * When a process started, in clock ticks since boot (/proc/<pid>/stat's 22nd field): with its pid, it
 * names one process, as a pid alone does not once reused. Undefined without /proc or when it is gone.
 */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The fields after the command name, itself in parentheses and free to hold spaces and parentheses:
    // the 3rd field first.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3]
  } catch {
    return undefined
  }
}

/** Whether a process of that pid runs (a zombie, killed and not yet reaped, does not). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return !existsSync('/proc/self/status')
  }
}
