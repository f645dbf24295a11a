/**
 * The analysis stage alone, on the development sets' conversations (quality/datasets.ts): the jobs a
 * re-analysis queues, analysed by the service's own job runner (claims, analyzer threads with the
 * language model, signals, topic placement, commits with their events) against the embedded Postgres
 * (fsync on), until every job is done. No HTTP, no capture, no projector: what `npm run bench:quality`'s
 * "end-user messages analysed per second" spends in analysis, measured in a minute instead of ten.
 *
 *   npm run bench:analysis [-- --set clinc150|dstc11|both --limit N --threads 1 --concurrency 64
 *                               --greeting-share 0.3 --seed 1 --recluster --counts --statements]
 *
 * Prints the machine, then per set: end-user messages analysed per second, beside the ceiling measured
 * in the same run (the model alone embedding the set's end-user messages, once each, in one thread, in
 * batches as large as it likes) and the ratio to it; the process's CPU per end-user message, and that of
 * its main thread, of each analyzer thread and of Postgres (Linux); each analyzer thread's idle share of
 * the run (its event loop waiting for requests while jobs are queued), the share it had a core, the share
 * it was ready but waited for one (the run queue) and the rest (blocked with work in hand); the
 * database statements per job; what the embedded Postgres logged meanwhile (support/postgres-log.ts:
 * deadlocks, a problem, other errors and statements over 100 ms with the three slowest; the whole log in
 * bench/.cache/analysis/postgres.log). `--statements` lists the statements Postgres spent most time on
 * (pg_stat_statements). `--counts` runs the analyzer in the calling thread (ANALYSIS_THREADS=0) to count
 * what the model was asked: texts embedded per end-user message, model calls and their batch sizes; and
 * how many conversations have each signal (exact counts, to compare commits on a busy machine).
 * `--recluster` runs the background re-clustering too, with its default schedule; `--profile <dir>` writes a
 * CPU profile of this thread over each set's analysis.
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import inspector from 'node:inspector'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '@cas/config'
import { createPool, withDatabase } from '@cas/db'
import { EMBEDDED_EVENT_LOG } from '@cas/eventlog'
import type pg from 'pg'
import type { Analyzer } from '../services/analysis/src/analyzer.ts'
import { type AnalysisService, createAnalysisService } from '../services/analysis/src/app.ts'
import { rememberChatbotSettings } from '../services/analysis/src/chatbot-settings.ts'
import { enqueueJobs, type NewJob } from '../services/analysis/src/jobs.ts'
import { createAnalyzer } from '../services/analysis/src/providers/index.ts'
import { createSemanticAnalyzer, type SemanticAnalyzer } from '../services/analysis/src/providers/semantic.ts'
import { reclusterPolicy } from '../services/analysis/src/topics/reclusterer.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { conversationOf, type DevelopmentSet, loadSet, SET_NAMES, type SetName } from './quality/datasets.ts'
import { createBenchDatabase } from './support/in-process.ts'
import { benchKeyring } from './support/keyring.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { postgresLogLines } from './support/postgres-log.ts'
import { busiestThreads, postgresCpuSeconds, threadTimes } from './support/proc-cpu.ts'
import { seededRandom } from './support/random.ts'
import { startBenchServers } from './support/servers.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'both' },
    limit: { type: 'string' },
    threads: { type: 'string', default: '1' },
    concurrency: { type: 'string' },
    /** ANALYSIS_THREAD_NICE (its default, 10, when unset): 0 keeps a shared machine's load from starving the thread. */
    nice: { type: 'string' },
    'greeting-share': { type: 'string', default: '0.3' },
    seed: { type: 'string', default: '1' },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
    recluster: { type: 'boolean', default: false },
    counts: { type: 'boolean', default: false },
    /** Prints the statements Postgres spent most time on over each set's analysis (pg_stat_statements). */
    statements: { type: 'boolean', default: false },
    /** Writes a CPU profile of this thread over the analysis of each set (with --counts: all of it). */
    profile: { type: 'string' },
  },
})
const setNames: SetName[] = values.set === 'both' ? [...SET_NAMES] : [values.set as SetName]
const seed = Number(values.seed)
const threads = values.counts ? '0' : values.threads

