/**
 * The Topics page's reads as a chatbot grows (issues 31 and 32): one chatbot of 5,000 and 50,000
 * conversations over 150 topics and 12 themes (bench/support/topics-seed.ts), read through the real
 * routes (session, row-level security) in this process, once before the tables have statistics (a fresh
 * database, autovacuum off: a chatbot's first hours) and once after ANALYZE; then (`stale`) a second
 * organization's 1,000 conversations (`--second-org`) are written after that ANALYZE and its reads timed
 * on statistics that know only the first organization (a new organization's first burst, until
 * autovacuum's next ANALYZE).
 *
 *   npm run bench:reads [-- --scales 5000,50000 --runs 10 --explain --states none,analyzed,stale
 *                          --second-org 1000 --only signals]
 *
 * Prints the machine, then per scale and state each request's p50/max, its ratio to the ceiling (the
 * bare scan of the range's conversations, measured in the same run), every statement of 100 ms or
 * more with its time, and the plan's shape of the topics-and-themes and signals statements (rows read
 * of rm_conversations, rm_conversation_signals and rm_hourly_activity, by which index, and the most loops
 * of one scan); `--explain` prints the EXPLAIN (ANALYZE, BUFFERS) of the themes read, of the signals read
 * and of every statement of 100 ms or more. `--only` keeps the requests whose name contains one of its
 * comma-separated words.
 */
import { parseArgs } from 'node:util'
import { createPool, ensureReaderLogin } from '@cas/db'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { catchUpChatbotReadModel } from '../test/support/chatbot-read-model.ts'
import { scanLoops } from '../test/support/plan-rows.ts'
import {
  buildDashboardApp,
  createBenchDatabase,
  createChatbotInProcess,
  signUpInProcess,
} from './support/in-process.ts'
import { machineInfo, machineLine } from './support/machine.ts'
import { BENCH_POSTGRES_SETTINGS, startBenchServers } from './support/servers.ts'
import { msSince, summarize } from './support/stats.ts'
import { seedTopicsPage, TOPICS_PAGE_TABLES } from './support/topics-seed.ts'

const { values } = parseArgs({
  options: {
    scales: { type: 'string', default: '5000,50000' },
    runs: { type: 'string', default: '10' },
    explain: { type: 'boolean', default: false },
    states: { type: 'string', default: 'none,analyzed,stale' },
    'slow-ms': { type: 'string', default: '100' },
    /** Only the requests whose name contains one of these (comma-separated), e.g. `signals`. */
    only: { type: 'string', default: '' },
    /** Conversations of the second organization of the `stale` state. */
    'second-org': { type: 'string', default: '1000' },
  },
})
const runs = Number(values.runs)
const slowMs = Number(values['slow-ms'])
const secondOrg = Number(values['second-org'])
const NOW = new Date('2026-11-21T12:00:00Z')

interface Statement {
  text: string
  values: unknown[]
  ms: number
}

/** Statements of the reader pool, while a request is timed. */
let recorded: Statement[] | null = null

/** A client that times its statements (from the call to the answer) into `recorded`. */
class RecordingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this passes them through.
  override query(...args: any[]): any {
    const out = (super.query as (...a: unknown[]) => unknown)(...args)
    const into = recorded
    if (into && out instanceof Promise) {
      const start = process.hrtime.bigint()
      const first = args[0] as string | { text: string; values?: unknown[] }
      const text = typeof first === 'string' ? first : first.text
      const params = (typeof first === 'string' ? args[1] : first.values) ?? []
      out.then(
        () => into.push({ text, values: params as unknown[], ms: msSince(start) }),
        () => {},
      )
    }
    return out
  }
}

/** A statement's name in the output: which read it is. */
function statementName(text: string): string {
  const named: [RegExp, string][] = [
    [/conv AS MATERIALIZED[\s\S]*rm_conversation_signals/, 'signals (readSignals)'],
    // The themes read of 061926e and before: a statement of its own.
    [/FROM rm_themes th JOIN placed/, 'themes (readThemes)'],
    [/placed AS[\s\S]*rm_themes/, 'topics and themes (rankTopics)'],
    [/placed AS[\s\S]*GROUP BY topic/, 'topics (rankTopics)'],
    [/sum\(r\.messages\)/, 'topic messages (rankTopics)'],
    [/FROM rm_topics WHERE org_id = \$1 AND id = ANY/, 'topic descriptions (rankTopics)'],
    [/WITH buckets AS[\s\S]*rm_hourly_topics/, 'topic trends'],
    [/AS p\(topic, conversation_id\)/, 'excerpts'],
    [/hidden AND canonical_id = id/, 'hidden topics'],
    [/rm_topic_reclustering/, 'reclustering'],
    // The signals read of 2b8a3a7 and before: every conversation of the range with its signals.
    [/rm_conversation_signals s ON/, 'signals: conversations'],
    [/JOIN rm_topics c ON c.chatbot_id = t.chatbot_id/, 'signals: topic labels'],
    [/AND id = ANY\(\$2::text\[\]\) AND canonical_id = id/, 'signals: topic labels'],
  ]
  for (const [re, name] of named) if (re.test(text)) return name
  return text.replace(/\s+/g, ' ').trim().slice(0, 60)
}

