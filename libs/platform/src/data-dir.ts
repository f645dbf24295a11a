import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { blockedOnTheWayTo, EmbeddedPostgresError, ensurePostgresUser, type SystemUser } from '@cas/db'

/** What decides where the data lives: the parsed database variables. */
export interface DataDirConfig {
  DATA_DIR: string
  DATA_DIR_FALLBACK: string
  DATABASE_URL?: string | undefined
}

export interface DataDirChoice {
  /** The DATA_DIR to use: the configured one, or the fallback. */
  dataDir: string
  /** Set when the fallback was taken: one log line saying where the data lives and how to choose. */
  notice?: string
}

/**
 * Where DATA_DIR is, as root with the default one out of the embedded Postgres's reach.
 *
 * As root the embedded Postgres runs as the system user `postgres`, which must enter every directory
 * down to DATA_DIR. The default DATA_DIR (`.data` in the checkout) is out of its reach when the checkout
 * is under a private directory (a home of mode 700, as /root is); we never loosen a directory's
 * permissions. Then, and only when DATA_DIR was not set, DATABASE_URL is unset (the embedded server
 * runs) and the default holds no data yet, the whole DATA_DIR (master key, downloaded model, Postgres)
 * moves to `DATA_DIR_FALLBACK/<checkout name>-<hash of its path>`: the same directory on every start
 * from that checkout, created mode 711 (the postgres user may pass, nobody may list it).
 *
 * An explicit DATA_DIR is never replaced: it is obeyed, or the embedded server refuses it with one
 * line. A default DATA_DIR that holds data already stays where it is (its master key and cluster are
 * the data): the start then stops with one line, as with an explicit one.
 */
export function chooseDataDir(
  config: DataDirConfig,
  env: Record<string, string | undefined>,
  opts: { isRoot?: boolean; postgresUser?: () => SystemUser } = {},
): DataDirChoice {
  const kept = { dataDir: config.DATA_DIR }
  const isRoot = opts.isRoot ?? process.getuid?.() === 0
  if (env.DATA_DIR || config.DATABASE_URL || !isRoot) return kept
  const defaultDir = config.DATA_DIR
  if (['postgres', 'master.key'].some((f) => existsSync(path.join(defaultDir, f)))) return kept
  const user = (opts.postgresUser ?? ensurePostgresUser)()
  // Root creates what is missing below the nearest existing directory, enterable by everyone (umask 022).
  const blocked = blockedOnTheWayTo(user, nearestExisting(defaultDir))
  if (!blocked) return kept

  const fallback = path.join(path.resolve(config.DATA_DIR_FALLBACK), fallbackName(defaultDir))
  const fallbackBlocked = existsSync(fallback)
    ? blockedOnTheWayTo(user, fallback)
    : blockedOnTheWayTo(user, nearestExisting(fallback))
  if (fallbackBlocked) {
    throw new EmbeddedPostgresError(
      `Cannot start the embedded Postgres: as root it runs as the user ${user.name} (Postgres refuses root), which can enter neither ${blocked} (on the way to the default DATA_DIR ${defaultDir}) nor ${fallbackBlocked} (on the way to ${fallback}, under DATA_DIR_FALLBACK). Set DATA_DIR to a directory that user can reach, run as a non-root user, or set DATABASE_URL.`,
    )
  }
  try {
    makeDirectories(fallback, 0o711)
  } catch (err) {
    throw new EmbeddedPostgresError(
      `Cannot create ${fallback} (${(err as NodeJS.ErrnoException).code}), the data directory used as root when the default DATA_DIR ${defaultDir} is out of the reach of the user ${user.name}: set DATA_DIR to a directory that user can reach, or set DATABASE_URL.`,
    )
  }
  return {
    dataDir: fallback,
    notice: `DATA_DIR is unset and the default ${defaultDir} is out of the reach of the user ${user.name}, which runs the embedded Postgres as root (it cannot enter ${blocked}): the data (Postgres, master key, model) lives in ${fallback}, the same on every start from this checkout; set DATA_DIR to choose another directory`,
  }
}

/**
 * `config` with the DATA_DIR chooseDataDir picks (itself when its groups have no DATA_DIR), the choice
 * logged when it is the fallback. Every process and CLI calls it before using DATA_DIR, so that all of
 * them (npm start, npm run replay, …) agree on it.
 */
export function withChosenDataDir<C extends object>(
  config: C,
  env: Record<string, string | undefined>,
  log: { warn(fields: object, msg: string): void },
): C {
  if (!('DATA_DIR' in config && 'DATA_DIR_FALLBACK' in config)) return config
  const choice = chooseDataDir(config as unknown as DataDirConfig, env)
  if (!choice.notice) return config
  log.warn({ dataDir: choice.dataDir }, choice.notice)
  return { ...config, DATA_DIR: choice.dataDir }
}

/** `<checkout name>-<8 hex digits of the hash of its real path>`: stable, and distinct per checkout. */
export function fallbackName(defaultDataDir: string): string {
  const parent = path.dirname(path.resolve(defaultDataDir))
  const real = existsSync(parent) ? realpathSync(parent) : parent
  const name =
    path
      .basename(real)
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^\.+/, '') || 'checkout'
  const hash = createHash('sha256')
    .update(path.join(real, path.basename(defaultDataDir)))
    .digest('hex')
  return `${name}-${hash.slice(0, 8)}`
}

function nearestExisting(dir: string): string {
  let d = path.resolve(dir)
  while (!existsSync(d) && path.dirname(d) !== d) d = path.dirname(d)
  return d
}

/** mkdir -p, each directory it creates given `mode` whatever the umask; existing ones left as they are. */
function makeDirectories(dir: string, mode: number): void {
  const missing: string[] = []
  for (let d = path.resolve(dir); !existsSync(d); d = path.dirname(d)) missing.unshift(d)
  for (const d of missing) {
    try {
      mkdirSync(d, { mode })
    } catch (err) {
      // Another process (a CLI started at the same time) made it meanwhile: it is as it is.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue
      throw err
    }
    chmodSync(d, mode)
  }
}
