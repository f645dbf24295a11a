import { withTransaction } from '@cas/db'
import type { RecordedEvent } from '@cas/events'
import type pg from 'pg'
import type { MessageToAnalyze } from './analyzer.ts'
import { forgetPooledConversation } from './topics/topic-store.ts'

export interface AnalysisJob {
  readonly id: string
  /**
   * The job's key: the conversation.messages-captured event it came from, or for a re-analysis a key
   * derived from that event, the analyzer version and the run (reanalyze.ts).
   */
  readonly sourceEventId: string
  /** A re-analysis': the capture event it analyses again (the analysis events' causation, as sourceEventId is a live job's). */
  readonly causeEventId?: string
  /** The correlation id of that event (its capture request's), carried on to the analysis events. */
  readonly correlationId?: string
  readonly conversationId: string
  readonly orgId: string
  readonly chatbotId: string
  readonly messages: readonly MessageToAnalyze[]
  /** Including the attempt this claim starts. */
  readonly attempts: number
}

interface JobRow {
  id: string
  source_event_id: string
  cause_event_id: string | null
  correlation_id: string | null
  conversation_id: string
  org_id: string
  chatbot_id: string
  messages: MessageToAnalyze[]
  attempts: number
}

export interface NewJob {
  readonly sourceEventId: string
  /** When sourceEventId is not the capture event itself (a re-analysis): that event. */
  readonly causeEventId?: string
  /** Since when its analysis is owed: its capture's time (default: when queued, as for a re-analysis). */
  readonly requestedAt?: Date
  readonly correlationId?: string
  readonly conversationId: string
  readonly orgId: string
  readonly chatbotId: string
  readonly messages: readonly MessageToAnalyze[]
}

/**
 * The analysis job of a capture (conversation.messages-captured): the consumer's, keyed by the event, and
 * a re-analysis', keyed by (event, analyzer version) (reanalyze.ts's reanalysisJobKey) and owed since it
 * was queued.
 */
export function jobFromCapture(
  event: RecordedEvent<'conversation.messages-captured'>,
  key: { readonly sourceEventId: string; readonly causeEventId?: string; readonly requestedAt?: Date },
): NewJob {
  return {
    ...key,
    ...(event.metadata.correlationId ? { correlationId: event.metadata.correlationId } : {}),
    conversationId: event.streamId,
    orgId: event.orgId,
    chatbotId: event.chatbotId,
    messages: event.payload.messages.map(({ id, role, content, sentAt }) => ({ id, role, content, sentAt })),
  }
}

/** Queues jobs; an event already queued (redelivered) is ignored. */
export async function enqueueJobs(
  client: pg.ClientBase | pg.Pool,
  jobs: readonly NewJob[],
  now: Date,
): Promise<void> {
  if (jobs.length === 0) return
  await client.query({
    name: 'cas-analysis-jobs-enqueue',
    text: `INSERT INTO analysis_jobs (source_event_id, conversation_id, org_id, chatbot_id, messages, correlation_id,
       requested_at, cause_event_id, next_attempt_at, created_at, updated_at)
     SELECT j.source_event_id, j.conversation_id, j.org_id, j.chatbot_id, j.messages, j.correlation_id,
            coalesce(j.requested_at, $7), j.cause_event_id, $7, $7, $7
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::jsonb[], $6::text[], $8::timestamptz[],
                   $9::uuid[])
            AS j(source_event_id, conversation_id, org_id, chatbot_id, messages, correlation_id, requested_at,
                 cause_event_id)
     ON CONFLICT (source_event_id) DO NOTHING`,
    values: [
      jobs.map((j) => j.sourceEventId),
      jobs.map((j) => j.conversationId),
      jobs.map((j) => j.orgId),
      jobs.map((j) => j.chatbotId),
      jobs.map((j) => JSON.stringify(j.messages)),
      jobs.map((j) => j.correlationId ?? null),
      now,
      jobs.map((j) => j.requestedAt ?? null),
      jobs.map((j) => j.causeEventId ?? null),
    ],
  })
}

