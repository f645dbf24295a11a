import { type BackgroundLoop, backgroundLoop, GroupCommitter, retryDelayMs, withTransaction } from '@cas/db'
import { appendToStream, appendToStreams, BATCH_RETRY } from '@cas/eventlog'
import { type NewEvent, newEvent } from '@cas/events'
import { chatbotsWithDestroyedKeys } from '@cas/keyring'
import { chatbotSignals, chatbotTopics } from '@cas/settings'
import type pg from 'pg'
import { type AnalysisContext, type Analyzer, AnalyzerError, type MessageToAnalyze } from './analyzer.ts'
import { chatbotSettings } from './chatbot-settings.ts'
import { type Analyzed, analysisAppend, commitResults, validDate } from './job-commit.ts'
import {
  type AnalysisJob,
  claimJobs,
  deadLetterJob,
  deferJob,
  forgetChatbot,
  type JobClaim,
  lockClaims,
  renewLeases,
  retryJob,
  traceOf,
} from './jobs.ts'
import { withEmotions } from './signals/cues.ts'
import type { RefinePolicy } from './signals/llm-refine.ts'
import { SignalScorer } from './signals/scorer.ts'
import { sweepDueSignals } from './signals/store.ts'
import { TopicStore, vectorOf } from './topics/topic-store.ts'

// The commit's statements, where the reclusterer and the tests have read them.
export { CONVERSATIONS_RESULTS, RESULTS_INSERT } from './job-commit.ts'

export interface JobRunnerOptions {
  readonly pool: pg.Pool
  readonly analyzer: Analyzer
  /** Jobs analyzed at once. */
  readonly concurrency: number
  /** Attempts before a job is dead-lettered. */
  readonly maxAttempts: number
  /**
   * How long a claimed job is this worker's without a renewal (default 30 s): a worker that dies loses its
   * jobs after this, and the later jobs of their conversations wait as long.
   */
  readonly leaseMs?: number
  /**
   * How often the leases of the jobs in flight are renewed, one statement for all (default a third of
   * leaseMs: two renewals in a row may fail before a job is lost).
   */
  readonly renewMs?: number
  /** First retry delay; it doubles per attempt, with jitter, up to 5 minutes. */
  readonly retryBaseMs?: number
  readonly pollIntervalMs?: number
  /**
   * The longest a job's results wait for more jobs' to share their commit, while others are still being
   * analysed and fewer than a quarter of `concurrency` wait (default 50 ms, the claim loop's look).
   */
  readonly commitHoldMs?: number
  readonly now?: () => Date
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
  /** Called once a job's results and events are committed. */
  readonly onAnalyzed?: (job: AnalysisJob) => void
  /** Topics a chatbot's end users' messages may make at most (ANALYSIS_MAX_TOPICS). */
  readonly maxTopics?: number
  /** How often conversations whose quiet period has passed are looked at again (abandonment); default 30 s. */
  readonly signalSweepMs?: number
  /** SIGNALS_LLM_REFINE=borderline: the LLM's verdicts apply, borderline signals are marked for it. */
  readonly signalRefine?: RefinePolicy
}

export interface JobRunnerStats {
  analyzedMessages: number
  jobsDone: number
  retries: number
  deadLetters: number
  inFlight: number
  /** Jobs whose lease another worker took (this one's renewals lapsed): their results discarded. */
  fencedOut: number
}

/** The lease of a claimed job without renewal (JobRunnerOptions.leaseMs). */
export const DEFAULT_LEASE_MS = 30_000

/**
 * Claims due jobs, analyzes them outside any transaction, and commits the results and their events (or
 * schedules a retry, or dead-letters the job after the last attempt with an analysis.failed event).
 * Each job stands alone: a conversation that keeps failing never holds the others up. Results are
 * committed by group commit: jobs finishing while another commit runs share the next transaction (one
 * statement per step for all of them); a conversation's jobs commit one after the other.
 */
