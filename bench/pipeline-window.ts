/**
 * Where bench:quality's "analysed" window goes (issues 31 and 32): one development set captured through the
 * API of the built all-in-one with analysis off, then queued as a re-analysis, as bench:quality does
 * (quality/through-api.ts), timed from the queueing until the projector holds every result. Prints the
 * head (to the first commit of results, to their first projection), the steady part (commit groups: how
 * many, how large, how far apart) and the tail (from the analyzer's last commit until projected), and the
 * CPU per end-user message of the service's threads and of Postgres over the window (Linux /proc).
 *
 *   npx tsx bench/pipeline-window.ts [-- --set dstc11 --warm 1500 --poll 50 --dist dist/all-in-one.js
 *                                      --runs 1 --skip-build]
 *
 * `--warm N`: first N CLINC150 requests through the same service (model, threads and Postgres warm, the
 * journal analysed, as when DSTC11 follows CLINC150 in bench:quality), then its re-clustering settled.
 * `--poll`: how often the window's end is looked for, in ms (bench:quality: 50). `--dist`: the bundle to
 * run, to compare two builds in alternating runs. Timings are wall-clock and follow the machine's load; the
 * CPU per message and the counts are the figures to compare.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { withDatabase } from '@cas/db'
import pg from 'pg'
import { enqueueReanalysis } from '../services/analysis/src/reanalyze.ts'
import { TEST_MODEL_DIR, UNREACHABLE_HUB } from '../test/support/model.ts'
import { conversationOf, type DevelopmentSet, loadSet, type SetName } from './quality/datasets.ts'
import { startStatementCount } from './quality/through-api.ts'
import { benchKeyring } from './support/keyring.ts'
import { busiestThreads, postgresCpuSeconds, threadTimes } from './support/proc-cpu.ts'
import { seededRandom } from './support/random.ts'
import { startBenchServers } from './support/servers.ts'
import { createAccount, DIST_ALL_IN_ONE, startService } from './support/service.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'dstc11' },
    warm: { type: 'string', default: '1500' },
    poll: { type: 'string', default: '50' },
    runs: { type: 'string', default: '1' },
    dist: { type: 'string', default: DIST_ALL_IN_ONE },
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
    'skip-build': { type: 'boolean', default: false },
    /** After the runs, this many seconds with nothing to do: the CPU a second of the idle service and Postgres. */
    idle: { type: 'string', default: '0' },
    /** NODE_OPTIONS for the service alone (e.g. V8's heap flags), to compare with and without. */
    'node-options': { type: 'string' },
    /** pg_stat_statements over each window: calls per end-user message by statement, and commits. */
    statements: { type: 'boolean', default: false },
    /**
     * A CPU profile of each of the service's threads (node --cpu-prof) into this directory; each window's
     * start and end are printed on the profiles' clock (CLOCK_MONOTONIC, µs) for bench/profile-window.ts.
     */
    profile: { type: 'string' },
  },
})
const pollMs = Number(values.poll)
const dist = path.resolve(values.dist)
if (dist === DIST_ALL_IN_ONE && (!values['skip-build'] || !existsSync(dist))) {
  execFileSync(process.execPath, ['infra/build.mjs'], { cwd: ROOT, stdio: 'inherit' })
}

interface Sample {
  readonly at: number
  readonly done: number
  readonly projectedMin: bigint
  readonly projectedMax: bigint
}

