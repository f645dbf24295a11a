import os from 'node:os'
import { type Infrastructure, openInfrastructure } from './infrastructure.ts'

/** Node's and PostgreSQL's ways of saying the server is not there or will not let this user in. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNRESET',
])
const CONNECTION_SQLSTATES = /^(08|28)|^3D000$|^57P03$/

/**
 * An operator CLI's infrastructure (journal-conflicts, dead-letters, replay, republish, reanalyze): as
 * openInfrastructure opens it, but a failure ends the process with one line on stderr and exit code 1, not
 * Node's stack trace of an unhandled rejection. Returns only once open.
 *
 * SIGINT (Ctrl-C), SIGTERM or SIGHUP (its terminal closed) ends the CLI as the signal would (exit code 128 +
 * its number), once it has left the embedded Postgres: stopped it, or handed it over to another process of ours
 * using it (npm start), or, a user of it, unregistered. Ended by the signal itself, it left the server (in a process
 * group of its own) running for nobody. A signal while it opens is acted on once open; a second one ends
 * it at once (exit code 1).
 */
export async function openCliInfrastructure(
  config: Parameters<typeof openInfrastructure>[0],
  log: Parameters<typeof openInfrastructure>[1],
  command: string,
): Promise<Infrastructure> {
  let infra: Infrastructure | undefined
  let interrupted: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(1)
    interrupted = signal
    if (infra) void leaveOn(signal, infra, command)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  process.on('SIGHUP', onSignal)
  try {
    infra = await openInfrastructure(config, log, command)
  } catch (err) {
    console.error(cliFailureLine(command, err, config.DATABASE_URL))
    process.exit(1)
  }
  if (interrupted) await leaveOn(interrupted, infra, command)
  return infra
}

async function leaveOn(signal: NodeJS.Signals, infra: Infrastructure, command: string): Promise<never> {
  try {
    await infra.leaveEmbeddedPostgres?.()
  } catch (err) {
    console.error(`${command}: ${oneLine(err)}`)
  }
  process.exit(128 + os.constants.signals[signal])
}

/**
 * The one line a CLI says when its infrastructure cannot be opened: a database that cannot be reached is
 * named by host, port and database (never its user or password); any other failure by its message.
 */
export function cliFailureLine(command: string, err: unknown, databaseUrl: string | undefined): string {
  const message = oneLine(err)
  if (databaseUrl && isConnectionFailure(err)) {
    return `${command}: cannot reach the database ${databaseWhere(databaseUrl)} (DATABASE_URL): ${message}`
  }
  return `${command}: ${message}`
}

/** host:port/database of a connection URL, for a message: the user and password are left out. */
export function databaseWhere(url: string): string {
  try {
    const parsed = new URL(url)
    // host= (a Unix socket directory, as pg reads it) wins over the URL's host.
    const host = `${parsed.searchParams.get('host') ?? (parsed.hostname || 'localhost')}:${parsed.port || '5432'}`
    return `${host}${parsed.pathname.length > 1 ? parsed.pathname : ''}`
  } catch {
    return '(a DATABASE_URL that is not a URL)'
  }
}

function isConnectionFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || CONNECTION_SQLSTATES.test(code))) return true
  // Node gives an AggregateError (one per address tried) for a host name with several addresses.
  return err instanceof AggregateError && err.errors.some(isConnectionFailure)
}

function oneLine(err: unknown): string {
  const inner = err instanceof AggregateError && !err.message ? err.errors[0] : err
  const text = inner instanceof Error ? inner.message : String(inner)
  const code = (inner as { code?: unknown } | undefined)?.code
  return (text || (typeof code === 'string' ? code : 'failed')).split('\n', 1)[0]!.trim()
}
