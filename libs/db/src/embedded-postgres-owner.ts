import { existsSync, readFileSync } from 'node:fs'
import { rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'
import { isAlive } from './embedded-postgres-users.ts'

export function readOwner(dataDir: string): number | undefined {
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
export function postmasterOf(dataDir: string): { readonly pid: number; readonly port: number } | undefined {
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
export async function writeOwner(dataDir: string, owner = process.pid): Promise<void> {
  const file = ownerFileOf(dataDir)
  const partial = `${file}.${process.pid}.tmp`
  await writeFile(partial, `${owner}\n`, { mode: 0o600 })
  await rename(partial, file)
}

/** Removes the owner file if it still names this process (another start may have written its own since). */
export async function forgetOwner(dataDir: string): Promise<void> {
  if (readOwner(dataDir) === process.pid) await rm(ownerFileOf(dataDir), { force: true })
}

/**
 * After a start that failed: the owner file, if it still names this process, names the process whose
 * child the server running on `dataDir` is (another start won the race for the cluster: Postgres lets one
 * postmaster run), or is removed when none runs. Removed in either case, the winner's file was gone (its
 * server, if its owner were then killed, never found orphaned); left, it named the loser.
 */
export async function leaveOwner(dataDir: string): Promise<void> {
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
