import { randomUUID } from 'node:crypto'
import type { AnalysisConfig } from '@cas/config'
import { type BackgroundLoop, backgroundLoop, withTransaction } from '@cas/db'
import { type AppendRequest, appendToStreams } from '@cas/eventlog'
import { type NewEvent, newEvent } from '@cas/events'
import type pg from 'pg'
import type { Analyzer } from '../analyzer.ts'
import { CONVERSATIONS_RESULTS } from '../job-runner.ts'
import { type StoredResult, summarizeConversation, type TopicRef } from '../summary.ts'
import { clusteringInput, decideRecluster, type ReclusterSummary, type WindowPoint } from './recluster.ts'
import { clusterInThread } from './recluster-thread.ts'
import { assignThemes } from './theme-store.ts'
import { DEFAULT_TOPIC_OPTIONS, OTHER_TOPIC, pointKey, type TopicModelOptions } from './topic-model.ts'
import { moveResults, type ResultMove, TopicStore } from './topic-store.ts'
import { readWindow } from './topic-window.ts'
import type { Vector } from './vectors.ts'

/**
 * The re-clustering job's policy, in one place (CONVENTIONS 12). When: a chatbot is due once its
 * requests since the last run reach `growth` of that run's window (at least MIN_REQUESTS), or an end
 * user was erased from its window (its words are in its topics' keywords until a run remakes them), no sooner
 * than `minIntervalMs` after the last run (or, before the first, after its first request), and at the latest `maxIntervalMs` after its first request not
 * yet re-clustered. Concurrency: one run at a time per process, and per chatbot across processes (a
 * lease of `timeoutMs`). Timeout: the clustering thread is stopped after `timeoutMs`. Retry: a failed run
 * is tried again after RETRY_BASE_MS, doubling, up to `maxAttempts`; then it waits `maxIntervalMs` and
 * starts over. Each failed attempt is an analysis.topics-recluster-failed event (attempt, next attempt). A failing run never holds up analysis: messages keep joining topics inside their spreads,
 * or wait in "other".
 */
export interface ReclusterPolicy {
  readonly window: number
  readonly growth: number
  readonly minIntervalMs: number
  readonly maxIntervalMs: number
  readonly timeoutMs: number
  readonly maxAttempts: number
  readonly retryBaseMs: number
  /** How often due chatbots are looked for. */
  readonly pollIntervalMs: number
}

const MIN_REQUESTS = 10
const RETRY_BASE_MS = 30_000
const POLL_INTERVAL_MS = 5_000

export function reclusterPolicy(config: AnalysisConfig): ReclusterPolicy {
  return {
    window: config.TOPIC_RECLUSTER_WINDOW,
    growth: config.TOPIC_RECLUSTER_GROWTH_PERCENT / 100,
    minIntervalMs: config.TOPIC_RECLUSTER_MIN_INTERVAL_SECONDS * 1_000,
    maxIntervalMs: config.TOPIC_RECLUSTER_MAX_INTERVAL_SECONDS * 1_000,
    timeoutMs: config.TOPIC_RECLUSTER_TIMEOUT_SECONDS * 1_000,
    maxAttempts: config.TOPIC_RECLUSTER_MAX_ATTEMPTS,
    retryBaseMs: RETRY_BASE_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  }
}

export interface ReclustererOptions {
  readonly pool: pg.Pool
  readonly analyzer: Analyzer
  readonly policy: ReclusterPolicy
  readonly topicOptions?: TopicModelOptions
  readonly now?: () => Date
  readonly newId?: () => string
  /** The window's clusters (−1: noise); by default in a thread of the run's own (recluster-thread.ts). */
  readonly cluster?: (
    vectors: readonly Vector[],
    references: readonly Vector[],
    timeoutMs: number,
  ) => Promise<number[]>
  /** `info` for a run that went as it should (every minute or so per busy chatbot), `warn` for a problem. */
  readonly log?: (msg: string, fields?: Record<string, unknown>, level?: 'info' | 'warn') => void
  /** Told of every run once it has ended, as it ended (the metrics' histogram of runs). */
  readonly onRun?: (run: ReclusterRun) => void
}

