/**
 * Runs a real Apache Kafka broker (KRaft, one combined broker+controller node) from the official jars on Maven
 * Central, without Docker. Used by tests (global setup) and local runs (`npm run kafka -- start`).
 * startKafkaCluster runs several such nodes as one cluster, for fault tests.
 *
 *   const kafka = await startKafka({ dataDir })   // kafka.brokers -> ['127.0.0.1:<port>']
 *   await kafka.stop()                            // SIGTERM, clean shutdown; data stays in dataDir
 *   await startKafka({ dataDir, port: kafka.port }) // same data, same address
 *
 * Needs Java 17+ and Maven (`mvn`) on PATH; jars are cached in <repo>/.cache/kafka/<version>/libs.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Kafka, logLevel } from 'kafkajs'

/** Pinned broker version; infra/kafka/pom.xml and infra/docker-compose.yml use the same. See README.md. */
export const KAFKA_VERSION = '4.3.1'

const MODULE_DIR = path.dirname(fileURLToPath(import.meta.url))
const POM = path.join(MODULE_DIR, 'pom.xml')
const DEFAULT_REPO_ROOT = path.resolve(MODULE_DIR, '..', '..')
/** Written into libs/ once Maven has copied every jar; libs/ is renamed into place atomically with it. */
const COMPLETE_MARKER = '.complete'
const SINGLE_NODE_ID = 1
const READY_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 30_000

type Log = (line: string) => void

export interface EnsureKafkaJarsOptions {
  /** Where `.cache/kafka/<version>/libs` lives. Default: this repository's root. */
  repoRoot?: string
  log?: Log
}

/** Resolves the broker's runtime classpath with Maven (cached; a warm call only checks a marker file). */
export async function ensureKafkaJars(
  opts: EnsureKafkaJarsOptions = {},
): Promise<{ libsDir: string; version: string }> {
  const log = opts.log ?? (() => {})
  const versionDir = path.join(
    path.resolve(opts.repoRoot ?? DEFAULT_REPO_ROOT),
    '.cache',
    'kafka',
    KAFKA_VERSION,
  )
  const libsDir = path.join(versionDir, 'libs')
  const marker = path.join(libsDir, COMPLETE_MARKER)
  if (fs.existsSync(marker)) return { libsDir, version: KAFKA_VERSION }

  fs.mkdirSync(versionDir, { recursive: true })
  const tmpDir = path.join(versionDir, `libs.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
  log(`kafka: resolving Apache Kafka ${KAFKA_VERSION} jars from Maven Central into ${libsDir}`)
  try {
    const args = [
      '-B',
      '-q',
      '-f',
      POM,
      `-Dkafka.version=${KAFKA_VERSION}`,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${tmpDir}`,
    ]
    const result = await run('mvn', args)
    if (result.code !== 0) {
      throw new Error(
        `kafka: 'mvn ${args.join(' ')}' failed (exit ${result.code}):\n${tail(result.output, 40)}`,
      )
    }
    const jars = fs.readdirSync(tmpDir).filter((f) => f.endsWith('.jar'))
    if (!jars.some((f) => f.startsWith(`kafka_2.13-${KAFKA_VERSION}`))) {
      throw new Error(`kafka: Maven finished but ${tmpDir} has no kafka_2.13-${KAFKA_VERSION}.jar`)
    }
    fs.writeFileSync(path.join(tmpDir, COMPLETE_MARKER), `${jars.sort().join('\n')}\n`)
    try {
      fs.renameSync(tmpDir, libsDir)
    } catch (err) {
      // Renaming onto a non-empty libs/ fails. Complete: another process finished first, use theirs.
      // Incomplete (no marker): a leftover; move it aside (never delete a dir someone may be using) and retry.
      if (!fs.existsSync(marker)) {
        if (!fs.existsSync(libsDir)) throw err
        const stale = `${tmpDir}.stale`
        fs.renameSync(libsDir, stale)
        fs.rmSync(stale, { recursive: true, force: true })
        fs.renameSync(tmpDir, libsDir)
      }
    }
    log(`kafka: ${jars.length} jars ready`)
    return { libsDir, version: KAFKA_VERSION }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (err as NodeJS.ErrnoException).path === 'mvn') {
      throw new Error(
        'kafka: Maven (mvn) is not on PATH; install Maven 3.8+ and Java 17+ to run Kafka locally',
      )
    }
    throw err
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true })
  }
}

