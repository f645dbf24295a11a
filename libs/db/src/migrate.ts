import { existsSync } from 'node:fs'
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

async function applyWith(dbClient: pg.Client, opts: MigrateOptions) {
  const applied = await runner({
    dbClient,
    dir: opts.dir ?? migrationsDir(),
    direction: opts.direction ?? 'up',
    ...(opts.count === undefined ? {} : { count: opts.count }),
    migrationsTable: 'pgmigrations',
    singleTransaction: true,
    advisoryLockMode: 'wait',
    log: opts.log ?? (() => {}),
  })
  return applied.map((m) => m.name)
}