export class AnalysisJobRunner {
  readonly stats: JobRunnerStats = {
    analyzedMessages: 0,
    jobsDone: 0,
    retries: 0,
    deadLetters: 0,
    inFlight: 0,
    fencedOut: 0,
  }
  /** The claims of the jobs in flight, by job id: their leases are renewed until they are settled. */
  private readonly held = new Map<string, JobClaim>()
  private renewTimer: NodeJS.Timeout | undefined
  private renewing: Promise<void> | undefined
  private readonly inFlight = new Set<Promise<void>>()
  /** The jobs in flight not yet handed to the committer: being analysed (the `concurrency` slots). */
  private analysing = 0
  private readonly loop: BackgroundLoop
  private readonly now: () => Date
  private readonly log: NonNullable<JobRunnerOptions['log']>
  private readonly committer: GroupCommitter<Analyzed, boolean>
  private readonly topicStore = new TopicStore()
  private signalScorer: SignalScorer | undefined
  private lastSweep = 0

  constructor(private readonly opts: JobRunnerOptions) {
    this.now = opts.now ?? (() => new Date())
    this.log = opts.log ?? (() => {})
    this.loop = backgroundLoop({
      run: () => this.claimAndStart(),
      intervalMs: opts.pollIntervalMs ?? 50,
      // The database is away: look again later, less often the longer it stays away.
      retry: BATCH_RETRY,
      onError: (err, attempt) =>
        this.log('claiming analysis jobs failed', { err: (err as Error).message, attempt }),
    })
    this.committer = new GroupCommitter(
      opts.pool,
      {
        keyOf: (analyzed) => analyzed.job.conversationId,
        run: async (client, group) => {
          const fenced = await commitResults(client, group, {
            analyzer: this.opts.analyzer,
            topicStore: this.topicStore,
            maxTopics: this.opts.maxTopics,
            signalRefine: this.opts.signalRefine,
            now: this.now,
          })
          return group.map((a) => ({ ok: true, value: !fenced.has(a.job.id) }))
        },
      },
      {
        maxTransactions: 1,
        maxGroup: 64,
        // Fewer, larger commits while the analyzer is busy: a commit's statements and WAL flush are mostly
        // per commit, not per job (bench/FINDINGS.md perf5). Held while jobs are still being analysed and
        // fewer than the claim's quarter of the slots wait, at most commitHoldMs; never when nothing more is
        // being analysed, so a lone message is committed at once.
        holdWhile: (waiting) => this.analysing > 0 && waiting < Math.ceil(opts.concurrency / 4),
        holdMs: opts.commitHoldMs ?? 50,
      },
    )
  }

  start(): void {
    this.loop.start()
    if (this.renewTimer) return
    const every = this.opts.renewMs ?? Math.floor(this.leaseMs / 3)
    this.renewTimer = setInterval(() => {
      this.renewing ??= this.renewLeases().finally(() => {
        this.renewing = undefined
      })
    }, every)
    this.renewTimer.unref()
  }

  private get leaseMs(): number {
    return this.opts.leaseMs ?? DEFAULT_LEASE_MS
  }

  /**
   * Extends the lease of every job in flight (claimed and not yet settled, its commit included), one
   * statement for all. A failure (the database away) is logged and the next turn tries again; a job no
   * longer ours was claimed by another worker after its lease ran out: its commit will be fenced out.
   */
  private async renewLeases(): Promise<void> {
    const claims = [...this.held.values()]
    if (claims.length === 0) return
    try {
      const kept = await renewLeases(this.opts.pool, claims, this.leaseMs)
      for (const claim of claims) {
        if (!kept.has(claim.id) && this.held.get(claim.id) === claim) {
          this.log('analysis job lease lost to another worker', { jobId: claim.id, attempt: claim.attempts })
        }
      }
    } catch (err) {
      this.log('renewing analysis job leases failed', { err: (err as Error).message, jobs: claims.length })
    }
  }

  /** Looks for due jobs now (jobs were just queued), not at the next look. */
  wake(): void {
    this.loop.wake()
  }