export interface StartKafkaOptions {
  /** Holds config, KRaft storage (data/) and broker logs (logs/). Reusing it restarts the same broker. */
  dataDir: string
  /** Client (PLAINTEXT) port on 127.0.0.1. 0 or undefined = pick a free one. */
  port?: number
  /** KRaft controller port on 127.0.0.1. Undefined = the one this dataDir used before, else a free one. */
  controllerPort?: number
  log?: Log
  /** JVM max heap in MB (default 512). */
  heapMb?: number
  /** Extra JVM flags, appended after ours (so they win), e.g. ['-XX:TieredStopAtLevel=1']. */
  jvmArgs?: string[]
  /** Where the jar cache lives (see ensureKafkaJars). */
  repoRoot?: string
}

export interface KafkaBroker {
  brokers: string[]
  port: number
  controllerPort: number
  version: string
  dataDir: string
  /** The broker's log4j log (server.log); JVM stdout/stderr go to broker.out beside it. */
  logFile: string
  pid: number
  /** Settles when the JVM exits, for whatever reason. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGTERM (clean shutdown), wait for exit, SIGKILL after a timeout. Idempotent. */
  stop(): Promise<void>
  /** SIGKILL and wait for exit: a crash, for fault tests. */
  kill(): Promise<void>
}

interface BrokerState {
  version: string
  clusterId: string
  port: number
  controllerPort: number
}

/** Starts a broker and resolves once it answers DescribeCluster with itself unfenced. */
export async function startKafka(opts: StartKafkaOptions): Promise<KafkaBroker> {
  const log = opts.log ?? (() => {})
  const { libsDir } = await ensureKafkaJars({ repoRoot: opts.repoRoot, log })
  const dataDir = path.resolve(opts.dataDir)
  // A port picked here may be taken by someone else before the JVM binds it: then pick again.
  const attempts = opts.port ? 1 : 3
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts, libsDir, dataDir, log)
    } catch (err) {
      const portTaken = err instanceof Error && /Address already in use/.test(err.message)
      if (attempt >= attempts || !portTaken) throw err
      log(`kafka: port taken before the broker could bind it, retrying (${attempt}/${attempts})`)
    }
  }
}

export interface StartKafkaClusterOptions {
  /** Node n keeps its config, storage and logs in `<dataDir>/node-<n>`; reusing it restarts the same cluster. */
  dataDir: string
  /** How many nodes, each a combined broker and KRaft controller voter (default 3). */
  nodes?: number
  /** JVM max heap per node in MB (default 256). */
  heapMb?: number
  jvmArgs?: string[]
  log?: Log
  repoRoot?: string
}

export interface KafkaClusterNode {
  readonly nodeId: number
  readonly port: number
  readonly controllerPort: number
  readonly dataDir: string
  readonly logFile: string
  /** Whether this node's JVM is running (from its last start until it exits). */
  readonly running: boolean
  /** The JVM's pid since the last start. */
  readonly pid: number
  /** SIGKILL and wait for exit: a crash. */
  kill(): Promise<void>
  /** SIGTERM (controlled shutdown), wait for exit. */
  stop(): Promise<void>
  /** Starts the node again (same data, same ports); resolves once the cluster lists it unfenced. */
  start(): Promise<void>
}

export interface KafkaCluster {
  /** Bootstrap servers: every node. */
  readonly brokers: string[]
  readonly nodes: readonly KafkaClusterNode[]
  readonly version: string
  readonly dataDir: string
  node(nodeId: number): KafkaClusterNode
  /** Stops every running node (SIGTERM, SIGKILL after a timeout). */
  stop(): Promise<void>
}

interface ClusterState {
  version: string
  clusterId: string
  nodes: { nodeId: number; port: number; controllerPort: number }[]
}

/**
 * Starts a KRaft cluster of `nodes` nodes on loopback, each a combined broker and controller (a static
 * voter set of all of them), from the same jars as startKafka. Topics are replicated min(nodes, 3) times
 * by default, and with three nodes or more `min.insync.replicas` is 2: an acks=all write is then on two
 * brokers before it is acknowledged, and unclean leader election stays off. Resolves once every node is
 * registered and unfenced. For fault tests: kill a node (the leader of a partition), start it again.
 */
