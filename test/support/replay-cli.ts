import { spawn, spawnSync } from 'node:child_process'

/**
 * `npm run replay -- <args>` as an operator runs it (journal mode), on the database at `databaseUrl` when given;
 * waits for it to end (at most a minute) and returns its status and output.
 */
export function runReplayCli(args: readonly string[], databaseUrl?: string) {
  return spawnSync(process.execPath, [...REPLAY_CLI, ...args], {
    env: replayEnv(databaseUrl),
    encoding: 'utf8',
    timeout: 60_000,
  })
}

/** `runReplayCli`, running beside the test: resolves with its status and output once it has ended. */
export function startReplayCli(
  args: readonly string[],
  databaseUrl: string,
  /** More of its environment (PGOPTIONS, say, for its Postgres sessions' settings). */
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...REPLAY_CLI, ...args], {
    env: { ...replayEnv(databaseUrl), ...env },
    timeout: 60_000,
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

const REPLAY_CLI = ['--import', 'tsx', 'services/projector/src/replay-cli.ts']

function replayEnv(databaseUrl: string | undefined): NodeJS.ProcessEnv {
  return databaseUrl === undefined
    ? process.env
    : { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', KAFKA_BROKERS: '' }
}
