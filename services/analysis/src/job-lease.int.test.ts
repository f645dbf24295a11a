/**
 * A claimed job's lease: short, renewed while the job is in flight, and the commit fenced on the claim.
 * A worker killed with SIGKILL loses its jobs after the short lease, not after the 5 minutes they once
 * waited; a slow analysis keeps its job; a worker whose renewals lapsed and whose job another worker
 * claimed commits nothing.
 */
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { createHttpApp } from '@cas/http'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.ts'
import { samples } from '../../../test/support/metrics.ts'
import { waitFor } from '../../../test/support/wait.ts'
import { spawnWorker } from '../../../test/support/worker-process.ts'
import { ScriptedAnalyzer } from '../test/scripted-analyzer.ts'
import { AnalysisJobRunner } from './job-runner.ts'
import {
  type AnalysisJob,
  claimJobs,
  completeJobs,
  enqueueJobs,
  forgetChatbot,
  jobCounts,
  lockClaims,
  renewLeases,
} from './jobs.ts'
import { ANALYSIS_METRICS } from './metrics.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(() => db.drop())

/** The lease every job had before it was renewed: what a killed worker's jobs waited out. */
const OLD_LEASE_MS = 5 * 60_000

/** A known chatbot with `perConversation` jobs queued for each of `conversations` conversations. */
async function queue(conversations: number, perConversation: number) {
  const chatbotId = randomUUID()
  const orgId = randomUUID()
  await db.pool.query("INSERT INTO analysis_chatbots (chatbot_id, settings) VALUES ($1, '{}')", [chatbotId])
  const ids = Array.from({ length: conversations }, () => randomUUID())
  const jobs = ids.flatMap((conversationId) =>
    Array.from({ length: perConversation }, (_, i) => ({
      sourceEventId: randomUUID(),
      conversationId,
      orgId,
      chatbotId,
      messages: [{ id: `m${i}`, role: 'user' as const, content: 'score:0.5' }],
    })),
  )
  await enqueueJobs(db.pool, jobs, new Date())
  return { chatbotId, conversations: ids }
}

async function jobsOf(chatbotId: string) {
  const { rows } = await db.pool.query<{ id: string; status: string; attempts: number }>(
    'SELECT id::text, status, attempts FROM analysis_jobs WHERE chatbot_id = $1 ORDER BY id',
    [chatbotId],
  )
  return rows
}

async function analysisEvents(chatbotId: string) {
  const { rows } = await db.pool.query<{ stream_id: string; type: string }>(
    "SELECT stream_id, type FROM event_journal WHERE stream_type = 'analysis' AND chatbot_id = $1 ORDER BY position",
    [chatbotId],
  )
  return rows
}

/**
 * A worker whose renewals never come in time (a stalled process, a long network partition): its 200 ms
 * lease runs out while its analysis is held, and another worker may claim the job.
 */
function stalledWorker(analyzer: ScriptedAnalyzer, log?: (msg: string) => void) {
  return new AnalysisJobRunner({
    pool: db.pool,
    analyzer,
    concurrency: 1,
    maxAttempts: 3,
    leaseMs: 200,
    renewMs: 3_600_000,
    ...(log ? { log } : {}),
  })
}

it("a worker killed with SIGKILL while holding jobs: another takes them, and their conversations' later jobs, within the short lease", async () => {
  // Given: two conversations of two jobs each, their first jobs held by a worker process mid-analysis.
  const { chatbotId, conversations } = await queue(2, 2)
  const worker = spawnWorker(
    { DATABASE_URL: db.url, LEASE_MS: '2000' },
    fileURLToPath(new URL('../test/lease-worker.ts', import.meta.url)),
  )
  let claimedAt: number
  try {
    await worker.waitForLine((l) => l === 'holding 2')
    claimedAt = Date.now()
    expect((await jobsOf(chatbotId)).map((j) => j.status).sort()).toEqual([
      'pending',
      'pending',
      'running',
      'running',
    ])
  } finally {
    // When: it is killed mid-analysis.
    await worker.kill('SIGKILL')
  }
  // Then: another worker analyses all four, each once, before the old lease could have run out.
  const analyzer = new ScriptedAnalyzer()
  const runner = new AnalysisJobRunner({ pool: db.pool, analyzer, concurrency: 4, maxAttempts: 3 })
  runner.start()
  try {
    await waitFor(async () => (await jobsOf(chatbotId)).every((j) => j.status === 'done'), {
      timeoutMs: 60_000,
      what: 'the killed worker’s jobs done',
    })
  } finally {
    await runner.stop()
  }
  expect(Date.now()).toBeLessThan(claimedAt + OLD_LEASE_MS)
  // The killed worker's claim counted as an attempt (as any crash did); the later jobs were claimed once.
  expect((await jobsOf(chatbotId)).map((j) => j.attempts)).toEqual([2, 1, 2, 1])
  const events = await analysisEvents(chatbotId)
  for (const conversationId of conversations) {
    expect(
      events.filter((e) => e.stream_id === conversationId && e.type === 'analysis.messages-analyzed'),
    ).toHaveLength(2)
  }
  expect(runner.stats).toMatchObject({ jobsDone: 4, fencedOut: 0 })
})