export async function startKafkaCluster(opts: StartKafkaClusterOptions): Promise<KafkaCluster> {
  const log = opts.log ?? (() => {})
  const { libsDir } = await ensureKafkaJars({ repoRoot: opts.repoRoot, log })
  const dataDir = path.resolve(opts.dataDir)
  fs.mkdirSync(dataDir, { recursive: true })
  const count = opts.nodes ?? 3
  if (!Number.isInteger(count) || count < 1) throw new Error(`kafka: bad node count ${count}`)
  const statePath = path.join(dataDir, 'kafka-cluster.json')
  const previous = (() => {
    try {
      return JSON.parse(fs.readFileSync(statePath, 'utf8')) as ClusterState
    } catch {
      return undefined
    }
  })()
  let state: ClusterState
  if (previous && previous.nodes.length === count) {
    state = previous
  } else {
    const taken = new Set<number>()
    const pick = async () => {
      for (;;) {
        const port = await freePort()
        if (!taken.has(port)) {
          taken.add(port)
          return port
        }
      }
    }
    const nodes = []
    for (let nodeId = 1; nodeId <= count; nodeId++) {
      nodes.push({ nodeId, port: await pick(), controllerPort: await pick() })
    }
    state = { version: KAFKA_VERSION, clusterId: randomClusterId(), nodes }
  }
  fs.writeFileSync(statePath, `${JSON.stringify(state, null, 2)}\n`)
  const voters = state.nodes.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(',')
  const allIds = state.nodes.map((n) => n.nodeId)

  const nodes = state.nodes.map((n) => {
    const spec: NodeSpec = {
      ...n,
      voters,
      nodes: count,
      clusterId: state.clusterId,
      dataDir: path.join(dataDir, `node-${n.nodeId}`),
      heapMb: opts.heapMb ?? 256,
      jvmArgs: opts.jvmArgs ?? [],
    }
    let launched: LaunchedNode | undefined
    let running = false
    const launch = async () => {
      if (running) throw new Error(`kafka: node ${n.nodeId} is already running`)
      launched = await launchNode(spec, libsDir, log)
      running = true
      void launched.exited.then(() => {
        running = false
      })
      return launched
    }
    const node: KafkaClusterNode & { launch: typeof launch; launched: () => LaunchedNode | undefined } = {
      nodeId: n.nodeId,
      port: n.port,
      controllerPort: n.controllerPort,
      dataDir: spec.dataDir,
      logFile: path.join(spec.dataDir, 'logs', 'server.log'),
      get running() {
        return running
      },
      get pid() {
        return launched?.pid ?? -1
      },
      kill: async () => launched?.kill(),
      stop: async () => launched?.stop(),
      async start() {
        const l = await launch()
        await l.ready(allIds)
      },
      launch,
      launched: () => launched,
    }
    return node
  })

  const stopAll = async () => {
    await Promise.all(nodes.map((n) => n.stop()))
  }
  try {
    // All at once: no node can finish starting before a majority of the controller quorum is up.
    const launched = await Promise.all(nodes.map((n) => n.launch()))
    await Promise.all(launched.map((l) => l.ready(allIds)))
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill()))
    throw err
  }
  return {
    brokers: state.nodes.map((n) => `127.0.0.1:${n.port}`),
    nodes,
    version: KAFKA_VERSION,
    dataDir,
    node(nodeId) {
      const found = nodes.find((n) => n.nodeId === nodeId)
      if (!found) throw new Error(`kafka: no node ${nodeId} in this cluster`)
      return found
    },
    stop: stopAll,
  }
}

async function startOnce(opts: StartKafkaOptions, libsDir: string, dataDir: string, log: Log) {
  fs.mkdirSync(dataDir, { recursive: true })
  const statePath = path.join(dataDir, 'kafka-broker.json')
  const previous = readState(statePath)
  const port = opts.port || (await freePort())
  const controllerPort =
    opts.controllerPort ||
    (previous && previous.controllerPort !== port && (await isFree(previous.controllerPort))
      ? previous.controllerPort
      : await freePort(port))

  const formatted = fs.existsSync(path.join(dataDir, 'data', 'meta.properties'))
  const clusterId = formatted && previous ? previous.clusterId : randomClusterId()
  const state: BrokerState = { version: KAFKA_VERSION, clusterId, port, controllerPort }
  fs.writeFileSync(statePath, `${JSON.stringify(state, null, 2)}\n`)

  const node = await launchNode(
    {
      nodeId: SINGLE_NODE_ID,
      port,
      controllerPort,
      voters: `${SINGLE_NODE_ID}@127.0.0.1:${controllerPort}`,
      nodes: 1,
      clusterId,
      dataDir,
      heapMb: opts.heapMb ?? 512,
      jvmArgs: opts.jvmArgs ?? [],
    },
    libsDir,
    log,
  )
  try {
    await node.ready([SINGLE_NODE_ID])
  } catch (err) {
    await node.kill()
    throw err
  }
  return {
    brokers: node.brokers,
    port,
    controllerPort,
    version: KAFKA_VERSION,
    dataDir,
    logFile: node.logFile,
    pid: node.pid,
    exited: node.exited,
    stop: node.stop,
    kill: node.kill,
  } satisfies KafkaBroker
}

