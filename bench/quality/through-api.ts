/**
 * One development set through the real API of a running service: each request captured as a realistic
 * conversation (quality/datasets.ts) with analysis off, then analysed as a whole (a re-analysis: the same
 * worker, jobs, placement and events as after a capture, so that the analysis rate is its own, not
 * capture's), and each conversation's topic read back through the API.
 */
import type pg from 'pg'
import { enqueueReanalysis } from '../../services/analysis/src/reanalyze.ts'
import { benchKeyring } from '../support/keyring.ts'
import { busiestThreads, postgresCpuSeconds, threadTimes } from '../support/proc-cpu.ts'
import { seededRandom } from '../support/random.ts'
import { createAccount } from '../support/service.ts'
import { conversationOf, type DevelopmentSet } from './datasets.ts'

export interface ApiTopic {
  readonly id: string
  readonly label: string
  readonly keywords: string[]
  readonly conversations: number
}

export interface ThroughApi {
  /** Each request's conversation's first topic, or 'other'. */
  readonly topicOfRequest: readonly string[]
  readonly topics: readonly ApiTopic[]
  readonly other: number
  readonly userMessages: number
  readonly greeted: number
  readonly captureSeconds: number
  readonly analysisSeconds: number
  readonly deadJobs: number
  /** From the last result analysed to the re-clustering settled, its events projected. */
  readonly settleSeconds: number
  /**
   * CPU seconds while the jobs were analysed (analysisSeconds), when the service's pid and Postgres's data
   * directory were given: each thread of the service, busiest first, and the embedded Postgres.
   */
  readonly analysisCpu?: {
    readonly threads: readonly { name: string; main: boolean; seconds: number }[]
    readonly postgres: number
  }
  /**
   * With `statements`: what Postgres ran while the jobs were analysed (pg_stat_statements, reset when the
   * jobs were queued; its own reads left out), busiest first, and the transactions committed meanwhile.
   */
  readonly analysisStatements?: {
    readonly statements: readonly { query: string; calls: number; totalMs: number; rows: number }[]
    readonly commits: number
    /** Tables with rows written out of line (TOAST) by then: their TOAST table's size. */
    readonly toasted: readonly { table: string; bytes: number }[]
  }
}