it('a slow analysis keeps its job: its lease is renewed while it is in flight', async () => {
  const { chatbotId } = await queue(1, 1)
  const analyzer = new ScriptedAnalyzer()
  analyzer.hold()
  const runner = new AnalysisJobRunner({
    pool: db.pool,
    analyzer,
    concurrency: 1,
    maxAttempts: 3,
    leaseMs: 300,
    renewMs: 50,
  })
  runner.start()
  try {
    await waitFor(() => analyzer.waiting === 1)
    const [job] = await jobsOf(chatbotId)
    // Longer than several leases: whenever another worker looks, the lease is still ahead of it.
    const until = Date.now() + 1_500
    while (Date.now() < until) {
      const taken = (await claimJobs(db.pool, 10, 60_000, new Date())).filter((j) => j.id === job!.id)
      expect(taken).toEqual([])
      await new Promise((r) => setTimeout(r, 100))
    }
    analyzer.release()
    await waitFor(async () => (await jobsOf(chatbotId))[0]!.status === 'done')
  } finally {
    analyzer.release()
    await runner.stop()
  }
  expect(await jobsOf(chatbotId)).toMatchObject([{ status: 'done', attempts: 1 }])
  expect(await analysisEvents(chatbotId)).toHaveLength(2)
})

it('a worker whose renewals lapsed and whose job another worker claimed is fenced out: its commit changes nothing', async () => {
  const { chatbotId } = await queue(1, 1)
  const analyzer = new ScriptedAnalyzer()
  analyzer.hold()
  const logged: string[] = []
  const runner = stalledWorker(analyzer, (msg) => logged.push(msg))
  runner.start()
  try {
    await waitFor(() => analyzer.waiting === 1)
    // Another worker claims it once the lease has run out.
    const [taken] = await waitFor(async () => {
      const claimed = await claimJobs(db.pool, 10, 60_000, new Date())
      return claimed.length > 0 ? claimed : null
    })
    expect(taken!.attempts).toBe(2)
    // When: the first worker's analysis finishes.
    analyzer.release()
    await waitFor(() => runner.stats.fencedOut === 1)
    // Then: nothing of it was stored or appended; the job is still the other worker's.
    expect(await jobsOf(chatbotId)).toMatchObject([{ status: 'running', attempts: 2 }])
    expect(await analysisEvents(chatbotId)).toEqual([])
    const { rows } = await db.pool.query('SELECT 1 FROM analysis_results WHERE chatbot_id = $1', [chatbotId])
    expect(rows).toEqual([])
    expect(runner.stats.jobsDone).toBe(0)
    expect(logged.some((m) => m.startsWith('analysis job fenced out'))).toBe(true)
    // The other worker's commit is its own.
    await completeJobs(db.pool, [taken!.id], new Date())
    expect(await jobsOf(chatbotId)).toMatchObject([{ status: 'done', attempts: 2 }])
  } finally {
    analyzer.release()
    await runner.stop()
  }
})

it('a job fenced out is counted in cas_analysis_fenced_out_total at GET /metrics', async () => {
  // Regression: a fenced-out job was counted in the worker's stats and log only, never in a metric.
  await queue(1, 1)
  const analyzer = new ScriptedAnalyzer()
  analyzer.hold()
  const runner = stalledWorker(analyzer)
  const app = await createHttpApp({ logger: false, readiness: [] })
  app.metrics.use(ANALYSIS_METRICS).observe({ stats: runner.stats, jobs: () => jobCounts(db.pool) })
  const fencedOut = async () =>
    samples((await app.inject('/metrics')).body, 'cas_analysis_fenced_out_total').get('')
  expect(await fencedOut()).toBe(0)
  runner.start()
  try {
    await waitFor(() => analyzer.waiting === 1)
    // Another worker claims the job once the lease has run out; then the first one's analysis finishes.
    await waitFor(async () => (await claimJobs(db.pool, 10, 60_000, new Date())).length > 0)
    analyzer.release()
    await waitFor(async () => (await fencedOut()) === 1, { what: 'the fenced-out job in /metrics' })
    expect(samples((await app.inject('/metrics')).body, 'cas_analysis_messages_analyzed_total').get('')).toBe(
      0,
    )
  } finally {
    analyzer.release()
    await runner.stop()
    await app.close()
  }
})