/** One KRaft node (combined broker and controller) of a single-node broker or of a cluster. */
interface NodeSpec {
  nodeId: number
  port: number
  controllerPort: number
  /** controller.quorum.voters: `id@host:port,…` of every node. */
  voters: string
  /** How many nodes the cluster has (sets the replication of internal topics and the default ISR). */
  nodes: number
  clusterId: string
  /** Holds this node's config, KRaft storage (data/) and logs (logs/). */
  dataDir: string
  heapMb: number
  jvmArgs: string[]
}

interface LaunchedNode {
  brokers: string[]
  logFile: string
  pid: number
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves once DescribeCluster, asked of this node, lists all of `nodeIds` (unfenced). */
  ready(nodeIds: number[]): Promise<void>
  stop(): Promise<void>
  kill(): Promise<void>
}

/** Writes the node's config, formats its storage the first time, and starts its JVM. */
async function launchNode(spec: NodeSpec, libsDir: string, log: Log): Promise<LaunchedNode> {
  const { dataDir, port, controllerPort } = spec
  const logsDir = path.join(dataDir, 'logs')
  const storageDir = path.join(dataDir, 'data')
  fs.mkdirSync(logsDir, { recursive: true })
  fs.mkdirSync(storageDir, { recursive: true })
  const formatted = fs.existsSync(path.join(storageDir, 'meta.properties'))

  const propsPath = path.join(dataDir, 'server.properties')
  const log4jPath = path.join(dataDir, 'log4j2.xml')
  const logFile = path.join(logsDir, 'server.log')
  const outFile = path.join(logsDir, 'broker.out')
  fs.writeFileSync(propsPath, serverProperties(spec, storageDir))
  fs.writeFileSync(log4jPath, log4jConfig(logsDir))

  const heapMb = spec.heapMb
  const jvmArgs = [
    `-Xmx${heapMb}m`,
    `-Xms${Math.min(heapMb, 128)}m`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jPath}`,
    `-Dkafka.logs.dir=${logsDir}`,
    ...spec.jvmArgs,
    '-cp',
    path.join(libsDir, '*'),
  ]

  if (!formatted) {
    log(`kafka: formatting KRaft storage in ${storageDir}`)
    const fmt = await run(javaBin(), [
      ...jvmArgs.filter((a) => !a.startsWith('-Xm')),
      '-Xmx256m',
      'kafka.tools.StorageTool',
      'format',
      '--config',
      propsPath,
      '--cluster-id',
      spec.clusterId,
    ])
    if (fmt.code !== 0) {
      throw new Error(`kafka: formatting storage failed (exit ${fmt.code}):\n${tail(fmt.output, 40)}`)
    }
  }

  log(
    `kafka: starting Apache Kafka ${KAFKA_VERSION} node ${spec.nodeId} on 127.0.0.1:${port} (controller ${controllerPort})`,
  )
  const startedAt = Date.now()
  const logFrom = fileSize(logFile)
  const outFrom = fileSize(outFile)
  const out = fs.openSync(outFile, 'a')
  let child: ChildProcess
  try {
    child = spawnJava([...jvmArgs, 'kafka.Kafka', propsPath], out, dataDir)
  } finally {
    fs.closeSync(out)
  }
  const pid = child.pid
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve))
    throw new Error(`kafka: could not start java: ${error.message}`)
  }
  const exited = trackChild(child)
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined
  void exited.then((info) => {
    exitInfo = info
  })

  const logTail = () => {
    const out = readFrom(outFile, outFrom).trim()
    const lines = readFrom(logFile, logFrom).trimEnd().split('\n')
    // ERROR lines with the exception message that follows each (the cause, e.g. 'Address already in use').
    const errors = lines
      .flatMap((l, i) => {
        if (!/^\[[^\]]+\] (ERROR|FATAL) /.test(l)) return []
        const next = lines[i + 1]
        return next && !next.startsWith('[') ? [l, `    ${next}`] : [l]
      })
      .slice(0, 30)
    return [
      out && `--- ${outFile} ---\n${tail(out, 30)}`,
      errors.length > 0 && `--- ${logFile} (errors) ---\n${errors.join('\n')}`,
      `--- ${logFile} (last lines) ---\n${lines.slice(errors.length > 0 ? -10 : -25).join('\n')}`,
    ]
      .filter(Boolean)
      .join('\n')
  }

  const kill = async () => {
    if (!exitInfo) child.kill('SIGKILL')
    await exited
  }
  const stop = async () => {
    if (exitInfo) return
    child.kill('SIGTERM')
    const timedOut = await Promise.race([
      exited.then(() => false),
      delay(STOP_TIMEOUT_MS, true).then(() => true),
    ])
    if (timedOut) {
      log(`kafka: broker pid ${pid} did not stop within ${STOP_TIMEOUT_MS} ms, killing it`)
      await kill()
    }
  }

  const brokers = [`127.0.0.1:${port}`]
  return {
    brokers,
    logFile,
    pid,
    exited,
    stop,
    kill,
    async ready(nodeIds) {
      try {
        await waitUntilReady(brokers, port, nodeIds, () => exitInfo, READY_TIMEOUT_MS)
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${logTail()}`)
      }
      log(
        `kafka: node ${spec.nodeId} ready on ${brokers[0]} after ${Date.now() - startedAt} ms (pid ${pid}, logs in ${logsDir})`,
      )
    },
  }
}