/**
 * Whether at least `n` jobs are waiting or being worked on (the queue the consumer pauses at): counts no
 * further than `n`. The open jobs by the predicate of the index that holds them alone,
 * analysis_jobs_conversation_open (`status NOT IN ('done', 'dead')`: pending or running).
 */
export async function hasPendingJobs(client: pg.ClientBase | pg.Pool, n: number): Promise<boolean> {
  const { rows } = await client.query<{ full: boolean }>({
    name: 'cas-analysis-jobs-pending',
    text: `SELECT count(*) >= $1 AS full FROM (
       SELECT 1 FROM analysis_jobs WHERE status NOT IN ('done', 'dead') LIMIT $1) AS queued`,
    values: [n],
  })
  return rows[0]!.full
}

export interface JobCounts {
  /** Jobs waiting: queued, running, or waiting for a retry. */
  readonly waiting: number
  /** Jobs dead-lettered (kept for inspection). */
  readonly dead: number
  /** Since when the oldest waiting job's analysis has been owed (its `requestedAt`); null when none waits. */
  readonly oldestWaitingSince: Date | null
}

/**
 * The queue's counts: the open jobs (pending or running) counted and their oldest requested_at taken in one
 * read of analysis_jobs_conversation_open, by its predicate. An index on requested_at of the open jobs
 * served the oldest alone, at the cost of an entry written by every claim (migration 0056).
 */
export const JOB_COUNTS = `SELECT o.waiting, o.oldest, (SELECT count(*)::int FROM analysis_dead_letters) AS dead
   FROM (SELECT count(*)::int AS waiting, min(requested_at) AS oldest FROM analysis_jobs
          WHERE status NOT IN ('done', 'dead')) AS o`

/** The queue, for the metrics and the pipeline status. */
export async function jobCounts(db: pg.ClientBase | pg.Pool): Promise<JobCounts> {
  const { rows } = await db.query<{ waiting: number; dead: number; oldest: Date | null }>(JOB_COUNTS)
  const { waiting, dead, oldest } = rows[0]!
  return { waiting, dead, oldestWaitingSince: oldest }
}

/**
 * The claim ($1: how many, $2: now, $3: the lease in milliseconds). A lease is timed by the database's clock,
 * not the worker's: one whose clock ran a lease behind gave leases already over by every other worker's, and
 * one ahead took every job the others held (each theft an attempt). The due jobs are read in order from the partial
 * index on (next_attempt_at, id) (migration 0044), as many as asked, and updated by primary-key probes
 * (`= ANY(ARRAY(…))`): no sort of the whole queue, no scan of the table. A re-analysis queues its jobs
 * with one next_attempt_at, so by next_attempt_at alone the claim sorted every waiting job by id, and the
 * planner joined the chosen ids back to a scan of the table (with `IN`): 7.3 ms a claim of 48 with 4,500
 * jobs queued, 0.9 ms now (bench/FINDINGS.md "perf450"; lookups.int.test.ts). A job with an earlier one of
 * its conversation still open is passed over (claimJobs): a probe per job read of the index on
 * (conversation_id, id) of the jobs not done or dead (migration 0046). The probe is a subplan (`OFFSET 0`
 * keeps the planner from turning it into a join) and its `NOT IN ('done', 'dead')` matches that index's
 * predicate only: as an anti join on `status IN ('pending', 'running')`, statistics taken while no job
 * waited made the planner read every waiting job for every waiting job (20 million rows, 9 s a claim of a
 * 4,500-job re-analysis; bench/FINDINGS.md "The claim order's quadratic plan"). Whatever the statistics,
 * a claim now reads at most the waiting jobs once, and with statistics that see them, only what it claims.
 * The due pending jobs and the running ones whose lease ran out are read apart, each in the claim's order
 * from an index of its own (migration 0054), and the first `$1` of the two taken. The due ones by the
 * queue's index on (next_attempt_at, id) of `(status = 'pending') IS TRUE`: a predicate that implies no
 * other index's, so that statistics taken while no job waited (autovacuum between two re-analyses) cannot
 * send the planner to analysis_jobs_waiting_since (dropped since, migration 0056), where it read every
 * waiting job, probed each, and sorted
 * them for the first few (~1,190 shared blocks a claim of 16 in DSTC11's window; bench/FINDINGS.md "perf9").
 * The lapsed ones by lease_until alone (only a running job holds a lease: a constraint says so), on an index
 * of the leases: the jobs in flight, which kept the next_attempt_at they were claimed at, are no longer
 * read ahead of every due job. When a lease has lapsed (a worker died), the statement holds the row locks
 * of up to that many due jobs more than it claims until it ends.
 */