/** A run as it ended: re-clustered (committed), or failed (to be retried), and how long it took until then. */
export interface ReclusterRun {
  readonly chatbotId: string
  readonly outcome: 'reclustered' | 'failed'
  readonly durationMs: number
}

export interface ReclusterStats {
  runs: number
  failures: number
  lastDurationMs: number
  /** The last run's phases: reading the window, clustering it (its thread), deciding and committing. */
  lastPhasesMs: { read: number; cluster: number; commit: number }
}

export type RunOutcome =
  | { readonly chatbotId: string; readonly ok: true; readonly summary: ReclusterSummary }
  | { readonly chatbotId: string; readonly ok: false; readonly reason: string; readonly attempt: number }

interface Claim {
  chatbot_id: string
  org_id: string
  requests_since_run: number
  attempts: number
}

/**
 * The background job that re-clusters each chatbot's window (recluster.ts decides; this does the I/O):
 * claims a due chatbot, reads its window and clusters it in a thread, outside any transaction (the
 * chatbot's topics go on taking messages meanwhile), then, with the chatbot's topic state locked,
 * decides on the state as it now is, writes it, moves the messages that changed topic (their results, and
 * an analysis.messages-analyzed and analysis.conversation-analyzed event per conversation) and appends
 * the lineage events on the chatbot's topic stream, all in one transaction.
 */
export class Reclusterer {
  readonly stats: ReclusterStats = {
    runs: 0,
    failures: 0,
    lastDurationMs: 0,
    lastPhasesMs: { read: 0, cluster: 0, commit: 0 },
  }
  private readonly loop: BackgroundLoop
  private readonly store = new TopicStore(0)
  private readonly now: () => Date
  private readonly log: NonNullable<ReclustererOptions['log']>

  constructor(private readonly opts: ReclustererOptions) {
    this.now = opts.now ?? (() => new Date())
    this.log = opts.log ?? (() => {})
    this.loop = backgroundLoop({
      // A chatbot re-clustered: look for the next one at once.
      run: async () => (await this.runDue()) !== undefined,
      intervalMs: opts.policy.pollIntervalMs,
      onError: (err) =>
        this.log('re-clustering: could not look for due chatbots', { reason: (err as Error).message }),
    })
  }

  start(): void {
    if (this.opts.analyzer.semantic) this.loop.start()
  }

  async stop(): Promise<void> {
    await this.loop.stop()
  }

  /** Claims one due chatbot and re-clusters it; undefined when none is due. Never throws for a failed run. */
  async runDue(): Promise<RunOutcome | undefined> {
    const semantic = this.opts.analyzer.semantic
    if (!semantic) return undefined
    const claim = await this.claim()
    if (!claim) return undefined
    const started = performance.now()
    // Only the run is inside the try: what follows it (the stats, the log, the observer) can never turn a
    // committed run into a failed one, and a retry.
    let run: ReclusterRun
    let outcome: RunOutcome
    try {
      const summary = await this.run(claim, semantic.model)
      run = { chatbotId: claim.chatbot_id, outcome: 'reclustered', durationMs: performance.now() - started }
      outcome = { chatbotId: claim.chatbot_id, ok: true, summary }
    } catch (err) {
      run = { chatbotId: claim.chatbot_id, outcome: 'failed', durationMs: performance.now() - started }
      outcome = {
        chatbotId: claim.chatbot_id,
        ok: false,
        reason: (err as Error).message,
        attempt: claim.attempts + 1,
      }
    }
    this.tell(run)
    if (outcome.ok) {
      this.stats.runs++
      this.stats.lastDurationMs = Math.round(run.durationMs)
      this.log(
        're-clustered topics',
        { chatbotId: claim.chatbot_id, ms: this.stats.lastDurationMs, ...outcome.summary },
        'info',
      )
    } else {
      this.stats.failures++
      await this.recordFailure(claim, outcome)
    }
    return outcome
  }