  /** Stops claiming, and waits for the jobs in flight to finish and commit. */
  async stop(): Promise<void> {
    await this.loop.stop()
    // The jobs in flight keep their leases while they finish.
    await Promise.allSettled([...this.inFlight])
    clearInterval(this.renewTimer)
    this.renewTimer = undefined
    await this.renewing
  }

  /**
   * One turn of the loop: claims what the free slots can take and starts analyzing it; says whether to
   * claim again at once (it claimed, and slots are left). A job handed to the committer, or finished,
   * wakes the loop. A job's slot is free once it is analysed: the next jobs are analysed while the
   * earlier ones commit (the analyzer thread would otherwise wait for each commit, and the commit for
   * each batch's analysis); at most `concurrency` more wait for their commit.
   */
  private async claimAndStart(): Promise<boolean> {
    const { concurrency } = this.opts
    const free = Math.min(concurrency - this.analysing, 2 * concurrency - this.inFlight.size)
    let claimed: AnalysisJob[] = []
    // While jobs are being analysed, a claim waits for a quarter of the slots: a claim (and its settings
    // read) per few jobs cost Postgres more than the jobs' results (bench:analysis --statements); the
    // jobs still being analysed keep the analyzer busy meanwhile, and each one analysed wakes the loop.
    if (free > 0 && (this.analysing === 0 || free >= Math.ceil(concurrency / 4))) {
      claimed = await claimJobs(this.opts.pool, free, this.leaseMs, this.now())
    }
    await this.maybeSweep()
    // One read of the settings for the claim; a job whose read failed goes the way of any failure.
    const contexts = this.contextsFor(claimed)
    contexts.catch(() => {})
    const turns = this.turnsBefore(claimed)
    turns.catch(() => {})
    for (const job of claimed) {
      const claim = { id: job.id, attempts: job.attempts }
      this.held.set(job.id, claim)
      this.analysing++
      let analysed = false
      const release = () => {
        if (analysed) return
        analysed = true
        this.analysing--
        // Its results may have been held for this job's: with nothing more being analysed they go now.
        this.committer.reconsider()
        this.loop.wake()
      }
      const task: Promise<void> = this.process(job, contexts, turns, release).finally(() => {
        if (this.held.get(job.id) === claim) this.held.delete(job.id)
        release()
        this.inFlight.delete(task)
        this.stats.inFlight = this.inFlight.size
        this.loop.wake()
      })
      this.inFlight.add(task)
    }
    this.stats.inFlight = this.inFlight.size
    return (
      claimed.length > 0 &&
      this.analysing <= concurrency - Math.ceil(concurrency / 4) &&
      this.inFlight.size < 2 * concurrency
    )
  }

  /** Analyses the job and commits its results; `analysed` is called once it waits for its commit only. */
  private async process(
    job: AnalysisJob,
    contexts: Promise<Map<string, ChatbotContext>>,
    turns: Promise<Map<string, TurnBefore>>,
    analysed: () => void,
  ): Promise<void> {
    try {
      const context = (await contexts).get(job.chatbotId) ?? NOT_YET_KNOWN
      if (context === DELETED) {
        // The chatbot was deleted: nothing to analyze for anymore, and its content must not stay here.
        await withTransaction(this.opts.pool, (client) => forgetChatbot(client, job.chatbotId))
        return
      }
      if (context === NOT_YET_KNOWN) {
        // Its capture reached this service before its chatbot.created (another topic, or another
        // partition of the journal): analyzed once the chatbot's settings (its own topics) are here.
        const now = this.now()
        await deferJob(this.opts.pool, job, new Date(now.getTime() + SETTINGS_WAIT_MS), now)
        return
      }
      const { results, cues } = await this.analyze(job, context, (await turns).get(job.id))
      if (
        results.length !== job.messages.length ||
        results.some((r, i) => r.messageId !== job.messages[i]?.id)
      ) {
        throw new AnalyzerError(
          'malformed_response',
          'the analyzer returned results for other messages',
          true,
        )
      }
      const scored = cues.map((cue, i) => withEmotions(cue, results[i]!.emotions))
      const committed = this.committer.submit({ job, results, context, scored })
      analysed()
      if (!(await committed)) {
        this.fencedOut(
          job,
          'analysis job fenced out: its lease was lost to another worker; results discarded',
        )
        return
      }
      this.stats.analyzedMessages += results.length
      this.stats.jobsDone++
      this.opts.onAnalyzed?.(job)
    } catch (err) {
      await this.fail(job, err).catch((failErr: Error) =>
        // The lease expires and the job is claimed again: still never lost.
        this.log('could not record an analysis failure', { jobId: job.id, err: failErr.message }),
      )
    }
  }

