import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
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