function serverProperties(spec: NodeSpec, storageDir: string): string {
  const { nodeId, port, controllerPort } = spec
  // Internal topics as replicated as the cluster allows; with three nodes or more, acks=all means two copies.
  const replicas = Math.min(spec.nodes, 3)
  const minIsr = spec.nodes >= 3 ? 2 : 1
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': nodeId,
    'controller.quorum.voters': spec.voters,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': storageDir,
    'auto.create.topics.enable': false,
    'delete.topic.enable': true,
    'num.partitions': 4,
    'default.replication.factor': replicas,
    'min.insync.replicas': minIsr,
    // Never elect a replica that may lack acknowledged writes (Kafka's default, stated for the fault tests).
    'unclean.leader.election.enable': false,
    'offsets.topic.replication.factor': replicas,
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
    'transaction.state.log.num.partitions': 4,
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': minIsr,
    // Fast group formation, and short session timeouts allowed for fault tests (the default minimum is 6 s).
    'group.initial.rebalance.delay.ms': 0,
    'group.min.session.timeout.ms': 1000,
    // After a crash (SIGKILL) the restarted broker cannot re-register until its old registration's session
    // expires (DUPLICATE_BROKER_REGISTRATION): 9 s by default, so crash-restart tests would wait that long.
    // In a cluster this is also how soon the controller notices a dead broker and moves its leaderships.
    'broker.session.timeout.ms': 3000,
    'broker.heartbeat.interval.ms': 500,
    // Small footprint: few threads, small cleaner buffer (default 128 MB of heap).
    'num.network.threads': 2,
    'num.io.threads': 4,
    'background.threads': 4,
    'num.recovery.threads.per.data.dir': 1,
    'num.replica.fetchers': 1,
    'log.cleaner.threads': 1,
    'log.cleaner.dedupe.buffer.size': 8 * 1024 * 1024,
  }
  const lines = Object.entries(props).map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
  return `# Written by infra/kafka/broker.ts on every start; edits are overwritten.\n${lines.join('\n')}\n`
}