const EARLIER_NONE_OPEN = `NOT EXISTS (SELECT 1 FROM analysis_jobs e
                            WHERE e.conversation_id = analysis_jobs.conversation_id AND e.id < analysis_jobs.id
                              AND e.status NOT IN ('done', 'dead') OFFSET 0)`

export const CLAIM_JOBS = `UPDATE analysis_jobs j SET status = 'running', attempts = j.attempts + 1,
        lease_until = statement_timestamp() + $3::float8 * interval '1 millisecond', updated_at = $2
      WHERE j.id = ANY(ARRAY(
        SELECT id FROM (
          SELECT * FROM (SELECT id, next_attempt_at FROM analysis_jobs
                          WHERE (status = 'pending') IS TRUE AND next_attempt_at <= $2 AND ${EARLIER_NONE_OPEN}
                          ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) AS due
          UNION ALL
          SELECT * FROM (SELECT id, next_attempt_at FROM analysis_jobs
                          WHERE lease_until <= statement_timestamp() AND ${EARLIER_NONE_OPEN}
                          ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) AS lapsed) AS claimable
         ORDER BY next_attempt_at, id LIMIT $1))
      RETURNING j.id::text, j.source_event_id, j.cause_event_id, j.correlation_id, j.conversation_id, j.org_id,
                j.chatbot_id, j.messages, j.attempts`

/**
 * The claim's planner setting, in its transaction: the due jobs read in order from the queue's index, never
 * every waiting job read and sorted. On a table never analysed (a new database's first re-analysis) the
 * planner estimated one waiting job and took a bitmap scan of that index and a sort: every waiting job read
 * and probed for each claim (3,078 shared blocks for a claim of 16 with 1,500 queued, 361 in order;
 * bench/FINDINGS.md "perf9").
 */
export const CLAIM_PLAN = 'SET LOCAL enable_sort = off'

/**
 * Claims up to `limit` jobs that are due, or whose worker's lease ran out (it died mid-call), for
 * `leaseMs`. Committed at once: the analyzer is then called outside any transaction. A conversation's
 * jobs are analysed in the order they were queued (its captures' order), each once the one before it is
 * done or dead-lettered: a message is analysed with the stored conversation before it (an answer to the
 * bot's question, topics/answers.ts), whether its turns came in one capture or several, live or again.
 */
export async function claimJobs(
  pool: pg.Pool,
  limit: number,
  leaseMs: number,
  now: Date,
): Promise<AnalysisJob[]> {
  // One attempt (a failed claim is the loop's to retry); a connection whose ROLLBACK fails is destroyed.
  const rows = await withTransaction(
    pool,
    async (client) => {
      await client.query(CLAIM_PLAN)
      const { rows } = await client.query<JobRow>({
        name: 'cas-analysis-jobs-claim',
        text: CLAIM_JOBS,
        values: [limit, now, leaseMs],
      })
      return rows
    },
    { retries: 0 },
  )
  return rows.map((r) => ({
    id: r.id,
    sourceEventId: r.source_event_id,
    ...(r.cause_event_id === null ? {} : { causeEventId: r.cause_event_id }),
    ...(r.correlation_id === null ? {} : { correlationId: r.correlation_id }),
    conversationId: r.conversation_id,
    orgId: r.org_id,
    chatbotId: r.chatbot_id,
    messages: r.messages,
    attempts: r.attempts,
  }))
}

export async function completeJobs(
  client: pg.ClientBase | pg.Pool,
  jobIds: readonly string[],
  now: Date,
): Promise<void> {
  await client.query({
    name: 'cas-analysis-jobs-done',
    text: "UPDATE analysis_jobs SET status = 'done', lease_until = NULL, updated_at = $2 WHERE id = ANY($1::bigint[])",
    values: [jobIds, now],
  })
}