  /** Tells the observer of a run once, as it ended; an observer that throws is logged, never the run's failure. */
  private tell(run: ReclusterRun): void {
    try {
      this.opts.onRun?.(run)
    } catch (err) {
      this.log('re-clustering: the run could not be told to its observer', {
        chatbotId: run.chatbotId,
        outcome: run.outcome,
        reason: (err as Error).message,
      })
    }
  }

  /** A failed run's attempt and when the next is due: in the table and, as an event, on the topic stream. */
  private async recordFailure(claim: Claim, { attempt, reason }: { attempt: number; reason: string }) {
    const { policy } = this.opts
    const last = attempt >= policy.maxAttempts
    const retryIn = last ? policy.maxIntervalMs : policy.retryBaseMs * 2 ** (attempt - 1)
    this.log(last ? 're-clustering failed; starting over later' : 're-clustering failed; will retry', {
      chatbotId: claim.chatbot_id,
      attempt,
      reason,
    })
    const nextAttemptAt = new Date(this.now().getTime() + retryIn)
    // The attempt and the next one's time are events too (the dashboard's settling status reads them,
    // and a replay rebuilds it); the error stays in the log and this table.
    await withTransaction(this.opts.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE topic_reclustering SET attempts = $2, next_attempt_at = $3, running_until = NULL, last_error = $4
          WHERE chatbot_id = $1`,
        [claim.chatbot_id, last ? 0 : attempt, nextAttemptAt, reason],
      )
      // The chatbot was deleted meanwhile: nothing to say.
      if (!rowCount) return
      await appendToStreams(
        client,
        [
          topicStream(claim, [
            newEvent(
              'analysis.topics-recluster-failed',
              {
                attempt,
                maxAttempts: policy.maxAttempts,
                nextAttemptAt: nextAttemptAt.toISOString(),
                startsOver: last,
              },
              { correlationId: randomUUID() },
            ),
          ]),
        ],
        { now: this.now },
      )
    })
  }

  /**
   * The lease (running_until) is timed by the database's clock (statement_timestamp()), as the analysis
   * jobs' are: on each process's, one whose clock ran ahead by more than the timeout took a chatbot another
   * was re-clustering, and one behind gave leases already over. The schedule (next_attempt_at, last_run_at,
   * pending_since) stays on the process's clock, which wrote it: a skew there only shifts a run.
   */
  private async claim(): Promise<Claim | undefined> {
    const { policy } = this.opts
    const now = this.now()
    const { rows } = await this.opts.pool.query<Claim>(
      `UPDATE topic_reclustering r
          SET running_until = statement_timestamp() + make_interval(secs => $2 / 1000.0)
        WHERE r.chatbot_id = (
          SELECT chatbot_id FROM topic_reclustering
           WHERE (requests_since_run > 0 OR erasures_since_run > 0)
             AND (running_until IS NULL OR running_until < statement_timestamp())
             AND (next_attempt_at IS NULL OR next_attempt_at <= $1)
             AND coalesce(last_run_at, pending_since, '-infinity') <= $1::timestamptz - make_interval(secs => $3 / 1000.0)
             AND (requests_since_run >= greatest($5::int, ceil(window_at_run * $6::float8))
                  OR pending_since <= $1::timestamptz - make_interval(secs => $4 / 1000.0)
                  OR erasures_since_run > 0)
           ORDER BY pending_since, chatbot_id
           LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING r.chatbot_id, r.org_id, r.requests_since_run, r.attempts`,
      [now, policy.timeoutMs, policy.minIntervalMs, policy.maxIntervalMs, MIN_REQUESTS, policy.growth],
    )
    return rows[0]
  }

  private async run(claim: Claim, model: string): Promise<ReclusterSummary> {
    const { policy } = this.opts
    const chatbots = [{ chatbotId: claim.chatbot_id, orgId: claim.org_id }]
    const phases = this.stats.lastPhasesMs
    let started = performance.now()
    // A short transaction: the window as it is now, and which topics are the chatbot's own.
    const { points, references, erasures } = await withTransaction(this.opts.pool, async (client) => {
      const { state } = (await this.store.lock(client, chatbots, model)).get(claim.chatbot_id)!
      // The erasures this window is read without (they take the same lock): the run answers for them.
      const { rows } = await client.query<{ erasures: number }>(
        'SELECT erasures_since_run AS erasures FROM topic_reclustering WHERE chatbot_id = $1',
        [claim.chatbot_id],
      )
      const input = clusteringInput(state, await readWindow(client, claim.chatbot_id, policy.window))
      return { ...input, erasures: rows[0]?.erasures ?? 0 }
    })
    phases.read = performance.now() - started
    started = performance.now()
    const cluster = this.opts.cluster ?? ((v, r, timeoutMs) => clusterInThread(v, r, { timeoutMs }))
    const numbers = await cluster(
      points.map((p) => p.embedding),
      references,
      policy.timeoutMs,
    )
    phases.cluster = performance.now() - started
    started = performance.now()
    const summary = await withTransaction(this.opts.pool, async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM topic_models WHERE chatbot_id = $1 FOR UPDATE', [
        claim.chatbot_id,
      ])
      // The chatbot was deleted meanwhile: nothing to do (its rows went with it).
      if (!rowCount) return emptySummary(points.length)
      const locked = (await this.store.lock(client, chatbots, model)).get(claim.chatbot_id)!
      // Where each message is now: placements since the window was read may have moved some.
      const now = await topicsNow(client, points)
      const current = points.map((p) => ({ ...p, topicId: now.get(pointKey(p)) ?? p.topicId }))
      const decision = decideRecluster(
        locked.state,
        current,
        numbers,
        { newId: this.opts.newId ?? randomUUID },
        this.opts.topicOptions ?? DEFAULT_TOPIC_OPTIONS,
      )
      await this.store.save(client, locked, decision)
      const at = this.now()
      const metadata = { correlationId: randomUUID() }
      // The run's analysis.topics-reclustered (below: on the chatbot's stream, appended before the
      // conversations' streams) is what each re-placement names as its cause; a run has no event id of
      // its own, and a data team follows causationId to an event (libs/events/README.md).
      const runEventId = randomUUID()
      const label = (id: string): TopicRef => ({
        id,
        label: id === OTHER_TOPIC ? OTHER_TOPIC : (locked.state.topics.get(id)?.label ?? id),
      })
      const appends = await moveResultEvents(
        client,
        decision.reassigned.map((r) => ({
          ...r,
          topic: label(r.topicId),
          metadata: { ...metadata, causationId: runEventId },
        })),
        this.opts.analyzer.info,
      )
      // Topics split, merged, retired or relabeled: the themes may change too (theme-store.ts), after them.
      const themes = decision.events.length > 0 ? await assignThemes(client, locked.state) : undefined
      if (decision.events.length > 0) {
        appends.unshift(
          topicStream(claim, [
            ...decision.events.map((e) => newEvent(e.type, e.payload, metadata)),
            ...(themes ? [newEvent(themes.type, themes.payload, metadata)] : []),
          ]),
        )
      }
      const { rows: after } = await client.query<{ waiting: number }>(
        `UPDATE topic_reclustering SET requests_since_run = greatest(0, requests_since_run - $2),
           erasures_since_run = greatest(0, erasures_since_run - $5),
           pending_since = CASE WHEN requests_since_run - $2 > 0 THEN $4::timestamptz END,
           window_at_run = $3, last_run_at = $4, attempts = 0, next_attempt_at = NULL, running_until = NULL,
           last_error = NULL
         WHERE chatbot_id = $1
         RETURNING requests_since_run AS waiting`,
        [claim.chatbot_id, claim.requests_since_run, points.length, at, erasures],
      )
      // After the lineage: whether the topics are settling now and when they were re-clustered, for the
      // read side (it read topic_reclustering, this service's own table, before).
      const reclustered = {
        ...newEvent(
          'analysis.topics-reclustered',
          {
            reclusteredAt: at.toISOString(),
            settling: (after[0]?.waiting ?? 0) > 0,
            clustered: decision.summary.clustered,
            topics: decision.summary.topics,
          },
          metadata,
        ),
        id: runEventId,
      }
      const topicAppend = appends.find((a) => a.streamType === 'analysis' && a.streamId === claim.chatbot_id)
      if (topicAppend)
        appends[appends.indexOf(topicAppend)] = {
          ...topicAppend,
          events: [...topicAppend.events, reclustered],
        }
      else {
        appends.unshift(topicStream(claim, [reclustered]))
      }
      await appendToStreams(client, appends, { now: this.now })
      return decision.summary
    })
    phases.commit = performance.now() - started
    return summary
  }
}

/** An append to the chatbot's topic stream (stream type analysis, the chatbot's id). */
function topicStream(claim: Claim, events: NewEvent[]): AppendRequest {
  return {
    streamType: 'analysis',
    streamId: claim.chatbot_id,
    orgId: claim.org_id,
    chatbotId: claim.chatbot_id,
    expectedVersion: 'any',
    events,
  }
}

function emptySummary(clustered: number): ReclusterSummary {
  return { clustered, topics: 0, kept: 0, created: 0, merged: 0, retired: 0, split: 0 }
}

/** The topic each message's latest result names now. */
async function topicsNow(
  client: pg.ClientBase,
  points: readonly WindowPoint[],
): Promise<Map<string, string>> {
  const { rows } = await client.query<{ conversation_id: string; message_id: string; topic: string | null }>(
    `SELECT p.conversation_id, p.message_id, r.topics[1] AS topic
       FROM unnest($1::uuid[], $2::text[]) AS p(conversation_id, message_id)
       JOIN analysis_results r ON r.conversation_id = p.conversation_id AND r.message_id = p.message_id`,
    [points.map((p) => p.conversationId), points.map((p) => p.messageId)],
  )
  return new Map(
    rows.map((r) => [
      pointKey({ conversationId: r.conversation_id, messageId: r.message_id }),
      r.topic ?? OTHER_TOPIC,
    ]),
  )
}

/**
 * Conversations change topic by events: the moved messages' stored results get their new topic
 * (topic-store.ts's moveResults), and each conversation an analysis.messages-analyzed event with them and
 * an analysis.conversation-analyzed event with its new summary (a replay applies the same).
 */
export async function moveResultEvents(
  client: pg.ClientBase,
  moves: readonly ResultMove[],
  analyzer: { name: string; version: string },
): Promise<AppendRequest[]> {
  const moved = await moveResults(client, moves)
  if (moved.size === 0) return []
  const conversations = [...moved.keys()].sort()
  const { rows: stored } = await client.query<{
    conversation_id: string
    role: StoredResult['role']
    score: number
    topics: string[]
    topic_labels: string[]
  }>(CONVERSATIONS_RESULTS, [conversations])
  const results = new Map<string, StoredResult[]>()
  for (const row of stored) {
    const list = results.get(row.conversation_id) ?? []
    list.push({
      role: row.role,
      score: row.score,
      topics: row.topics.map((id, i) => ({ id, label: row.topic_labels[i] ?? id })),
    })
    results.set(row.conversation_id, list)
  }
  return conversations.map((conversationId) => {
    const { orgId, chatbotId, metadata, results: changed } = moved.get(conversationId)!
    const events: NewEvent[] = [
      // Nothing analysed: the conversation's signals stand as they were decided (signalsDecided false).
      newEvent('analysis.messages-analyzed', { analyzer, results: changed, signalsDecided: false }, metadata),
      newEvent(
        'analysis.conversation-analyzed',
        { analyzer, ...summarizeConversation(results.get(conversationId) ?? []) },
        metadata,
      ),
    ]
    return {
      streamType: 'analysis',
      streamId: conversationId,
      orgId,
      chatbotId,
      expectedVersion: 'any',
      events,
    }
  })
}