mkdirSync(path.join(ROOT, 'bench/.cache'), { recursive: true })
const postgresLog = path.join(ROOT, 'bench/.cache/window-postgres.log')
writeFileSync(postgresLog, '')
const servers = await startBenchServers({
  name: 'window',
  postgresLog,
  postgres: {
    // Each autovacuum run logged with its CPU ("system usage"): what of Postgres's CPU in a window is theirs.
    log_autovacuum_min_duration: '0',
    ...(values.statements
      ? {
          shared_preload_libraries: 'pg_stat_statements',
          'pg_stat_statements.track': 'all',
          'pg_stat_statements.track_planning': 'on',
        }
      : {}),
  },
})
try {
  const databaseUrl = withDatabase(servers.postgres.url, 'postgres')
  const service = await startService({
    databaseUrl,
    poolSize: 20,
    entry: dist,
    ...(values.profile ? { cpuProfileDir: path.resolve(values.profile) } : {}),
    env: {
      ANALYSIS_MODEL_DIR: process.env.ANALYSIS_MODEL_DIR ?? TEST_MODEL_DIR,
      ANALYSIS_MODEL_HUB_URL: UNREACHABLE_HUB,
      ANALYSIS_THREADS: '1',
      DATA_DIR: path.join(servers.scratch, 'data'),
      ...(values['node-options'] ? { NODE_OPTIONS: values['node-options'] } : {}),
    },
  })
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  try {
    let analyzer: { state: string; name: string; version: string } | undefined
    for (let tries = 0; analyzer?.state !== 'ready' && tries < 600; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100))
      const ready = (await (await fetch(`${service.url}/readyz`)).json()) as {
        details?: { analyzer?: typeof analyzer }
      }
      analyzer = ready.details?.analyzer
    }
    if (analyzer?.state !== 'ready') throw new Error(`no model: ${JSON.stringify(analyzer)}`)
    const info = { name: analyzer.name, version: analyzer.version }
    const cpu = { pid: service.worker.process.pid!, dataDir: path.join(servers.scratch, 'pg') }
    if (Number(values.warm) > 0) {
      const warm = loadSet('clinc150', values.data, { seed: 1, limit: Number(values.warm) })
      await window(service.url, pool, warm, info, cpu, 'warm')
    }
    for (let run = 0; run < Number(values.runs); run++) {
      const set = loadSet(values.set as SetName, values.data, { seed: 1 })
      await window(service.url, pool, set, info, cpu, `run ${run + 1}`)
    }
    const idleSeconds = Number(values.idle)
    if (idleSeconds > 0) {
      const threadsBefore = threadTimes(cpu.pid)
      const postgresBefore = postgresCpuSeconds(cpu.dataDir)
      const readsBefore = await journalReads(pool)
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000))
      const reads = (await journalReads(pool)) - readsBefore
      const service = busiestThreads(threadsBefore, threadTimes(cpu.pid), cpu.pid).reduce(
        (a, t) => a + t.seconds,
        0,
      )
      const postgres = postgresCpuSeconds(cpu.dataDir) - postgresBefore
      console.log(
        `idle ${idleSeconds} s, load ${loadavg()[0]!.toFixed(2)}: service ${((service / idleSeconds) * 1000).toFixed(1)} ms CPU a second, Postgres ${((postgres / idleSeconds) * 1000).toFixed(1)} ms a second; ${(reads / idleSeconds).toFixed(1)} journal reads a second`,
      )
    }
  } finally {
    await pool.end()
    await service.stop()
  }
} finally {
  await servers.stop()
}