const sets = setNames.map((name) =>
  loadSet(name, values.data, { seed, limit: values.limit ? Number(values.limit) : undefined }),
)

const postgresLogFile = path.join(ROOT, 'bench/.cache/analysis/postgres.log')
mkdirSync(path.dirname(postgresLogFile), { recursive: true })
writeFileSync(postgresLogFile, '')
const servers = await startBenchServers({
  name: 'analysis',
  watchPostgresLog: true,
  postgresLog: postgresLogFile,
  ...(values.statements
    ? { postgres: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } }
    : {}),
})
try {
  const pgDataDir = path.join(servers.scratch, 'pg')
  const url = await createBenchDatabase(withDatabase(servers.postgres.url, 'postgres'), 'analysis_bench')
  console.log(machineLine(await machineInfo({ databaseUrl: url })))
  const env = {
    DATABASE_URL: url,
    ANALYSIS_MODEL_DIR: TEST_MODEL_DIR,
    ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB,
    ANALYSIS_THREADS: threads,
    DATA_DIR: path.join(servers.scratch, 'data'),
    ...(values.concurrency ? { ANALYSIS_CONCURRENCY: values.concurrency } : {}),
    ...(values.nice ? { ANALYSIS_THREAD_NICE: values.nice } : {}),
  }
  const config = loadConfig(env)
  console.log(
    `analysis: ${threads} analyzer thread(s) (0: the calling thread, nice ${config.ANALYSIS_THREAD_NICE}), concurrency ${config.ANALYSIS_CONCURRENCY}, re-clustering ${values.recluster ? 'on' : 'off'}`,
  )

  // The ceiling: the model alone, one thread (this one), each end-user text once.
  const ceilingModel = await createSemanticAnalyzer({
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(ROOT, '.cache/models'),
    hubUrl: UNREACHABLE_HUB,
  })
  const ceilings = new Map<SetName, number>()
  for (const set of sets) {
    const texts = [...new Set(conversationsOf(set).flatMap((c) => c.filter((m) => m.role === 'user')))].map(
      (m) => m.content.trim(),
    )
    await ceilingModel.model.embed(texts.slice(0, 64))
    const started = performance.now()
    await ceilingModel.model.embed(texts)
    ceilings.set(set.name, texts.length / ((performance.now() - started) / 1000))
  }

  const source = {
    modelDir: TEST_MODEL_DIR,
    cacheDir: path.join(ROOT, '.cache/models'),
    hubUrl: UNREACHABLE_HUB,
  }
  const inThread = values.counts ? await createSemanticAnalyzer(source) : undefined
  const analyzer: Analyzer = inThread ?? (await createAnalyzer(config))
  await analyzer.ready
  const counts = inThread ? countModelCalls(inThread) : undefined
  const pool = createPool(url, { max: 20, applicationName: 'bench-analysis' })
  if (values.statements) await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  const statements = countStatements(pool)
  for (const set of sets) {
    const chatbotId = randomUUID()
    const orgId = randomUUID()
    await rememberChatbotSettings(pool, chatbotId, {})
    const conversations = conversationsOf(set)
    const userMessages = conversations.flat().filter((m) => m.role === 'user').length
    const started = new Date()
    const jobs: NewJob[] = conversations.map((messages, i) => ({
      sourceEventId: randomUUID(),
      conversationId: randomUUID(),
      orgId,
      chatbotId,
      messages: messages.map((m, position) => ({
        ...m,
        sentAt: new Date(started.getTime() + i * 1000 + position * 100).toISOString(),
      })),
    }))
    await enqueueJobs(pool, jobs, started)
    if (counts) counts.reset()
    const service: AnalysisService = createAnalysisService({
      pool,
      keyring: benchKeyring,
      eventLog: EMBEDDED_EVENT_LOG,
      analyzer,
      logger: false,
      concurrency: config.ANALYSIS_CONCURRENCY,
      ...(values.recluster ? { recluster: reclusterPolicy(config) } : {}),
    })
    statements.reset()
    if (values.statements) await pool.query('SELECT pg_stat_statements_reset()')
    const logMark = servers.postgresLog!.mark()
    const profiler = values.profile ? await startProfile() : undefined
    const threadsBefore = threadTimes()
    const analyzerBefore = await analyzer.threadStats?.()
    const postgresBefore = postgresCpuSeconds(pgDataDir)
    const cpu = process.cpuUsage()
    const t0 = performance.now()
    await service.start()
    for (;;) {
      // The first open job in the claim's index answers (the sets run one after the other: every open job
      // is this set's): a count of thousands of open jobs was 1.1 ms of Postgres every 50 ms, counted as
      // the analysis's; EXISTS read the table, and with the chatbot's id the planner sorted its jobs
      // (FINDINGS "perf450").
      const { rows } = await pool.query<{ open: boolean }>(
        `SELECT count(*) > 0 AS open FROM (SELECT 1 FROM analysis_jobs
          WHERE status IN ('pending', 'running') ORDER BY next_attempt_at, id LIMIT 1) AS first`,
      )
      if (!rows[0]!.open) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const seconds = (performance.now() - t0) / 1000
    const used = process.cpuUsage(cpu)
    const postgresSeconds = postgresCpuSeconds(pgDataDir) - postgresBefore
    const analyzerAfter = await analyzer.threadStats?.()
    const busiest = busiestThreads(threadsBefore, threadTimes())
    if (profiler) await profiler.stop(`${values.profile}/${set.name}.cpuprofile`)
    const queries = statements.count
    const topStatements = values.statements
      ? (
          await pool.query<{ ms: number; calls: number; query: string }>(
            `SELECT total_exec_time::float8 AS ms, calls::int, query FROM pg_stat_statements
              ORDER BY total_exec_time DESC LIMIT 12`,
          )
        ).rows
      : []
    await service.stop()
    // What the signals' rules decided: a rule that fires more often costs events and read-model rows.
    const signalsFound = values.counts
      ? (
          await pool.query<{ name: string; conversations: number }>(
            `SELECT s->>'name' AS name, count(*)::int AS conversations
               FROM analysis_signal_state, jsonb_array_elements(signals) AS s
              WHERE chatbot_id = $1 GROUP BY 1 ORDER BY 1`,
            [chatbotId],
          )
        ).rows
      : []
    const postgresLog = servers.postgresLog!.summarise(logMark)
    const rate = userMessages / seconds
    const ceiling = ceilings.get(set.name)!
    console.log(`\n${set.name}: ${conversations.length} conversations, ${userMessages} end-user messages`)
    console.log(`  end-user messages analysed per second   ${rate.toFixed(0)}`)
    console.log(`  the model alone, one thread (ceiling)    ${ceiling.toFixed(0)} texts/s`)
    console.log(`  ratio to the ceiling                     ${(rate / ceiling).toFixed(2)}`)
    console.log(
      `  process CPU per end-user message         ${((used.user + used.system) / 1000 / userMessages).toFixed(2)} ms (${((used.user + used.system) / 1e6 / seconds).toFixed(2)} cores busy)`,
    )
    const perMessage = (cpuSeconds: number) => `${((cpuSeconds * 1000) / userMessages).toFixed(2)} ms`
    const main = busiest.find((t) => t.main)
    console.log(
      `  CPU per end-user message: main thread    ${main ? perMessage(main.seconds) : '?'}, Postgres ${perMessage(postgresSeconds)} (${(postgresSeconds / seconds).toFixed(2)} cores busy)`,
    )
    for (const [i, after] of (analyzerAfter ?? []).entries()) {
      const before = analyzerBefore![i]!
      const idle = after.idleMs - before.idleMs
      const active = after.activeMs - before.activeMs
      const cpuMs = after.cpuMs === undefined ? undefined : after.cpuMs - before.cpuMs!
      const queued =
        after.runQueueMs === undefined || before.runQueueMs === undefined
          ? undefined
          : after.runQueueMs - before.runQueueMs
      const share = (ms: number | undefined) =>
        ms === undefined ? '?' : ((100 * ms) / (idle + active)).toFixed(0)
      const blocked = cpuMs === undefined || queued === undefined ? undefined : active - cpuMs - queued
      console.log(
        `  analyzer thread ${i + 1}: CPU per message      ${cpuMs === undefined ? '?' : perMessage(cpuMs / 1000)}, idle ${share(idle)} % of the run, on a core ${share(cpuMs)} %, waiting for a core ${share(queued)} %, otherwise blocked ${share(blocked)} %`,
      )
    }
    console.log(
      `  database statements per job              ${(queries / conversations.length).toFixed(1)} (polling included)`,
    )
    console.log(
      `  busiest threads, share of the run busy   ${busiest
        .slice(0, 4)
        .map((t) => `${t.main ? 'main' : t.name} ${(t.seconds / seconds).toFixed(2)}`)
        .join(', ')}`,
    )
    for (const [i, line] of postgresLogLines(postgresLog).entries()) {
      console.log(`  ${i === 0 ? 'Postgres log                             ' : '  '}${line}`)
    }
    for (const s of topStatements) {
      const text = s.query.replace(/\s+/g, ' ').slice(0, 110)
      console.log(
        `  ${(s.ms / userMessages).toFixed(3)} ms/message ${String(s.calls).padStart(6)} calls  ${text}`,
      )
    }
    if (counts) {
      const c = counts.snapshot()
      console.log(`  texts embedded per end-user message      ${(c.texts / userMessages).toFixed(2)}`)
      console.log(
        `  model calls                              ${c.calls} (mean ${(c.texts / c.calls).toFixed(1)} texts)`,
      )
      console.log(
        `  embedTexts calls                         ${c.embedTexts} (${c.embedTextsTexts} texts asked)`,
      )
      console.log(
        `  conversations with each signal           ${signalsFound.map((f) => `${f.name} ${f.conversations}`).join(', ') || 'none'}`,
      )
    }
  }
  await pool.end()
  await analyzer.close?.()
  await ceilingModel.close?.()
} finally {
  await servers.stop()
}

async function startProfile() {
  const session = new inspector.Session()
  session.connect()
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    )
  await post('Profiler.enable')
  await post('Profiler.start')
  return {
    async stop(file: string) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown }
      mkdirSync(path.dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify(profile))
      session.disconnect()
      console.log(`  CPU profile                              ${file}`)
    },
  }
}