for (const content of ['fail:retryable', 'fail:fatal']) {
  it(`a failed analysis (${content}) whose lease was lost neither retries nor dead-letters the job another worker claimed`, async () => {
    const { chatbotId } = await queue(1, 1)
    const analyzer = new ScriptedAnalyzer()
    analyzer.hold()
    await db.pool.query(
      `UPDATE analysis_jobs
          SET messages = jsonb_build_array(jsonb_build_object('id', 'm0', 'role', 'user', 'content', $2::text))
        WHERE chatbot_id = $1`,
      [chatbotId, content],
    )
    const runner = stalledWorker(analyzer)
    runner.start()
    try {
      await waitFor(() => analyzer.waiting === 1)
      await waitFor(async () => (await claimJobs(db.pool, 10, 60_000, new Date())).length > 0)
      analyzer.release()
      await waitFor(() => runner.stats.fencedOut === 1)
      expect(runner.stats).toMatchObject({ retries: 0, deadLetters: 0 })
      const { rows } = await db.pool.query('SELECT 1 FROM analysis_dead_letters WHERE chatbot_id = $1', [
        chatbotId,
      ])
      expect(rows).toEqual([])
      expect(await analysisEvents(chatbotId)).toEqual([])
      expect(await jobsOf(chatbotId)).toMatchObject([{ status: 'running', attempts: 2 }])
    } finally {
      analyzer.release()
      await runner.stop()
    }
  })
}

// Regression: leases were timed by each worker's clock. A worker whose clock ran more than a lease (30 s)
// behind gave its jobs leases already over by everyone else's, and one ahead took every job others held:
// the job analysed twice, the first result fenced out, an attempt spent per theft (dead-lettered sooner).
it("a lease is timed by the database's clock: a worker whose clock runs 10 minutes behind keeps its job, through its renewals, from workers on time or ahead", async () => {
  const skew = 10 * 60_000
  const chatbotId = randomUUID()
  await db.pool.query("INSERT INTO analysis_chatbots (chatbot_id, settings) VALUES ($1, '{}')", [chatbotId])
  // Queued an hour ago: due by every clock here.
  await enqueueJobs(
    db.pool,
    [
      {
        sourceEventId: randomUUID(),
        conversationId: randomUUID(),
        orgId: randomUUID(),
        chatbotId,
        messages: [{ id: 'm0', role: 'user' as const, content: 'score:0.5' }],
      },
    ],
    new Date(Date.now() - 60 * 60_000),
  )
  const leaseOf = async () =>
    (
      await db.pool.query<{ lease_until: Date | null }>(
        'SELECT lease_until FROM analysis_jobs WHERE chatbot_id = $1',
        [chatbotId],
      )
    ).rows[0]!.lease_until
  const analyzer = new ScriptedAnalyzer()
  analyzer.hold()
  const behind = new AnalysisJobRunner({
    pool: db.pool,
    analyzer,
    concurrency: 1,
    maxAttempts: 3,
    leaseMs: 30_000,
    renewMs: 50,
    now: () => new Date(Date.now() - skew),
  })
  behind.start()
  try {
    // Given: the worker whose clock runs behind holds the job, and has renewed its lease since
    await waitFor(() => analyzer.waiting === 1)
    const claimed = (await leaseOf())!
    await waitFor(async () => ((await leaseOf())?.getTime() ?? 0) > claimed.getTime(), {
      what: 'a renewal',
    })
    const [job] = await jobsOf(chatbotId)
    // When workers on time and 10 minutes ahead look for jobs
    const onTime = await claimJobs(db.pool, 10, 30_000, new Date())
    const ahead = await claimJobs(db.pool, 10, 30_000, new Date(Date.now() + skew))
    // Then neither takes it: its lease has most of 30 s to run by the database's clock
    expect([...onTime, ...ahead].filter((j) => j.id === job!.id)).toEqual([])
    analyzer.release()
    await waitFor(async () => (await jobsOf(chatbotId))[0]!.status === 'done')
  } finally {
    analyzer.release()
    await behind.stop()
  }
  expect(await jobsOf(chatbotId)).toMatchObject([{ status: 'done', attempts: 1 }])
  expect(behind.stats.fencedOut).toBe(0)
})