function log4jConfig(logsDir: string): string {
  const dir = escapeXml(logsDir)
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by infra/kafka/broker.ts on every start. The broker logs here, never to the caller's stdout. -->
<Configuration status="WARN" shutdownHook="disable">
  <Appenders>
    <RollingFile name="server" fileName="${dir}/server.log" filePattern="${dir}/server.log.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <Policies><SizeBasedTriggeringPolicy size="50 MB"/></Policies>
      <DefaultRolloverStrategy max="2"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="kafka.authorizer.logger" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="server"/></Root>
  </Loggers>
</Configuration>
`
}

async function waitUntilReady(
  brokers: string[],
  port: number,
  nodeIds: number[],
  exitInfo: () => { code: number | null; signal: NodeJS.Signals | null } | undefined,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  const kafka = new Kafka({
    clientId: 'infra-kafka-readiness',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 5000,
    retry: { retries: 0 },
  })
  let lastError = 'not reachable yet'
  while (Date.now() < deadline) {
    const exit = exitInfo()
    if (exit) {
      throw new Error(`kafka: broker exited during start-up (code ${exit.code}, signal ${exit.signal})`)
    }
    if (await canConnect(port)) {
      const admin = kafka.admin()
      try {
        await admin.connect()
        const cluster = await admin.describeCluster()
        const registered = new Set(cluster.brokers.map((b) => b.nodeId))
        if (nodeIds.every((id) => registered.has(id))) return
        lastError = `brokers registered and unfenced: ${[...registered].join(', ') || 'none'} of ${nodeIds.join(', ')}`
      } catch (err) {
        lastError = (err as Error).message
      } finally {
        await admin.disconnect().catch(() => {})
      }
    }
    await delay(200)
  }
  throw new Error(`kafka: broker not ready after ${timeoutMs} ms (last error: ${lastError})`)
}

// --- child process bookkeeping ---------------------------------------------------------------------------

const liveChildren = new Set<ChildProcess>()
let exitHookInstalled = false

function spawnJava(args: string[], outFd: number, cwd: string): ChildProcess {
  // On Linux, setpriv (util-linux) makes the kernel SIGKILL the JVM if the thread that spawned it dies, even
  // when this process is SIGKILLed or crashes; the 'exit' hook below covers normal exits everywhere.
  const usePdeathsig = process.platform === 'linux' && fs.existsSync(SETPRIV)
  const [command, argv] = usePdeathsig
    ? [SETPRIV, ['--pdeathsig', 'KILL', '--', javaBin(), ...args]]
    : [javaBin(), args]
  const child = spawn(command, argv, { cwd, stdio: ['ignore', outFd, outFd] })
  liveChildren.add(child)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.once('exit', () => {
      for (const c of liveChildren) c.kill('SIGKILL')
    })
  }
  return child
}

const SETPRIV = '/usr/bin/setpriv'

function trackChild(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      liveChildren.delete(child)
      resolve({ code, signal })
    })
  })
}

// --- helpers ---------------------------------------------------------------------------------------------

function javaBin(): string {
  const home = process.env.JAVA_HOME
  return home ? path.join(home, 'bin', 'java') : 'java'
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const chunks: Buffer[] = []
    child.stdout.on('data', (c: Buffer) => chunks.push(c))
    child.stderr.on('data', (c: Buffer) => chunks.push(c))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString('utf8') }))
  })
}

function readState(file: string): BrokerState | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as BrokerState
  } catch {
    return undefined
  }
}

/** A free TCP port on 127.0.0.1 (listen on port 0, read it, close). */
export async function freePort(avoid?: number): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer()
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject()))
      })
    })
    if (port !== avoid) return port
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/** Kafka cluster ids are 16 random bytes, base64url without padding (what `kafka-storage random-uuid` prints). */
/**
 * A KRaft cluster id (16 random bytes, base64url), never starting with '-': the storage tool would read
 * `--cluster-id -…` as another option and fail to format.
 */
function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

/** With `unref`, the timer alone does not keep the process alive (for timeouts raced against a child's exit). */
function delay(ms: number, unref = false): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    if (unref) timer.unref()
  })
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n')
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size
  } catch {
    return 0
  }
}

/** What was appended to `file` since `offset` (at most the last 1 MB of it). */
function readFrom(file: string, offset: number): string {
  try {
    const size = fs.statSync(file).size
    const start = Math.max(offset, size - 1024 * 1024)
    if (size <= start) return ''
    const buf = Buffer.alloc(size - start)
    const fd = fs.openSync(file, 'r')
    try {
      fs.readSync(fd, buf, 0, buf.length, start)
    } finally {
      fs.closeSync(fd)
    }
    return buf.toString('utf8')
  } catch {
    return ''
  }
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

function escapeProperty(s: string): string {
  return s.replace(/\\/g, '\\\\')
}
