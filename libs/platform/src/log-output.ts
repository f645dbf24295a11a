import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino'

/**
 * Standard output for a pino logger, as pino's own default (asynchronous, flushed when the process exits),
 * except that it stops writing once the output is gone for good. Pino does so on EPIPE (a closed pipe) but
 * not on EIO, what every write to a terminal that was closed (hung up) fails with: there the error was thrown
 * at the first line logged, and sonic-boom's flush at exit then retried the line for ever, so that a service
 * whose terminal was closed never exited, nor stopped its embedded Postgres.
 */
export function logOutput(): DestinationStream {
  const stream = pino.destination({ fd: process.stdout.fd ?? 1, sync: false })
  stream.on('error', (err: NodeJS.ErrnoException) => {
    // EPIPE: pino's own listener, called before this one, has stopped the stream already.
    if (err.code === 'EPIPE') return
    // Anything else ends the process, as it does without this listener.
    if (err.code !== 'EIO') throw err
    stream.write = () => true
    stream.flushSync = () => {}
    stream.end = () => {}
  })
  return stream
}

/**
 * An operator CLI's logger (replay, reanalyze, dead-letters, journal-conflicts, republish): at `level`, the
 * configuration's LOG_LEVEL, except that its default, info, becomes warn, so that the start-up lines the
 * services log do not bury what the CLI prints. Written to logOutput(), as the services' logs are: a CLI
 * whose terminal was closed while it ran logs on its way out (leaving the embedded Postgres), and on pino's
 * default output that first line failed with EIO and was retried for ever, so that the CLI never exited.
 */
export function cliLog(level: LevelWithSilent): Logger {
  return pino({ level: level === 'info' ? 'warn' : level }, logOutput())
}