/**
 * A commit holding the lower of two claimed jobs of one chatbot while `operation` runs planned as on a
 * large queue (an index, not a scan of this small table): the lower job's row is rewritten first (a
 * retry: due later, so the ready index (next_attempt_at, id) reads it second, and a new row version,
 * after the higher job's in the table and in the chatbot index). Once `operation` waits for the commit's
 * lock (a statement of it matching `statement` waits on a lock), the commit locks the higher job and
 * commits; then `operation`'s outcome (its error, if it failed) is returned.
 */
async function whileACommitHoldsTheLowerJob<T>(
  statement: string,
  operation: (
    largeQueuePlans: pg.Pool,
    jobs: { chatbotId: string; low: AnalysisJob; high: AnalysisJob },
  ) => Promise<T>,
): Promise<{ chatbotId: string; low: AnalysisJob; high: AnalysisJob; outcome: T | Error }> {
  const { chatbotId } = await queue(2, 1)
  const claimed = (await claimJobs(db.pool, 10, 30_000, new Date())).filter((j) => j.chatbotId === chatbotId)
  expect(claimed).toHaveLength(2)
  const [low, high] = claimed.sort((a, b) => Number(a.id) - Number(b.id)) as [AnalysisJob, AnalysisJob]
  await db.pool.query(
    "UPDATE analysis_jobs SET next_attempt_at = next_attempt_at + interval '1 minute' WHERE id = $1",
    [low.id],
  )
  const commit = await db.pool.connect()
  const largeQueuePlans = new pg.Pool({
    connectionString: db.url,
    max: 1,
    options: '-c enable_seqscan=off -c enable_bitmapscan=off -c enable_hashjoin=off -c enable_mergejoin=off',
  })
  try {
    await commit.query('BEGIN')
    await lockClaims(commit, [low])
    const outcome = operation(largeQueuePlans, { chatbotId, low, high }).catch((err: Error) => err)
    await waitFor(
      async () =>
        (
          await db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
            [`%${statement}%`],
          )
        ).rows[0]!.n === 1,
      { what: `${statement} to wait for the commit` },
    )
    expect((await lockClaims(commit, [high])).get(high.id)).toBe(true)
    await commit.query('COMMIT')
    return { chatbotId, low, high, outcome: await outcome }
  } finally {
    await commit.query('ROLLBACK').catch(() => {})
    commit.release()
    await largeQueuePlans.end()
  }
}

// Regression: the renewal locked its jobs in the order of its claims (the order they were claimed in),
// a commit (lockClaims) in id order: a renewal during the commit of two of its jobs claimed out of id
// order deadlocked with it, and Postgres broke the deadlock by failing one: the commit or the renewal.
it('a renewal locks its jobs in id order, as a commit does: it waits for a commit holding the lower job without holding the higher', async () => {
  // Given a commit that has locked the lower job, when the leases are renewed (the higher job first),
  // then the renewal waits, the commit goes on to lock the higher job and commits, and the renewal
  // then renews both
  const { low, high, outcome } = await whileACommitHoldsTheLowerJob('SET lease_until', (pool, jobs) =>
    renewLeases(pool, [jobs.high, jobs.low], 30_000),
  )
  expect(outcome).toEqual(new Set([low.id, high.id]))
})

// Regression (review3's item 5): deleting a chatbot deleted its jobs in the order its plan met them (the
// chatbot index's, heap order: a job updated since comes after a newer one), a commit (lockClaims) locks
// them in id order: a deletion during the commit of two of its jobs deadlocked with it (40P01).
it('deleting a chatbot locks its jobs in id order, as a commit does: it waits for a commit holding the lower job without holding the higher', async () => {
  // Given a commit that has locked the lower job, when the chatbot is deleted, then the deletion waits,
  // the commit goes on to lock the higher job and commits, and the deletion then removes both
  const { chatbotId, outcome } = await whileACommitHoldsTheLowerJob(
    'DELETE FROM analysis_jobs',
    (pool, jobs) => forgetChatbot(pool, jobs.chatbotId),
  )
  expect(outcome).toBeUndefined()
  expect(await jobsOf(chatbotId)).toEqual([])
})
