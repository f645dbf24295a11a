import { type Config, ConfigError, loadConfig } from '@cas/config'
import { type Logger, pino } from 'pino'

export interface RunningService {
  /** Stops accepting work, finishes what is in flight, and releases everything. */
  close(): Promise<void>
}

const SHUTDOWN_TIMEOUT_MS = 30_000

/**
 * The body of every service's main.ts: parses the config once, makes the logger, starts the service, and
 * shuts it down gracefully on SIGTERM/SIGINT (a second signal, or a hung shutdown, exits at once).
 */
export async function runService(
  name: string,
  start: (config: Config, log: Logger) => Promise<RunningService>,
): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    console.error(err.message)
    process.exit(78)
  }
  const log = pino({ name, level: config.LOG_LEVEL })
  let service: RunningService
  try {
    service = await start(config, log)
  } catch (err) {
    log.fatal({ err }, 'failed to start')
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
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
}

export type { Logger }