  /**
   * The job's analysis and its messages' signal cues: with the language model, its units embedded in the
   * same request as the analysis (one wait for the model's thread); without it, no cues.
   */
  private async analyze(job: AnalysisJob, context: AnalysisContext, turnBefore: TurnBefore | undefined) {
    // The model may still be loading: which analyzer is in use is known once it is ready.
    await this.opts.analyzer.ready
    const semantic = this.opts.analyzer.semantic
    if (!semantic) {
      const results = await this.opts.analyzer.analyzeMessages(job.messages, context)
      return { results, cues: job.messages.map(() => undefined) }
    }
    // The job's first message follows the stored conversation's last turn before it, not nothing.
    const messages: MessageToAnalyze[] = job.messages.map((m, i) =>
      i === 0 ? { ...m, turnBefore: turnBefore ?? {} } : m,
    )
    this.signalScorer ??= new SignalScorer(semantic)
    const prepared = await this.signalScorer.prepare(job.messages, context.signals)
    const { results, embeddings } = await semantic.analyzeAndEmbed(messages, context, prepared.texts)
    // Checked by the caller when the results are not the job's.
    const cues = results.length === job.messages.length ? prepared.cues(embeddings, results) : []
    return { results, cues }
  }

  /**
   * Every signalSweepMs: the conversations whose quiet period has passed, decided again as of now
   * (abandonment), a hundred at a time, each batch in a transaction of its own with its events.
   */
  private async maybeSweep(): Promise<void> {
    const every = this.opts.signalSweepMs ?? 30_000
    if (Date.now() - this.lastSweep < every) return
    this.lastSweep = Date.now()
    try {
      await this.sweepSignals()
    } catch (err) {
      this.log('sweeping conversation signals failed', { err: (err as Error).message })
    }
  }

  /** Decides again the signals of every conversation whose quiet period has passed. */
  async sweepSignals(): Promise<number> {
    let total = 0
    for (;;) {
      const appended = await withTransaction(this.opts.pool, async (client) => {
        const now = this.now()
        const appends = await sweepDueSignals(
          client,
          this.opts.analyzer.info,
          now,
          100,
          this.opts.signalRefine,
        )
        if (appends.length > 0) await appendToStreams(client, appends, { now: this.now })
        return appends.length
      })
      total += appended
      if (appended < 100) return total
    }
  }

  /**
   * The analysis context of each chatbot of the jobs, from the settings this service keeps from chatbot
   * events; DELETED for a deleted chatbot, none for one whose chatbot.created it has not applied yet.
   */
  private async contextsFor(jobs: readonly AnalysisJob[]): Promise<Map<string, ChatbotContext>> {
    if (jobs.length === 0) return new Map()
    const ids = [...new Set(jobs.map((j) => j.chatbotId))]
    // Deleted at claim time, as the gateway sees it (its key destroyed), even before this service has
    // applied the chatbot.deleted that will forget it.
    const [settings, deleted] = await Promise.all([
      chatbotSettings(this.opts.pool, ids),
      chatbotsWithDestroyedKeys(this.opts.pool, ids),
    ])
    const contexts = new Map<string, ChatbotContext>()
    for (const [id, stored] of settings) contexts.set(id, contextOf(stored))
    for (const id of deleted) contexts.set(id, DELETED)
    return contexts
  }

