/**
 * npx tsx infra/kafka/cli.ts fetch                          download the broker jars (Maven), print version + libs dir
 * npx tsx infra/kafka/cli.ts start [--port N] [--data-dir D] run a broker in the foreground until SIGINT/SIGTERM
 * npx tsx infra/kafka/cli.ts version                        print the pinned Kafka version
 *
 * `start` defaults: port 9092 (0 = any free port), data dir <repo>/.data/kafka (kept between runs).
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureKafkaJars, KAFKA_VERSION, startKafka } from './broker'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const USAGE = `usage: cli.ts fetch | start [--port N] [--data-dir D] | version`

const log = (line: string) => console.error(line)

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'version':
      console.log(KAFKA_VERSION)
      return 0
    case 'fetch': {
      const started = Date.now()
      const { libsDir, version } = await ensureKafkaJars({ log })
      console.log(`version ${version}`)
      console.log(`libs ${libsDir}`)
      log(`(${Date.now() - started} ms)`)
      return 0
    }
    case 'start':
      return start(parseFlags(rest))
    default:
      console.error(USAGE)
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2
  }
}

function parseFlags(args: string[]): { port: number; dataDir: string } {
  let port = 9092
  let dataDir = path.join(REPO_ROOT, '.data', 'kafka')
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]
    const value = args[i + 1]
    if ((flag === '--port' || flag === '--data-dir') && value === undefined) {
      throw new UsageError(`${flag} needs a value`)
    }
    if (flag === '--port') {
      port = Number(value)
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`bad --port ${value}`)
      i++
    } else if (flag === '--data-dir') {
      dataDir = path.resolve(value as string)
      i++
    } else {
      throw new UsageError(`unknown argument ${flag}`)
    }
  }
  return { port, dataDir }
}

async function start(opts: { port: number; dataDir: string }): Promise<number> {
  const broker = await startKafka({ dataDir: opts.dataDir, port: opts.port, log })
  console.log(`KAFKA_BROKERS=${broker.brokers.join(',')}`)
  log(`Apache Kafka ${broker.version}, pid ${broker.pid}, data in ${broker.dataDir}, log ${broker.logFile}`)
  log('Ctrl-C to stop')

  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve(signal))
  })
  const outcome = await Promise.race([
    signalled.then((signal) => ({ signal })),
    broker.exited.then((exit) => ({ exit })),
  ])
  if ('exit' in outcome) {
    log(
      `kafka: broker exited unexpectedly (code ${outcome.exit.code}, signal ${outcome.exit.signal}); see ${broker.logFile}`,
    )
    return 1
  }
  log(`kafka: ${outcome.signal}, stopping`)
  await broker.stop()
  log('kafka: stopped')
  return 0
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(
      err instanceof UsageError ? `${err.message}\n${USAGE}` : err instanceof Error ? err.message : err,
    )
    process.exit(err instanceof UsageError ? 2 : 1)
  },
)