async function window(
  url: string,
  pool: pg.Pool,
  set: DevelopmentSet,
  analyzer: { name: string; version: string },
  cpu: { pid: number; dataDir: string },
  label: string,
) {
  const account = await createAccount(url, `window-${set.name}-${label.replace(' ', '')}`)
  const patched = await fetch(`${url}/api/v1/chatbots/${account.chatbotId}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', cookie: account.cookie },
    body: JSON.stringify({ settings: { analysisEnabled: false } }),
  })
  if (!patched.ok) throw new Error(`turning analysis off answered ${patched.status}`)
  const random = seededRandom(2)
  const conversations = set.requests.map((r, i) => conversationOf(r.text, i, { greetingShare: 0.3, random }))
  const userMessages = conversations.flat().filter((m) => m.role === 'user').length
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < conversations.length; i = next++) {
        const res = await fetch(`${url}/api/v1/capture`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
          body: JSON.stringify({ conversationId: `${set.name}-${i}`, messages: conversations[i] }),
        })
        if (!res.ok) throw new Error(`capture answered ${res.status}`)
      }
    }),
  )
  // As bench:quality: the capture's events projected before the re-analysis is queued is not waited for.
  const startPosition = BigInt(
    (await pool.query<{ p: string }>('SELECT coalesce(max(position), 0)::text AS p FROM event_journal'))
      .rows[0]!.p,
  )
  const load = loadavg()[0]!.toFixed(2)
  const { keys: queued } = await enqueueReanalysis(pool, benchKeyring, {
    chatbotId: account.chatbotId,
    analyzer,
    now: new Date(),
  })
  const counting = values.statements ? await startStatementCount(pool) : undefined
  const kindsBefore = postgresByKind(cpu.dataDir)
  const threadsBefore = threadTimes(cpu.pid)
  const postgresBefore = postgresCpuSeconds(cpu.dataDir)
  const started = Date.now()
  const startedUs = process.hrtime.bigint() / 1000n
  const samples: Sample[] = []
  for (;;) {
    const { rows } = await pool.query<{
      open: boolean
      caught_up: boolean
      done: number
      pmin: string
      pmax: string
    }>(
      `SELECT (SELECT count(*) > 0 FROM (SELECT 1 FROM analysis_jobs WHERE status IN ('pending', 'running')
                 ORDER BY next_attempt_at, id LIMIT 1) AS first) AS open,
              coalesce((SELECT min(last_offset) FROM consumer_checkpoints WHERE group_id = 'projector'), -1)
                >= coalesce((SELECT max(position) FROM event_journal), 0) AS caught_up,
              (SELECT count(*)::int FROM analysis_jobs WHERE chatbot_id = $1 AND status = 'done') AS done,
              (SELECT min(last_offset)::text FROM consumer_checkpoints WHERE group_id = 'projector') AS pmin,
              (SELECT max(last_offset)::text FROM consumer_checkpoints WHERE group_id = 'projector') AS pmax`,
      [account.chatbotId],
    )
    const row = rows[0]!
    samples.push({
      at: Date.now(),
      done: row.done,
      projectedMin: BigInt(row.pmin),
      projectedMax: BigInt(row.pmax),
    })
    if (!row.open && row.caught_up) break
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
  const ended = Date.now()
  const endedUs = process.hrtime.bigint() / 1000n
  const threads = busiestThreads(threadsBefore, threadTimes(cpu.pid), cpu.pid)
  const postgres = postgresCpuSeconds(cpu.dataDir) - postgresBefore
  const kindsAfter = postgresByKind(cpu.dataDir)
  if (counting) {
    const committed = await counting.committed()
    const { rows } = await pool.query<{
      query: string
      calls: string
      total: number
      plan: number
      rows: string
      blocks: string
      dirtied: string
      wal: string
    }>(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::text, total_exec_time AS total,
              total_plan_time AS plan, rows::text, (shared_blks_hit + shared_blks_read)::text AS blocks,
              shared_blks_dirtied::text AS dirtied, wal_bytes::text AS wal
         FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND query NOT LIKE '%pg_stat_%' AND query NOT LIKE '%AS caught_up%'
        ORDER BY pg_stat_statements.calls DESC`,
    )
    const calls = rows.reduce((sum, r) => sum + Number(r.calls), 0)
    console.log(
      `  statements: ${(calls / userMessages).toFixed(2)} per end-user message, ${(committed / userMessages).toFixed(2)} commits (${committed}) in ${((Date.now() - started) / 1000).toFixed(2)} s`,
    )
    const exec = rows.reduce((sum, r) => sum + r.total, 0)
    const plan = rows.reduce((sum, r) => sum + r.plan, 0)
    console.log(
      `  statement time per end-user message: execution ${(exec / userMessages).toFixed(3)} ms, planning ${(plan / userMessages).toFixed(3)} ms; the most (execution + planning):`,
    )
    for (const r of [...rows].sort((a, b) => b.total + b.plan - a.total - a.plan).slice(0, 12)) {
      console.log(
        `    ${((r.total + r.plan) / userMessages).toFixed(3)} ms (${r.calls} calls, plan ${(r.plan / userMessages).toFixed(3)})  ${r.query.slice(0, 120)}`,
      )
    }
    // Rows, shared blocks (hit or read, dirtied) and WAL per end-user message: counts the load moves little.
    const sum = (f: (r: (typeof rows)[number]) => string) => rows.reduce((a, r) => a + Number(f(r)), 0)
    const perMessage = (n: number) => (n / userMessages).toFixed(2)
    console.log(
      `  per end-user message: rows ${perMessage(sum((r) => r.rows))}, shared blocks ${perMessage(sum((r) => r.blocks))}, dirtied ${perMessage(sum((r) => r.dirtied))}, WAL ${perMessage(sum((r) => r.wal))} bytes`,
    )
    console.log('  by shared blocks (per end-user message):')
    for (const r of [...rows].sort((a, b) => Number(b.blocks) - Number(a.blocks)).slice(0, 8)) {
      console.log(
        `    blks ${perMessage(Number(r.blocks))} dirtied ${perMessage(Number(r.dirtied))} wal ${perMessage(Number(r.wal))} rows ${perMessage(Number(r.rows))} (${r.calls} calls)  ${r.query.slice(0, 110)}`,
      )
    }
    console.log('  by calls (per end-user message: calls, rows, shared blocks, WAL bytes):')
    for (const r of rows.slice(0, 40)) {
      console.log(
        `    ${String(r.calls).padStart(6)} ${(Number(r.calls) / userMessages).toFixed(3)} rows ${perMessage(Number(r.rows))} blks ${perMessage(Number(r.blocks))} wal ${perMessage(Number(r.wal))} exec ${r.total.toFixed(0)} ms plan ${r.plan.toFixed(0)} ms  ${r.query.slice(0, 110)}`,
      )
    }
  }
  // Commit groups: each job done is stamped with its commit's start (completeJobs' `now`).
  const { rows: groups } = await pool.query<{ at: Date; jobs: number }>(
    `SELECT updated_at AS at, count(*)::int AS jobs FROM analysis_jobs
      WHERE chatbot_id = $1 AND status = 'done' GROUP BY updated_at ORDER BY updated_at`,
    [account.chatbotId],
  )
  const { rows: results } = await pool.query<{ first: string; last: string }>(
    `SELECT min(position)::text AS first, max(position)::text AS last FROM event_journal
      WHERE chatbot_id = $1 AND position > $2 AND type = 'analysis.messages-analyzed'`,
    [account.chatbotId, startPosition.toString()],
  )
  const firstResult = BigInt(results[0]!.first)
  const lastResult = BigInt(results[0]!.last)
  const s = (ms: number) => `${(ms / 1000).toFixed(3)} s`
  const firstCommit = groups[0]!.at.getTime() - started
  const lastCommit = groups.at(-1)!.at.getTime() - started
  const firstProjected = samples.find((x) => x.projectedMax >= firstResult)?.at
  const allDone = samples.find((x) => x.done === queued.length)?.at
  const lastProjected = samples.find((x) => x.projectedMin >= lastResult)?.at
  const total = ended - started
  const gaps = groups.slice(1).map((g, i) => g.at.getTime() - groups[i]!.at.getTime())
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
  const service = threads.reduce((sum, t) => sum + t.seconds, 0)
  const per = (seconds: number) => `${((seconds * 1000) / userMessages).toFixed(2)} ms`
  console.log(
    `${label} ${set.name}: ${queued.length} jobs, ${userMessages} end-user messages, load ${load}; window ${s(total)} (${(userMessages / (total / 1000)).toFixed(0)} msgs/s)`,
  )
  console.log(
    `  head: first commit starts ${s(firstCommit)}, first result projected by ${firstProjected ? s(firstProjected - started) : '?'}`,
  )
  console.log(
    `  steady: ${groups.length} commit groups of ${(queued.length / groups.length).toFixed(1)} jobs, every ${mean(gaps).toFixed(1)} ms; first to last commit ${s(lastCommit - firstCommit)} (${((groups.slice(1).reduce((sum, g) => sum + g.jobs, 0) / Math.max(0.001, (lastCommit - firstCommit) / 1000)) * (userMessages / queued.length)).toFixed(0)} msgs/s)`,
  )
  console.log(
    `  tail: last commit starts ${s(lastCommit)}, all jobs seen done ${allDone ? s(allDone - started) : '?'}, last result projected by ${lastProjected ? s(lastProjected - started) : '?'}, window end ${s(total)} (poll ${pollMs} ms)`,
  )
  console.log(
    `  CPU per end-user message: service ${per(service)} (${threads
      .filter((t) => t.seconds > 0)
      .slice(0, 8)
      .map(
        (t) =>
          `${t.main ? 'main ' : ''}${t.name.replace(/#(\d+)$/, (_, tid) => (t.main ? '' : `+${Number(tid) - cpu.pid}`))} ${per(t.seconds)}`,
      )
      .join(', ')}); Postgres ${per(postgres)}`,
  )
  console.log(
    `  Postgres by process: ${[...kindsAfter]
      .map(([kind, secs]) => [kind, secs - (kindsBefore.get(kind) ?? 0)] as const)
      .filter(([, secs]) => secs > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([kind, secs]) => `${kind} ${per(secs)}`)
      .join(', ')}`,
  )
  const { rows: vacuumed } = await pool.query<{ relname: string; what: string }>(
    `SELECT relname, concat_ws(' ', CASE WHEN last_autovacuum >= $1 THEN 'vacuum' END,
                                   CASE WHEN last_autoanalyze >= $1 THEN 'analyze' END) AS what
       FROM pg_stat_user_tables WHERE last_autovacuum >= $1 OR last_autoanalyze >= $1 ORDER BY relname`,
    [new Date(started)],
  )
  // Autovacuum's runs that ended in the window (or within a second after it: a run's line comes at its end).
  let autovacuumCpu = 0
  let at = 0
  for (const line of readFileSync(postgresLog, 'utf8').split('\n')) {
    // A run's "system usage" is a continuation line of its message, under the message's time.
    const stamped = Date.parse(line.slice(0, 23).replace(' ', 'T'))
    if (!Number.isNaN(stamped)) at = stamped
    const usage = /CPU: user: ([\d.]+) s, system: ([\d.]+) s/.exec(line)
    if (!usage || !(at >= started && at <= ended + 1_000)) continue
    autovacuumCpu += Number(usage[1]) + Number(usage[2])
  }
  if (values.profile) console.log(`  profile window (µs, monotonic): ${startedUs} ${endedUs}`)
  console.log(`  autovacuum's own CPU (its log), runs ending in the window: ${per(autovacuumCpu)}`)
  console.log(
    `  autovacuum in the window: ${vacuumed.map((v) => `${v.relname} (${v.what})`).join(', ') || 'none'}`,
  )
  // Then until the re-clustering has settled, so that the next set's window does not carry it.
  if (label.startsWith('run')) return
  for (let tries = 0; tries < 600; tries++) {
    const res = await fetch(`${url}/api/v1/analytics/topics?chatbotId=${account.chatbotId}&days=2&limit=1`, {
      headers: { cookie: account.cookie },
    })
    const { reclustering } = (await res.json()) as { reclustering: { settling: boolean } }
    if (!reclustering.settling) break
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}

/**
 * The embedded Postgres's CPU seconds by process kind (its title: a client backend, autovacuum, the WAL
 * writer…), and `exited` for its children that have ended (the postmaster's children's time).
 */
function postgresByKind(dataDir: string): Map<string, number> {
  const out = new Map<string, number>()
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let stat: string
    let title: string
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim()
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const own = Number(pid) === postmaster
    if (!own && Number(fields[1]) !== postmaster) continue
    const kind = own
      ? 'postmaster'
      : /^postgres: \S+ \S+ [\d.]+\(/.test(title)
        ? 'client backends'
        : title.replace(/^postgres: /, '').replace(/\s.*$/, '')
    out.set(kind, (out.get(kind) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100)
    if (own) out.set('exited', (Number(fields[13]) + Number(fields[14])) / 100)
  }
  return out
}

/** Journal reads so far (pg_stat_statements when loaded, else -1). */
async function journalReads(pool: pg.Pool): Promise<number> {
  if (!values.statements) return 0
  const { rows } = await pool.query<{ n: string }>(
    "SELECT coalesce(sum(calls), 0)::text AS n FROM pg_stat_statements WHERE query LIKE 'WITH scan AS%'",
  )
  return Number(rows[0]!.n)
}