/**
 * A worker's claim of a job: the job and the attempt its claim started. Every claim adds one to `attempts`
 * (CLAIM_JOBS), so while the job is `running` with that count it is still this claim's; once its lease ran
 * out and another worker claimed it, the count moved on and this claim is fenced out (claimHeld: renewLeases,
 * lockClaims, retryJob, deferJob). deferJob takes back its own claim's count only, so a count is never
 * `running` again for anyone but a later claim that made it so after the defer.
 */
export interface JobClaim {
  readonly id: string
  readonly attempts: number
}

/**
 * The fence, in SQL: the job `j` is still the claim's whose attempt count is `attempts` (an expression: a
 * parameter, or the claims' column). Every statement that acts on a claim (renewLeases, lockClaims,
 * retryJob, deferJob) names the job `j`.
 */
function claimHeld(attempts: string): string {
  return `j.status = 'running' AND j.attempts = ${attempts}`
}

/**
 * Locks the claimed jobs still in the queue until the transaction ends, in id order: by job id, whether the
 * claim still holds it (false: fenced out, another worker claimed it since). A job removed meanwhile (its
 * chatbot deleted, its conversation erased) is missing.
 */
export async function lockClaims(
  client: pg.ClientBase,
  claims: readonly JobClaim[],
): Promise<Map<string, boolean>> {
  const { rows } = await client.query<{ id: string; ours: boolean }>({
    name: 'cas-analysis-jobs-lock',
    text: `SELECT j.id::text, (${claimHeld('c.attempts')}) AS ours
             FROM analysis_jobs j JOIN unnest($1::bigint[], $2::int[]) AS c(id, attempts) ON j.id = c.id
            ORDER BY j.id FOR UPDATE OF j`,
    values: [claims.map((c) => c.id), claims.map((c) => c.attempts)],
  })
  return new Map(rows.map((r) => [r.id, r.ours]))
}

/**
 * Extends the lease of those of the claims still this worker's to `leaseMs` from now by the database's
 * clock (CLAIM_JOBS): one statement for every job in flight. Returns the ids still held; a job missing was
 * claimed by another worker (fenced out). The jobs are locked in id order, as a commit's (lockClaims) are:
 * locked in the order the plan met them (the queue index's, next_attempt_at first), a renewal during a
 * commit of two of its jobs could hold one the commit was about to lock while waiting for the other, and
 * Postgres broke that deadlock by failing one of them.
 */
export async function renewLeases(
  pool: pg.Pool,
  claims: readonly JobClaim[],
  leaseMs: number,
): Promise<Set<string>> {
  if (claims.length === 0) return new Set()
  const { rows } = await pool.query<{ id: string }>({
    name: 'cas-analysis-jobs-renew',
    text: `UPDATE analysis_jobs j SET lease_until = statement_timestamp() + $3::float8 * interval '1 millisecond'
       FROM (SELECT l.id, c.attempts FROM analysis_jobs l
               JOIN unnest($1::bigint[], $2::int[]) AS c(id, attempts) ON l.id = c.id
              ORDER BY l.id FOR UPDATE OF l) AS c
      WHERE j.id = c.id AND ${claimHeld('c.attempts')}
      RETURNING j.id::text`,
    values: [claims.map((c) => c.id), claims.map((c) => c.attempts), leaseMs],
  })
  return new Set(rows.map((r) => r.id))
}

/**
 * Puts a job back in the queue for another attempt at `at`, if the claim is still the job's (its lease
 * not lost to another worker); says whether it was.
 */
