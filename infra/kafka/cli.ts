/**
 * npx tsx infra/kafka/cli.ts fetch                          download the broker jars (Maven), print version + libs dir
 * npx tsx infra/kafka/cli.ts start [--port N] [--data-dir D] run a broker in the foreground until SIGINT/SIGTERM
 * npx tsx infra/kafka/cli.ts start --nodes 3 [--data-dir D]  a three-node KRaft cluster instead (free ports)
 * npx tsx infra/kafka/cli.ts version                        print the pinned Kafka version
 *
 * `start` defaults: port 9092 (0 = any free port), data dir <repo>/.data/kafka (kept between runs); with
 * --nodes, data dir <repo>/.data/kafka-cluster.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureKafkaJars, KAFKA_VERSION, startKafka, startKafkaCluster } from './broker'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const USAGE = `usage: cli.ts fetch | start [--port N | --nodes N] [--data-dir D] | version`

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

interface StartFlags {
  port: number
  /** Undefined: one broker; a number: a cluster of that many nodes. */
  nodes: number | undefined
  dataDir: string
}

function parseFlags(args: string[]): StartFlags {
  let port = 9092
  let nodes: number | undefined
  let dataDir: string | undefined
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]
    const value = args[i + 1]
    if ((flag === '--port' || flag === '--data-dir' || flag === '--nodes') && value === undefined) {
      throw new UsageError(`${flag} needs a value`)
    }
    if (flag === '--port') {
      port = Number(value)
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`bad --port ${value}`)
      i++
    } else if (flag === '--nodes') {
      nodes = Number(value)
      if (!Number.isInteger(nodes) || nodes < 1 || nodes > 9) throw new UsageError(`bad --nodes ${value}`)
      i++
    } else if (flag === '--data-dir') {
      dataDir = path.resolve(value as string)
      i++
    } else {
      throw new UsageError(`unknown argument ${flag}`)
    }
  }
  const defaultDir = path.join(REPO_ROOT, '.data', nodes === undefined ? 'kafka' : 'kafka-cluster')
  return { port, nodes, dataDir: dataDir ?? defaultDir }
}

async function start(opts: StartFlags): Promise<number> {
  let stop: () => Promise<void>
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  if (opts.nodes === undefined) {
    const broker = await startKafka({ dataDir: opts.dataDir, port: opts.port, log })
    console.log(`KAFKA_BROKERS=${broker.brokers.join(',')}`)
    log(`Apache Kafka ${broker.version}, pid ${broker.pid}, data in ${broker.dataDir}, log ${broker.logFile}`)
    stop = broker.stop
    exited = broker.exited
  } else {
    const cluster = await startKafkaCluster({ dataDir: opts.dataDir, nodes: opts.nodes, log })
    console.log(`KAFKA_BROKERS=${cluster.brokers.join(',')}`)
    log(`Apache Kafka ${cluster.version}, ${cluster.nodes.length} nodes, data in ${cluster.dataDir}`)
    stop = cluster.stop
    // Any node exiting on its own ends the foreground run.
    exited = new Promise((resolve) => {
      const check = setInterval(() => {
        if (cluster.nodes.some((n) => !n.running)) {
          clearInterval(check)
          resolve({ code: null, signal: null })
        }
      }, 500)
    })
  }
  log('Ctrl-C to stop')

  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve(signal))
  })
  const outcome = await Promise.race([
    signalled.then((signal) => ({ signal })),
    exited.then((exit) => ({ exit })),
  ])
  if ('exit' in outcome) {
    log(
      `kafka: a broker exited unexpectedly (code ${outcome.exit.code}, signal ${outcome.exit.signal}); see its server.log under ${opts.dataDir}`,
    )
    await stop()
    return 1
  }
  log(`kafka: ${outcome.signal}, stopping`)
  await stop()
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
