import { ConfigError, type ConfigOf, type Group, parseConfig, type ServerConfig, server } from '@cas/config'
import { DatabaseFromNewerVersionError, EmbeddedPostgresError } from '@cas/db'
import { type Logger, pino } from 'pino'
import { withChosenDataDir } from './data-dir.ts'
import { logOutput } from './log-output.ts'

export interface RunningService {
  /** Stops accepting work, finishes what is in flight, and releases everything. */
  close(): Promise<void>
}

const SHUTDOWN_TIMEOUT_MS = 30_000

/**
 * The body of every service's main.ts: parses its config once (the process group, for the logger and the
 * listener, and the groups the service reads), makes the logger, starts the service, and shuts it down
 * gracefully on SIGTERM, SIGINT or SIGHUP: `close()` stops accepting, finishes what is in flight and
 * commits it, then releases everything; the process exits 0. A second signal, or a shutdown still
 * running after 30 s, exits at once with 1.
 */
export async function runService<const Gs extends readonly Group[]>(
  name: string,
  /** The configuration groups the service reads (its src/config.ts): it is given these and no others. */
  groups: Gs,
  start: (config: ConfigOf<Gs> & ServerConfig, log: Logger) => Promise<RunningService>,
): Promise<void> {
  let config: ConfigOf<Gs> & ServerConfig
  try {
    config = parseConfig([server, ...groups], process.env) as ConfigOf<Gs> & ServerConfig
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(err.message)
    process.exit(78)
  }
  const log = pino({ name, level: config.LOG_LEVEL }, logOutput())
  let service: RunningService
  try {
    // As root from a private home, DATA_DIR may move where the embedded Postgres can reach it.
    config = withChosenDataDir(config, process.env, log)
    service = await start(config, log)
  } catch (err) {
    // Its message says why and what to do, in one line: a stack trace would only bury it.
    if (err instanceof EmbeddedPostgresError || err instanceof DatabaseFromNewerVersionError)
      console.error(err.message)
    else log.fatal({ err }, 'failed to start')
    process.exit(1)
  }
  let stopping = false
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    stopping = true
    log.info({ signal }, 'shutting down')
    const timer = setTimeout(() => {
      log.error('shutdown timed out; exiting')
      process.exit(1)
    }, SHUTDOWN_TIMEOUT_MS)
    timer.unref()
    try {
      await service.close()
      log.info('stopped')
      process.exit(0)
    } catch (err) {
      log.error({ err }, 'error during shutdown')
      process.exit(1)
    }
  }
  // This process shuts down its own way: another handler (a library's exit hook) would exit at once,
  // mid-request (service.close() stops the embedded server too, after everything that uses it).
  // SIGHUP: the terminal running it (npm start) was closed. Ended by it, the process would leave its embedded
  // Postgres (in a process group of its own) running for nobody until the next start stopped it.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.removeAllListeners(signal)
    process.on(signal, shutdown)
  }
}

export type { Logger }