const servers = await startBenchServers({
  name: 'reads',
  // Autovacuum off: the tables have exactly the statistics the benchmark gives them (none, then ANALYZE).
  postgres: { ...BENCH_POSTGRES_SETTINGS, autovacuum: 'off' },
})
try {
  console.log(machineLine(await machineInfo({ databaseUrl: servers.postgres.url })))
  console.log(
    `autovacuum off; ${runs} timed runs per request after 2 untimed; statements of ${slowMs} ms or more listed`,
  )
  for (const conversations of values.scales.split(',').map(Number)) {
    await measureScale(conversations)
  }
} finally {
  await servers.stop()
}

/** An organization whose reads are timed: its session, its chatbot. */
interface Reader {
  cookie: string
  orgId: string
  chatbotId: string
}

async function measureScale(conversations: number) {
  const databaseUrl = await createBenchDatabase(servers.postgres.url, `bench_reads_${conversations}`)
  const pool = createPool(databaseUrl, { max: 4 })
  const readerUrl = await ensureReaderLogin(databaseUrl)
  const readerPool = new pg.Pool({ connectionString: readerUrl, max: 4, Client: RecordingClient })
  const app = await buildDashboardApp({ pool, readerPool, databaseUrl, now: () => NOW })
  try {
    const { cookie, orgId } = await signUpInProcess(app)
    const { id: chatbotId } = await createChatbotInProcess(app, cookie, 'bench bot')
    const start = process.hrtime.bigint()
    await seedTopicsPage(pool, { orgId, chatbotId, conversations, now: NOW, analyze: false })
    // The chatbot's read-model row and signal periods, as the projector has them: the signals read counts
    // a configured chatbot's conversations against the signals on for it.
    await catchUpChatbotReadModel(pool)
    console.log(
      `\n${conversations.toLocaleString('en')} conversations, 1 chatbot, 170 topics, 12 themes: seeded in ${(msSince(start) / 1000).toFixed(1)} s`,
    )
    const states = values.states.split(',')
    if (states.includes('none'))
      await measureState(app, readerUrl, { cookie, orgId, chatbotId }, 'no statistics')
    await pool.query(`ANALYZE ${TOPICS_PAGE_TABLES.join(', ')}`)
    if (states.includes('analyzed'))
      await measureState(app, readerUrl, { cookie, orgId, chatbotId }, 'after ANALYZE')
    if (states.includes('stale')) {
      // A second organization's burst after the first one's ANALYZE (autovacuum is off: no other comes):
      // the statistics know one organization, and estimate the new one's rows at one.
      const second = await signUpInProcess(app, 'second@example.com')
      const { id: secondBot } = await createChatbotInProcess(app, second.cookie, 'second bot')
      const t = process.hrtime.bigint()
      await seedTopicsPage(pool, {
        orgId: second.orgId,
        chatbotId: secondBot,
        conversations: secondOrg,
        now: NOW,
        analyze: false,
        addTo: { idPrefix: 'second-' },
      })
      console.log(
        `\n  a second organization: ${secondOrg.toLocaleString('en')} conversations, 1 chatbot, seeded in ${(msSince(t) / 1000).toFixed(1)} s, not analysed`,
      )
      await measureState(
        app,
        readerUrl,
        { ...second, chatbotId: secondBot },
        'stale statistics (the second organization)',
      )
    }
  } finally {
    await app.close()
    await readerPool.end()
    await pool.end()
  }
}