function conversationsOf(set: DevelopmentSet) {
  const random = seededRandom(seed + 1)
  return set.requests.map((r, i) =>
    conversationOf(r.text, i, { greetingShare: Number(values['greeting-share']), random }),
  )
}

/** Counts the statements the pool's clients run. */
function countStatements(pool: pg.Pool) {
  const counter = { count: 0, reset: () => (counter.count = 0) }
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    ;(client as { query: unknown }).query = (...args: unknown[]) => {
      counter.count++
      return query(...args)
    }
  })
  return counter
}

/** What the model is asked (the semantic analyzer in the calling thread). */
function countModelCalls(analyzer: SemanticAnalyzer) {
  let calls = 0
  let texts = 0
  let embedTexts = 0
  let embedTextsTexts = 0
  const model = analyzer.model as { embed: (t: readonly string[]) => Promise<Float32Array[]> }
  const embed = model.embed.bind(model)
  model.embed = async (list) => {
    calls++
    texts += list.length
    return embed(list)
  }
  const semantic = analyzer.semantic as { embedTexts: (t: readonly string[]) => Promise<Float32Array[]> }
  const original = semantic.embedTexts
  semantic.embedTexts = async (list) => {
    embedTexts++
    embedTextsTexts += list.length
    return original(list)
  }
  return {
    reset: () => {
      calls = texts = embedTexts = embedTextsTexts = 0
    },
    snapshot: () => ({ calls, texts, embedTexts, embedTextsTexts }),
  }
}