export async function measureThroughApi(
  serviceUrl: string,
  pool: pg.Pool,
  set: DevelopmentSet,
  opts: {
    analyzer: { name: string; version: string }
    concurrency: number
    greetingShare: number
    seed: number
    /** The service's process and Postgres's data directory, to read their CPU (Linux). */
    cpu?: { pid: number; postgresDataDir: string }
    /** Read pg_stat_statements over the analysis (the server must preload it). */
    statements?: boolean
  },
): Promise<ThroughApi> {
  const account = await createAccount(serviceUrl, `quality-${set.name}`)
  const patched = await fetch(`${serviceUrl}/api/v1/chatbots/${account.chatbotId}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', cookie: account.cookie },
    body: JSON.stringify({ settings: { analysisEnabled: false } }),
  })
  if (!patched.ok) throw new Error(`turning analysis off answered ${patched.status}`)

  const random = seededRandom(opts.seed + 1)
  const conversations = set.requests.map((r, i) =>
    conversationOf(r.text, i, { greetingShare: opts.greetingShare, random }),
  )
  const userMessages = conversations.flat().filter((m) => m.role === 'user').length
  const captureStarted = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      for (let i = next++; i < conversations.length; i = next++) {
        const res = await fetch(`${serviceUrl}/api/v1/capture`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
          body: JSON.stringify({ conversationId: `${set.name}-${i}`, messages: conversations[i] }),
        })
        if (!res.ok) throw new Error(`capture answered ${res.status}: ${await res.text()}`)
      }
    }),
  )
  const captureSeconds = (performance.now() - captureStarted) / 1000
  const { keys: queued } = await enqueueReanalysis(pool, benchKeyring, {
    chatbotId: account.chatbotId,
    analyzer: opts.analyzer,
    now: new Date(),
  })
  if (queued.length !== conversations.length) throw new Error(`${queued.length} captures queued for analysis`)
  const counting = opts.statements ? await startStatementCount(pool) : undefined
  const threadsBefore = opts.cpu ? threadTimes(opts.cpu.pid) : undefined
  const postgresBefore = opts.cpu ? postgresCpuSeconds(opts.cpu.postgresDataDir) : 0
  const analysisStarted = performance.now()
  // Until every job is analysed and the read models have every event.
  const deadline = Date.now() + 30 * 60_000
  for (;;) {
    // The first open job in the claim's index answers: a count of a re-analysis's thousands of open jobs
    // was 1.1 ms of Postgres every 50 ms, counted as the analysis's (FINDINGS "perf450"; EXISTS read the table).
    const { rows } = await pool.query<{ open: boolean; caught_up: boolean }>(
      `SELECT (SELECT count(*) > 0 FROM (SELECT 1 FROM analysis_jobs WHERE status IN ('pending', 'running')
                 ORDER BY next_attempt_at, id LIMIT 1) AS first) AS open,
              coalesce((SELECT min(last_offset) FROM consumer_checkpoints WHERE group_id = 'projector'), -1)
                >= coalesce((SELECT max(position) FROM event_journal), 0) AS caught_up`,
    )
    if (!rows[0]!.open && rows[0]!.caught_up) break
    if (Date.now() > deadline) throw new Error('analysis did not finish within 30 minutes')
    // Every 50 ms, as bench:analysis: polled every 500 ms, DSTC11's 3.5 s of analysis read 0.25 s long on
    // average (up to 0.5 s: 7-14 % fewer messages per second than analysed).
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const analysisSeconds = (performance.now() - analysisStarted) / 1000
  const analysisCpu =
    opts.cpu && threadsBefore
      ? {
          threads: busiestThreads(threadsBefore, threadTimes(opts.cpu.pid), opts.cpu.pid),
          postgres: postgresCpuSeconds(opts.cpu.postgresDataDir) - postgresBefore,
        }
      : undefined
  let analysisStatements: ThroughApi['analysisStatements']
  if (counting) {
    const committed = await counting.committed()
    const { rows } = await pool.query<{ query: string; calls: string; total: number; rows: string }>(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::text, total_exec_time AS total, rows::text
         FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND query NOT LIKE '%pg_stat_%' AND query NOT LIKE '%AS caught_up%'
        ORDER BY total_exec_time DESC`,
    )
    const { rows: toasted } = await pool.query<{ table: string; bytes: string }>(
      `SELECT c.relname AS table, pg_relation_size(c.reltoastrelid)::text AS bytes FROM pg_class c
        WHERE c.relkind = 'r' AND c.reltoastrelid <> 0 AND pg_relation_size(c.reltoastrelid) > 0
        ORDER BY 2 DESC`,
    )
    analysisStatements = {
      toasted: toasted.map((t) => ({ table: t.table, bytes: Number(t.bytes) })),
      statements: rows.map((r) => ({
        query: r.query,
        calls: Number(r.calls),
        totalMs: r.total,
        rows: Number(r.rows),
      })),
      commits: committed,
    }
  }
  // Then until the background re-clustering has settled (README: within TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS
  // of the last request, plus the run) and the read models have its events: the topics as they stay.
  const settleStarted = performance.now()
  for (;;) {
    const res = await fetch(
      `${serviceUrl}/api/v1/analytics/topics?chatbotId=${account.chatbotId}&days=2&limit=1`,
      {
        headers: { cookie: account.cookie },
      },
    )
    const { reclustering } = (await res.json()) as { reclustering: { settling: boolean } }
    const { rows } = await pool.query<{ caught_up: boolean }>(
      `SELECT coalesce((SELECT min(last_offset) FROM consumer_checkpoints WHERE group_id = 'projector'), -1)
                >= coalesce((SELECT max(position) FROM event_journal), 0) AS caught_up`,
    )
    if (!reclustering.settling && rows[0]!.caught_up) break
    if (Date.now() > deadline) throw new Error('re-clustering did not settle within 30 minutes')
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
  const settleSeconds = (performance.now() - settleStarted) / 1000
  const { rows: dead } = await pool.query<{ dead: number }>(
    "SELECT count(*) FILTER (WHERE status = 'dead')::int AS dead FROM analysis_jobs",
  )

  const cookie = { cookie: account.cookie }
  const topicsRes = await fetch(
    `${serviceUrl}/api/v1/analytics/topics?chatbotId=${account.chatbotId}&days=2&limit=1000`,
    { headers: cookie },
  )
  const topicsReport = (await topicsRes.json()) as {
    topics: ApiTopic[]
    other: { conversations: number } | null
  }
  const topicOf = new Map<string, string>()
  let cursor: string | null = null
  do {
    const res = await fetch(
      `${serviceUrl}/api/v1/conversations?chatbotId=${account.chatbotId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      { headers: cookie },
    )
    const page = (await res.json()) as {
      conversations: { conversationId: string; topicIds: string[] }[]
      nextCursor: string | null
    }
    for (const c of page.conversations) topicOf.set(c.conversationId, c.topicIds[0] ?? 'other')
    cursor = page.nextCursor
  } while (cursor)

  return {
    topicOfRequest: set.requests.map((_, i) => topicOf.get(`${set.name}-${i}`) ?? 'other'),
    topics: topicsReport.topics,
    other: topicsReport.other?.conversations ?? 0,
    userMessages,
    greeted: conversations.filter((c) => c.length > 2).length,
    captureSeconds,
    analysisSeconds,
    settleSeconds,
    deadJobs: dead[0]!.dead,
    ...(analysisCpu ? { analysisCpu } : {}),
    ...(analysisStatements ? { analysisStatements } : {}),
  }
}

/**
 * Postgres's statements counted over a measured window (`--statements`): pg_stat_statements reset and the
 * database's commit count read at its start; `committed()` gives the commits since, on a fresh snapshot.
 */
export async function startStatementCount(pool: pg.Pool): Promise<{ committed: () => Promise<number> }> {
  const commits = async () =>
    Number(
      (
        await pool.query<{ n: string }>(
          'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()',
        )
      ).rows[0]!.n,
    )
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  await pool.query('SELECT pg_stat_statements_reset()')
  await pool.query('SELECT pg_stat_clear_snapshot()')
  const before = await commits()
  return {
    committed: async () => {
      await pool.query('SELECT pg_stat_clear_snapshot()')
      return (await commits()) - before
    },
  }
}
