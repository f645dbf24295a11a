import { spawnSync } from 'node:child_process'

/**
 * `npm run replay -- <args>` as an operator runs it (journal mode), on the database at `databaseUrl` when given;
 * waits for it to end (at most a minute) and returns its status and output.
 */
export function runReplayCli(args: readonly string[], databaseUrl?: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'services/projector/src/replay-cli.ts', ...args], {
    env:
      databaseUrl === undefined
        ? process.env
        : { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', KAFKA_BROKERS: '' },
    encoding: 'utf8',
    timeout: 60_000,
  })
}