  /**
   * What the stored conversation says of what came before each job's first message, for the jobs whose
   * first message has a sentAt: the latest result of its conversation sent before it, in the signals' order
   * (signals/store.ts conversationMessages), whose slot question an end user's answer is judged against
   * (topics/answers.ts); and whether an end user's request of it came before (a result with a topic), after
   * which a request makes a topic only when it clearly asks (topics/requests.ts requestsMakingTopics). The
   * conversation's earlier jobs are done (claimJobs claims a conversation's jobs in order), so those results
   * are stored, whichever capture they came in. One statement per claim, index probes per job.
   */
  private async turnsBefore(jobs: readonly AnalysisJob[]): Promise<Map<string, TurnBefore>> {
    const opening = jobs.flatMap((job) => {
      const sentAt = validDate(job.messages[0]?.sentAt)
      return sentAt ? [{ job, sentAt }] : []
    })
    const turns = new Map<string, TurnBefore>()
    if (opening.length === 0) return turns
    const { rows } = await this.opts.pool.query<{
      job_id: string
      slot_question: Buffer | null
      requested: boolean
    }>({
      name: 'cas-analysis-turn-before',
      text: TURN_BEFORE,
      values: [
        opening.map((o) => o.job.id),
        opening.map((o) => o.job.conversationId),
        opening.map((o) => o.sentAt),
      ],
    })
    for (const row of rows) {
      turns.set(row.job_id, {
        ...(row.slot_question ? { slotQuestion: vectorOf(row.slot_question) } : {}),
        ...(row.requested ? { requested: true } : {}),
      })
    }
    return turns
  }

  /**
   * Commits analyzed jobs in the caller's transaction: the end users' messages placed in their chatbots'
   * topics (topics/placement.ts), the results, then per conversation the results' event and the
   * conversation's new summary (also for conversations whose earlier messages a new topic took), the
   * topic events, then the jobs marked done. Jobs removed meanwhile (their chatbot deleted, their
   * conversation erased) are left out. No two jobs of one conversation come together (the committer's
   * key), so each conversation's summary is read after its own results. Jobs whose claim is no longer
   * this worker's (its lease ran out and another worker claimed them: JobClaim) are fenced out: left out
   * and returned, their results discarded; the lock keeps them ours until the commit.
   */
  private async fail(job: AnalysisJob, err: unknown): Promise<void> {
    const retryable = err instanceof AnalyzerError ? err.retryable : true
    const reason =
      err instanceof AnalyzerError ? `${err.code}: ${err.message}` : `error: ${(err as Error).message}`
    const now = this.now()
    if (retryable && job.attempts < this.opts.maxAttempts) {
      const delay = retryDelayMs(
        { baseMs: this.opts.retryBaseMs ?? 1_000, maxMs: 300_000, jitter: 'equal' },
        job.attempts - 1,
      )
      if (!(await retryJob(this.opts.pool, job, reason, new Date(now.getTime() + delay), now))) {
        this.fencedOut(job, 'analysis failed after its lease was lost to another worker; left to it', {
          reason,
        })
        return
      }
      this.stats.retries++
      this.log('analysis failed; will retry', { ...jobLogFields(job), attempt: job.attempts, reason })
      return
    }
    // Counted and logged once it committed: the transaction may run again (a serialization failure).
    const wanted = await withTransaction(this.opts.pool, async (client) => {
      const found = await this.stillWanted(client, job)
      if (found !== 'ours') return found
      await deadLetterJob(client, job, reason, now)
      await this.appendAnalysisEvents(client, job, [
        newEvent(
          'analysis.failed',
          { messageIds: job.messages.map((m) => m.id), reason, attempt: job.attempts, retryable: false },
          traceOf(job),
        ),
      ])
      return found
    })
    if (wanted === 'fenced') {
      this.fencedOut(job, 'analysis failed after its lease was lost to another worker; left to it', {
        reason,
      })
    } else if (wanted === 'ours') {
      this.stats.deadLetters++
      this.log('analysis failed for good; dead-lettered', {
        ...jobLogFields(job),
        attempts: job.attempts,
        reason,
      })
    }
  }