/** Times every request (of `--only`) for `reader`, on the statistics the tables have now. */
async function measureState(app: FastifyInstance, readerUrl: string, reader: Reader, state: string) {
  const { cookie, orgId, chatbotId } = reader
  const requests: [string, string][] = [
    ['topics page, 30 days', '/api/v1/analytics/topics?days=30&interval=day&limit=20'],
    [
      'topics page, 30 days, the chatbot',
      `/api/v1/analytics/topics?days=30&interval=day&limit=20&chatbotId=${chatbotId}`,
    ],
    ['topics page, 7 days by hour', '/api/v1/analytics/topics?days=7&interval=hour&limit=20'],
    ['topics page, 100 topics', '/api/v1/analytics/topics?days=30&interval=day&limit=100'],
    ['signals, 30 days', '/api/v1/analytics/signals?days=30&interval=day&limit=20'],
    [
      'signals, 30 days, the chatbot',
      `/api/v1/analytics/signals?days=30&interval=day&limit=20&chatbotId=${chatbotId}`,
    ],
    ['signals, 7 days by hour', '/api/v1/analytics/signals?days=7&interval=hour&limit=20'],
    ['overview, 30 days', '/api/v1/analytics/overview?days=30'],
    ['re-analysis state', `/api/v1/chatbots/${chatbotId}/reanalysis`],
  ]
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: { cookie } })
    if (res.statusCode !== 200 && !(res.statusCode === 404 && url.endsWith('/reanalysis')))
      throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  }
  const floor = await scoped(readerUrl, orgId, async (client) => {
    const ms: number[] = []
    for (let i = 0; i < runs + 2; i++) {
      const t = process.hrtime.bigint()
      await client.query(
        `SELECT count(*), sum(cardinality(topics)) FROM rm_conversations
          WHERE org_id = $1 AND last_message_at >= $2 AND first_message_at < $3`,
        [orgId, new Date(NOW.getTime() - 30 * 86_400_000), NOW],
      )
      if (i >= 2) ms.push(msSince(t))
    }
    return summarize(ms).p50
  })
  console.log(
    `  ${state}: ceiling (a bare scan of the range's conversations in the same scope) p50 ${floor.toFixed(1)} ms`,
  )
  const only = values.only.split(',').filter(Boolean)
  for (const [label, url] of requests) {
    if (only.length > 0 && !only.some((o) => label.includes(o))) continue
    const ms: number[] = []
    const slow = new Map<string, number[]>()
    let themes: Statement | undefined
    let signals: Statement | undefined
    for (let i = 0; i < runs + 2; i++) {
      recorded = []
      const t = process.hrtime.bigint()
      await get(url)
      const total = msSince(t)
      const statements = recorded
      recorded = null
      // Let the last .then() callbacks land.
      await new Promise((r) => setImmediate(r))
      if (i < 2) continue
      ms.push(total)
      for (const s of statements) {
        const name = statementName(s.text)
        if (name.includes('themes')) themes = s
        if (name === 'signals (readSignals)') signals = s
        if (s.ms >= slowMs) slow.set(name, [...(slow.get(name) ?? []), s.ms])
      }
      if (i === runs + 1 && values.explain) {
        for (const s of statements.filter(
          (x) =>
            x.ms >= slowMs ||
            statementName(x.text).includes('themes') ||
            statementName(x.text) === 'signals (readSignals)',
        ))
          await explain(readerUrl, orgId, s, `${label}, ${state}`)
      }
    }
    const l = summarize(ms)
    console.log(
      `    ${label.padEnd(36)} p50 ${l.p50.toFixed(1).padStart(8)} ms   max ${l.max.toFixed(1).padStart(8)} ms   ${(l.p50 / floor).toFixed(1).padStart(6)} × ceiling`,
    )
    for (const [name, times] of slow) {
      const s = summarize(times)
      console.log(
        `      ${name}: ${times.length} of ${runs} runs over ${slowMs} ms, p50 ${s.p50.toFixed(1)} ms`,
      )
    }
    for (const s of [themes, signals]) {
      if (!s) continue
      if (!slow.has(statementName(s.text)))
        console.log(`      ${statementName(s.text)}, last run: ${s.ms.toFixed(1)} ms`)
      console.log(`        ${await rowsRead(readerUrl, orgId, s)}`)
    }
  }
}

/**
 * The plan's shape in one line, from one EXPLAIN ANALYZE of `s`: per table, the rows its scans returned
 * or filtered out over all their loops, and the most loops of one scan (a lookup per conversation is one
 * scan run once per conversation; each loop should read one conversation's rows, not the organization's).
 */
async function rowsRead(readerUrl: string, orgId: string, s: Statement): Promise<string> {
  const scans = await scoped(readerUrl, orgId, (c) => scanLoops(c, s.text, s.values))
  const tables = new Map<string, { rows: number; loops: number; indexes: Set<string> }>()
  for (const scan of scans) {
    if (!['rm_conversations', 'rm_conversation_signals', 'rm_hourly_activity'].includes(scan.table)) continue
    const t = tables.get(scan.table) ?? { rows: 0, loops: 0, indexes: new Set<string>() }
    t.rows += scan.rows
    t.loops = Math.max(t.loops, scan.loops)
    t.indexes.add(scan.index ?? scan.type)
    tables.set(scan.table, t)
  }
  return `rows read: ${[...tables]
    .map(
      ([name, t]) =>
        `${name} ${t.rows.toLocaleString('en')} (${[...t.indexes].join(', ')}; ${t.loops.toLocaleString('en')} loops at most)`,
    )
    .join('; ')}`
}

/** `fn` in a read-only transaction as the query service's role, scoped to the organization. */
async function scoped<T>(readerUrl: string, orgId: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: readerUrl })
  await client.connect()
  try {
    await client.query('BEGIN READ ONLY')
    await client.query("SELECT set_config('cas.org_id', $1, true)", [orgId])
    return await fn(client)
  } finally {
    await client.query('ROLLBACK').catch(() => {})
    await client.end()
  }
}

async function explain(readerUrl: string, orgId: string, s: Statement, when: string) {
  const { rows } = await scoped(readerUrl, orgId, (c) =>
    c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${s.text}`, s.values),
  )
  console.log(`\n      --- ${statementName(s.text)} (${when}; ${s.ms.toFixed(1)} ms in the request) ---`)
  for (const r of rows) console.log(`      ${r['QUERY PLAN']}`)
  console.log('')
}
