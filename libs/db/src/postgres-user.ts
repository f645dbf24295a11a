import { execFileSync, spawnSync } from 'node:child_process'
import { statSync } from 'node:fs'
import path from 'node:path'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'

/** The account Postgres runs as when we are root: Postgres refuses to run as root. */
export interface SystemUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

const NAME = 'postgres'

/** The system user `postgres`, created (a system account, no home, no login) when there is none. */
export function ensurePostgresUser(): SystemUser {
  const existing = lookUp(NAME)
  if (existing) return existing
  const group = spawnSync('getent', ['group', NAME], { stdio: 'ignore' }).status === 0
  let reason = ''
  try {
    execFileSync(
      'useradd',
      [
        '--system',
        '--no-create-home',
        '--shell',
        '/usr/sbin/nologin',
        ...(group ? ['--gid', NAME] : ['--user-group']),
        NAME,
      ],
      { stdio: 'pipe' },
    )
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim()
    reason = stderr.split('\n')[0] || (err as Error).message.split('\n')[0]!
  }
  // Another process may have created it meanwhile.
  const created = lookUp(NAME)
  if (created) return created
  throw new EmbeddedPostgresError(
    `Cannot start the embedded Postgres: it refuses to run as root, and the system user ${NAME} to run it as could not be created (${reason}). Create it (useradd --system ${NAME}), run as a non-root user, or set DATABASE_URL.`,
  )
}

function lookUp(name: string): SystemUser | undefined {
  const id = (flag: string) => spawnSync('id', [flag, name], { encoding: 'utf8' })
  const uid = id('-u')
  const gid = id('-g')
  if (uid.status !== 0 || gid.status !== 0) return undefined
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

const asUser = (user: SystemUser) => ({ uid: user.uid, gid: user.gid, stdio: 'ignore' as const })

/** Whether `user` can execute `binary` (every directory on its way searchable, the file executable). */
export function canRun(user: SystemUser, binary: string): boolean {
  return spawnSync(binary, ['--version'], asUser(user)).status === 0
}

/**
 * The first directory on the way to `dir` (or `dir` itself) that `user` cannot enter, described with its
 * mode and owner, or undefined when it can reach `dir`.
 */
export function blockedOnTheWayTo(user: SystemUser, dir: string): string | undefined {
  const target = path.resolve(dir)
  if (spawnSync('test', ['-x', target], asUser(user)).status === 0) return undefined
  const chain = [target]
  while (path.dirname(chain[0]!) !== chain[0]) chain.unshift(path.dirname(chain[0]!))
  const blocked = chain.find((d) => spawnSync('test', ['-x', d], asUser(user)).status !== 0) ?? target
  const stat = statSync(blocked, { throwIfNoEntry: false })
  if (!stat) return blocked
  return `${blocked} (mode ${(stat.mode & 0o777).toString(8)}, owner uid ${stat.uid})`
}