  /** Counts and logs a job whose claim another worker took (its lease ran out): what this one did is left out. */
  private fencedOut(job: AnalysisJob, message: string, fields: Record<string, unknown> = {}): void {
    this.stats.fencedOut++
    this.log(message, { ...jobLogFields(job), attempt: job.attempts, ...fields })
  }

  /** Appends to the conversation's analysis stream (its own stream: capture never conflicts with it). */
  private async appendAnalysisEvents(client: pg.ClientBase, job: AnalysisJob, events: readonly NewEvent[]) {
    await appendToStream(client, analysisAppend(job, events), { now: this.now })
  }

  /**
   * 'removed' when the job was removed meanwhile (its chatbot deleted, its conversation erased), 'fenced'
   * when another worker claimed it since (this claim's lease ran out: JobClaim); locked while ours.
   */
  private async stillWanted(client: pg.ClientBase, job: AnalysisJob): Promise<'ours' | 'removed' | 'fenced'> {
    const ours = (await lockClaims(client, [job])).get(job.id)
    if (ours === undefined) return 'removed'
    return ours ? 'ours' : 'fenced'
  }
}

/** The stored turn before a job's first message, as the analyzer reads it (MessageToAnalyze.turnBefore). */
type TurnBefore = NonNullable<MessageToAnalyze['turnBefore']>

/**
 * Per job, the latest stored result of its conversation sent before its first message (`$3`): its slot
 * question, if it asked one; and whether an end user's result before it has a topic (a request: with the
 * semantic analyzer only requests get one, "other" included). Index probes and a short sort per job;
 * `LIMIT` keeps each a probe.
 */
const TURN_BEFORE = `SELECT j.id::text AS job_id, t.slot_question,
        EXISTS (
          SELECT 1 FROM analysis_results q
           WHERE q.conversation_id = j.conversation_id AND q.role = 'user' AND cardinality(q.topics) > 0
             AND coalesce(q.sent_at, q.analyzed_at) < j.sent_at
           LIMIT 1
        ) AS requested
   FROM unnest($1::bigint[], $2::uuid[], $3::timestamptz[]) AS j(id, conversation_id, sent_at)
   LEFT JOIN LATERAL (
     SELECT r.slot_question FROM analysis_results r
      WHERE r.conversation_id = j.conversation_id AND coalesce(r.sent_at, r.analyzed_at) < j.sent_at
      ORDER BY coalesce(r.sent_at, r.analyzed_at) DESC, r.position DESC, r.message_id DESC
      LIMIT 1
   ) t ON true`

const DELETED = 'deleted'
const NOT_YET_KNOWN = 'not-yet-known'
type ChatbotContext = AnalysisContext | typeof DELETED | typeof NOT_YET_KNOWN
/** How long a job whose chatbot's settings have not arrived yet waits before it is looked at again. */
const SETTINGS_WAIT_MS = 500

/** A chatbot's analysis context: its own topics, when its settings have any. */
function contextOf(settings: Record<string, unknown>): AnalysisContext {
  const topics = chatbotTopics(settings)
  // Only its own signals are scored with the context; the rest of settings.signals is read when deciding.
  const signals = chatbotSignals(settings)
  const scored = signals.custom.length > 0 ? { signals } : {}
  return topics ? { topics, ...scored } : scored
}

/** What the worker logs about a job. */
export function jobLogFields(job: AnalysisJob): Record<string, unknown> {
  return {
    jobId: job.id,
    conversationId: job.conversationId,
    causationId: job.causeEventId ?? job.sourceEventId,
    ...(job.correlationId === undefined ? {} : { correlationId: job.correlationId }),
  }
}
