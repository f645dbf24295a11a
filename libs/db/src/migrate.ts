import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runner } from 'node-pg-migrate'
import pg from 'pg'
import { explainPermissionDenied } from './privileges.ts'

/**
 * The repository's `migrations/` directory (numbered SQL files with `-- Up Migration` / `-- Down Migration`),
 * found by walking up from this file so that it resolves both from the sources and from a `dist/` bundle.
 */
export function migrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = path.join(dir, 'migrations')
    if (existsSync(path.join(candidate, '0001_event-journal.sql'))) return candidate
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`migrations/ not found above ${fileURLToPath(import.meta.url)}`)
    dir = parent
  }
}

/**
 * Applies every pending migration (or only the next `count`, for tests of a migration against data shaped
 * by the ones before it). Safe to call from several processes at once: node-pg-migrate takes an advisory
 * lock and the others wait for it, then find nothing left to do. `direction: 'down'` undoes the last
 * `count` applied (default one), newest first: each migration's `-- Down Migration` (migrations.int.test.ts).
 */
export async function migrate(databaseUrl: string, opts: MigrateOptions = {}) {
  // Our own connection, ended before we return: node-pg-migrate ends one it opened without waiting for it,
  // so a DROP DATABASE … WITH (FORCE) right after (the tests) could terminate it while it was still open,
  // and the FATAL it then received was an unhandled 'error' event (a CI run on Node 24).
  const client = new pg.Client({ connectionString: databaseUrl })
  client.on('error', () => {})
  await client.connect()
  try {
    return await applyWith(client, opts)
  } catch (err) {
    throw explainPermissionDenied(err, 'migrations')
  } finally {
    await client.end()
  }
}

interface MigrateOptions {
  readonly log?: (line: string) => void
  readonly dir?: string
  readonly count?: number
  readonly direction?: 'up' | 'down'
}

/**
 * The database was migrated by a newer version of the service: it holds migrations this version does not
 * have. Its message is one line saying which and what to do; the service prints it as it is and exits.
 */
export class DatabaseFromNewerVersionError extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(
      `this database was migrated by a newer version of the service: it holds ${unknown.length} migration${unknown.length === 1 ? '' : 's'} this version does not have (${unknown.length === 1 ? unknown[0] : `${unknown[0]} … ${unknown.at(-1)}`}). ` +
        'Downgrading is not supported: start the newer version again, or restore the backup taken before the upgrade ' +
        '(docs/operations.md, "Upgrading")',
    )
    this.name = 'DatabaseFromNewerVersionError'
  }
}

/** The migrations the database has applied that `dir` does not hold, in the order they were applied. */
async function unknownApplied(dbClient: pg.Client, dir: string): Promise<string[]> {
  const { rows: table } = await dbClient.query<{ exists: boolean }>(
    "SELECT to_regclass('public.pgmigrations') IS NOT NULL AS exists",
  )
  if (!table[0]?.exists) return []
  const { rows } = await dbClient.query<{ name: string }>('SELECT name FROM public.pgmigrations ORDER BY id')
  const known = new Set(readdirSync(dir).map((file) => path.parse(file).name))
  return rows.map((r) => r.name).filter((name) => !known.has(name))
}

async function applyWith(dbClient: pg.Client, opts: MigrateOptions) {
  const dir = opts.dir ?? migrationsDir()
  // node-pg-migrate compares the applied migrations with the files only as far as the files go, so an older
  // version started on a newer version's database found nothing to do and ran on tables it does not know
  // (trial8: its rebuild set every newer event aside, and its read models lost them). Refused instead.
  if ((opts.direction ?? 'up') === 'up') {
    const unknown = await unknownApplied(dbClient, dir)
    if (unknown.length > 0) throw new DatabaseFromNewerVersionError(unknown)
  }
  const applied = await runner({
    dbClient,
    dir,
    direction: opts.direction ?? 'up',
    ...(opts.count === undefined ? {} : { count: opts.count }),
    migrationsTable: 'pgmigrations',
    singleTransaction: true,
    advisoryLockMode: 'wait',
    log: opts.log ?? (() => {}),
  })
  return applied.map((m) => m.name)
}
