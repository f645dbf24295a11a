import { chmod, mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/**
 * A data directory for a test's own embedded Postgres: `<scratch>/postgres` in a new directory named from
 * `prefix`, which is pushed onto `scratch` for the test file to remove after each test.
 */
export async function embeddedDataDir(prefix: string, scratch: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  scratch.push(dir)
  // As root the server runs as the user postgres, which must enter the directory (mkdtemp makes it 700).
  await chmod(dir, 0o755)
  return path.join(dir, 'postgres')
}

/**
 * A stop held at startEmbeddedPostgres's `holdStop`: `hasLooked` resolves once the stop has looked for the
 * processes using the server, and the stop goes on when the test calls `release()`.
 */
export function heldStop(): { holdStop: () => Promise<void>; hasLooked: Promise<void>; release: () => void } {
  let looked = () => {}
  const hasLooked = new Promise<void>((resolve) => {
    looked = resolve
  })
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  const holdStop = async () => {
    looked()
    await released
  }
  return { holdStop, hasLooked, release }
}

/** Whether process `pid` runs (a postmaster, or a process of ours a test started). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