export async function retryJob(
  pool: pg.Pool,
  claim: JobClaim,
  error: string,
  at: Date,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE analysis_jobs j SET status = 'pending', lease_until = NULL, next_attempt_at = $3, last_error = $2,
       updated_at = $4 WHERE j.id = $1 AND ${claimHeld('$5')}`,
    [claim.id, error, at, now, claim.attempts],
  )
  return rowCount === 1
}

/**
 * Puts a claimed job back to wait until `at` without counting the attempt: it was not tried (its chatbot's
 * settings have not reached this service yet). Only while the claim is still the job's.
 */
export async function deferJob(pool: pg.Pool, claim: JobClaim, at: Date, now: Date): Promise<void> {
  await pool.query(
    `UPDATE analysis_jobs j SET status = 'pending', attempts = j.attempts - 1, lease_until = NULL,
       next_attempt_at = $2, updated_at = $3 WHERE j.id = $1 AND ${claimHeld('$4')}`,
    [claim.id, at, now, claim.attempts],
  )
}

export async function deadLetterJob(client: pg.ClientBase, job: AnalysisJob, reason: string, now: Date) {
  await client.query(
    "UPDATE analysis_jobs SET status = 'dead', lease_until = NULL, last_error = $2, updated_at = $3 WHERE id = $1",
    [job.id, reason, now],
  )
  await client.query(
    `INSERT INTO analysis_dead_letters (job_id, conversation_id, org_id, chatbot_id, reason, attempts, failed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_id) DO NOTHING`,
    [job.id, job.conversationId, job.orgId, job.chatbotId, reason, job.attempts, now],
  )
}

/**
 * Deletes the jobs `where` selects, locked in id order first, as a commit's
 * (lockClaims) and a renewal's are: deleted in the order the plan met them (an index's, heap order), a
 * deletion during a commit of two of the jobs could hold one the commit was about to lock while waiting
 * for the other, and Postgres broke that deadlock by failing one of them.
 */
const deleteJobsWhere = (where: string) => `DELETE FROM analysis_jobs j
      USING (SELECT id FROM analysis_jobs WHERE ${where} ORDER BY id FOR UPDATE) AS l
      WHERE j.id = l.id`

/**
 * An erased conversation's jobs, found on analysis_jobs_chatbot_conversation by both its columns: by
 * conversation_id alone no index holds the done jobs, and the deletion read every job ever analysed
 * (migration 0057; bench/FINDINGS.md "perf11").
 */
export const DELETE_CONVERSATION_JOBS = deleteJobsWhere('chatbot_id = $1 AND conversation_id = $2')
export const DELETE_CHATBOT_JOBS = deleteJobsWhere('chatbot_id = $1')

/**
 * Removes every job (with the message content it holds), result and dead letter of a deleted chatbot,
 * and its topic state (the embeddings of its end users' messages among it).
 */
export async function forgetChatbot(client: pg.ClientBase | pg.Pool, chatbotId: string): Promise<void> {
  await client.query(DELETE_CHATBOT_JOBS, [chatbotId])
  await client.query('DELETE FROM analysis_results WHERE chatbot_id = $1', [chatbotId])
  await client.query('DELETE FROM topic_models WHERE chatbot_id = $1', [chatbotId])
  await client.query('DELETE FROM analysis_signal_state WHERE chatbot_id = $1', [chatbotId])
  await client.query('DELETE FROM analysis_chatbots WHERE chatbot_id = $1', [chatbotId])
  await client.query('DELETE FROM analysis_commands WHERE chatbot_id = $1', [chatbotId])
  await client.query('DELETE FROM analysis_reanalyses WHERE chatbot_id = $1', [chatbotId])
}

/** Removes the jobs (and the content they hold), results and pooled embeddings of an erased conversation. */
export async function forgetConversation(
  client: pg.ClientBase,
  chatbotId: string,
  conversationId: string,
): Promise<void> {
  await client.query(DELETE_CONVERSATION_JOBS, [chatbotId, conversationId])
  await client.query('DELETE FROM analysis_results WHERE conversation_id = $1', [conversationId])
  await client.query('DELETE FROM analysis_signal_state WHERE conversation_id = $1', [conversationId])
  await forgetPooledConversation(client, chatbotId, conversationId)
}

/** The analysis events' metadata: caused by the capture event, in the flow (correlation) of its request. */
export function traceOf(job: AnalysisJob): Record<string, string> {
  return {
    causationId: job.causeEventId ?? job.sourceEventId,
    ...(job.correlationId === undefined ? {} : { correlationId: job.correlationId }),
  }
}
