import { type BackgroundLoop, backgroundLoop, type RetryPolicy, retryDelayMs, withTransaction } from '@cas/db'
import { type ChatbotEvent, isTopicCommandEventType, topicCommandOf } from '@cas/events'
import type { Keyring } from '@cas/keyring'
import type pg from 'pg'
import type { Analyzer } from './analyzer.ts'
import { failReanalysis, reportReanalyses, startReanalysis } from './reanalysis-runs.ts'
import { outcomeOf, recordTopicCommandOutcome } from './topics/command-outcome.ts'
import { applyTopicCommand, type TopicCommandOutcome } from './topics/topic-commands.ts'
import { createTopicFromExamples, embedExamples } from './topics/topic-creation.ts'
import { TopicStore } from './topics/topic-store.ts'

/** The command events of owners and admins this service applies (their events are the analysis'). */
export type CommandEvent = Extract<
  ChatbotEvent,
  {
    type:
      | 'chatbot.topic-rename-requested'
      | 'chatbot.topic-hide-requested'
      | 'chatbot.topic-unhide-requested'
      | 'chatbot.topic-merge-requested'
      | 'chatbot.topic-creation-requested'
      | 'chatbot.reanalysis-requested'
  }
>

/**
 * Queues command events in the consumer's transaction (which appends nothing: the consumer is marked so,
 * and journal readers pass it); the runner applies them in transactions of their own.
 */
export async function queueCommands(client: pg.ClientBase, events: readonly CommandEvent[]): Promise<void> {
  for (const event of events) {
    await client.query(
      `INSERT INTO analysis_commands (source_event_id, source_stream_version, org_id, chatbot_id, type, payload,
         metadata, requested_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source_event_id) DO NOTHING`,
      [
        event.id,
        event.streamVersion,
        event.orgId,
        event.chatbotId,
        event.type,
        JSON.stringify(event.payload),
        JSON.stringify(event.metadata),
        event.occurredAt,
      ],
    )
  }
}

/**
 * The command runner's policy, in one place (CONVENTIONS 12). Concurrency: one command at a time per
 * process; a chatbot's commands one at a time across processes, in the order they were committed (a
 * command waits while an earlier one of its chatbot is queued). Retry: a command that fails (the
 * database away, say) is tried again after `retry`'s wait, doubling, up to `maxAttempts`; then it is set
 * aside (status dead, its error kept, logged) and the chatbot's later commands go on. A command its
 * topics refuse (decided again on the topics as they are when it is applied) is done: it changes nothing.
 * Every topic command (not re-analysis, which reports its own progress) ends with
 * analysis.topic-command-handled: applied, unchanged or refused in the transaction that handled it, failed
 * in the one that set it aside.
 */
export interface CommandPolicy {
  readonly maxAttempts: number
  /** The wait before a failed command is tried again. */
  readonly retry: RetryPolicy
  /** How often queued commands are looked for when nothing wakes the runner. */
  readonly pollIntervalMs: number
}

export const DEFAULT_COMMAND_POLICY: CommandPolicy = {
  maxAttempts: 5,
  retry: { baseMs: 1_000, maxMs: 60_000, jitter: 'equal' },
  pollIntervalMs: 1_000,
}

interface QueuedCommand {
  id: string
  org_id: string
  chatbot_id: string
  type: CommandEvent['type']
  payload: CommandEvent['payload']
  metadata: Record<string, string>
  attempts: number
  source_event_id: string
  source_stream_version: number
}

export interface CommandRunnerOptions {
  readonly pool: pg.Pool
  /** Embeds a created topic's examples. */
  readonly analyzer: Analyzer
  /** Opens the captures a re-analysis queues (chatbot.reanalysis-requested). */
  readonly keyring: Keyring
  /** The chatbot's recent requests a created topic may take (TOPIC_RECLUSTER_WINDOW). */
  readonly window?: number
  readonly policy?: CommandPolicy
  readonly now?: () => Date
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
}

/** Applies the queued command events, oldest first (see CommandPolicy). */
export class CommandRunner {
  readonly stats = { applied: 0, refused: 0, failures: 0 }
  private readonly loop: BackgroundLoop
  /** Reports the running re-analyses' progress (reanalysis-runs.ts), every poll interval. */
  private readonly progress: BackgroundLoop
  private readonly store = new TopicStore(0)
  private readonly policy: CommandPolicy
  private readonly now: () => Date
  private readonly log: NonNullable<CommandRunnerOptions['log']>

  constructor(private readonly opts: CommandRunnerOptions) {
    this.policy = opts.policy ?? DEFAULT_COMMAND_POLICY
    this.now = opts.now ?? (() => new Date())
    this.log = opts.log ?? (() => {})
    this.loop = backgroundLoop({
      // A command applied: look for the next one at once.
      run: () => this.runNext(),
      intervalMs: this.policy.pollIntervalMs,
      onError: (err) =>
        this.log('commands: could not look for queued commands', { reason: (err as Error).message }),
    })
    this.progress = backgroundLoop({
      run: async () => {
        await reportReanalyses(opts.pool, this.now)
        return false
      },
      intervalMs: this.policy.pollIntervalMs,
      onError: (err) =>
        this.log('commands: could not report re-analysis progress', { reason: (err as Error).message }),
    })
  }

  start(): void {
    this.loop.start()
    this.progress.start()
  }

  /** Looks for queued commands now (the consumer queued some). */
  wake(): void {
    this.loop.wake()
  }

  async stop(): Promise<void> {
    await Promise.all([this.loop.stop(), this.progress.stop()])
  }

  /** Applies the next due command, if any; whether there was one. */
  async runNext(): Promise<boolean> {
    let claimed: QueuedCommand | undefined
    try {
      return await withTransaction(this.opts.pool, async (client) => {
        const { rows } = await client.query<QueuedCommand>(
          `SELECT c.id::text, c.org_id, c.chatbot_id, c.type, c.payload, c.metadata, c.attempts, c.source_event_id,
                  c.source_stream_version
             FROM analysis_commands c
            WHERE c.status = 'pending' AND (c.next_attempt_at IS NULL OR c.next_attempt_at <= $1)
              AND NOT EXISTS (SELECT FROM analysis_commands e
                               WHERE e.chatbot_id = c.chatbot_id AND e.status = 'pending' AND e.id < c.id)
            ORDER BY c.id LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [this.now()],
        )
        claimed = rows[0]
        if (!claimed) return false
        const outcome = await this.apply(client, claimed)
        await client.query('DELETE FROM analysis_commands WHERE id = $1', [claimed.id])
        if (outcome.applied) this.stats.applied++
        else {
          this.stats.refused++
          this.log('commands: refused a command its topics no longer allow', {
            eventId: claimed.source_event_id,
            type: claimed.type,
            reason: outcome.reason,
          })
        }
        return true
      })
    } catch (err) {
      if (!claimed) throw err
      await this.failed(claimed, err as Error)
      return true
    }
  }

  private async apply(client: pg.ClientBase, queued: QueuedCommand): Promise<TopicCommandOutcome> {
    const event = { type: queued.type, payload: queued.payload } as CommandEvent
    // The events it produces carry who asked and the request's ids, and name the command as their cause.
    const metadata = { ...queued.metadata, causationId: queued.source_event_id }
    const target = { orgId: queued.org_id, chatbotId: queued.chatbot_id }
    if (event.type === 'chatbot.reanalysis-requested') {
      await startReanalysis(
        client,
        this.opts.keyring,
        {
          ...target,
          reanalysisId: event.payload.reanalysisId,
          ...(event.payload.since ? { since: new Date(event.payload.since) } : {}),
          analyzer: this.opts.analyzer.info,
        },
        metadata,
        this.now,
      )
      return { applied: true, events: 1 }
    }
    const outcome =
      event.type === 'chatbot.topic-creation-requested'
        ? await this.createTopic(client, target, event.payload, metadata)
        : await this.applyCommand(client, target, event, metadata)
    await recordTopicCommandOutcome(
      client,
      {
        ...target,
        type: event.type,
        eventId: queued.source_event_id,
        streamVersion: queued.source_stream_version,
      },
      outcomeOf(outcome),
      metadata,
      this.now,
    )
    return outcome
  }

  private applyCommand(
    client: pg.ClientBase,
    target: { readonly orgId: string; readonly chatbotId: string },
    event: Parameters<typeof topicCommandOf>[0],
    metadata: Record<string, string>,
  ): Promise<TopicCommandOutcome> {
    const { topicId, command } = topicCommandOf(event)
    return applyTopicCommand(client, { ...target, topicId }, command, metadata, this.now)
  }

  private async createTopic(
    client: pg.ClientBase,
    target: { readonly orgId: string; readonly chatbotId: string },
    request: { readonly topicId: string; readonly label: string; readonly examples: readonly string[] },
    metadata: Record<string, string>,
  ): Promise<TopicCommandOutcome> {
    // The model's time holds the command's row only, not the chatbot's topic state.
    const examples = await embedExamples(this.opts.analyzer, request.examples)
    return createTopicFromExamples(
      client,
      { analyzer: this.opts.analyzer, store: this.store, window: this.opts.window ?? 5_000, now: this.now },
      { ...target, topicId: request.topicId, label: request.label, examples: request.examples },
      examples,
      metadata,
    )
  }

  private async failed(queued: QueuedCommand, err: Error): Promise<void> {
    this.stats.failures++
    const attempt = queued.attempts + 1
    const dead = attempt >= this.policy.maxAttempts
    this.log(
      dead ? 'commands: a command failed for good; set aside' : 'commands: a command failed; will retry',
      {
        eventId: queued.source_event_id,
        type: queued.type,
        attempt,
        reason: err.message,
      },
    )
    const retryAt = new Date(this.now().getTime() + retryDelayMs(this.policy.retry, attempt - 1))
    await withTransaction(this.opts.pool, async (client) => {
      await client.query(
        `UPDATE analysis_commands SET attempts = $2, status = $3, next_attempt_at = $4, last_error = $5 WHERE id = $1`,
        [queued.id, attempt, dead ? 'dead' : 'pending', retryAt, err.message],
      )
      // A re-analysis set aside says so on the chatbot's topic stream: its read model shows it failed, and
      // another may be asked for. Its reason is for a lead: the error stays in the log and this table.
      // A topic command set aside is handled too: the gateway stops counting it as pending. Its reason,
      // for a data team, names no internals.
      if (dead && isTopicCommandEventType(queued.type)) {
        await recordTopicCommandOutcome(
          client,
          {
            orgId: queued.org_id,
            chatbotId: queued.chatbot_id,
            type: queued.type,
            eventId: queued.source_event_id,
            streamVersion: queued.source_stream_version,
          },
          {
            outcome: 'failed',
            reason: `The analysis service could not apply the command (${attempt} attempts).`,
          },
          { ...queued.metadata, causationId: queued.source_event_id },
          this.now,
        )
      }
      if (dead && queued.type === 'chatbot.reanalysis-requested') {
        const { name, version } = this.opts.analyzer.info
        await failReanalysis(
          client,
          {
            orgId: queued.org_id,
            chatbotId: queued.chatbot_id,
            reanalysisId: (queued.payload as { reanalysisId: string }).reanalysisId,
            analyzer: `${name}@${version}`,
            attempts: attempt,
          },
          { ...queued.metadata, causationId: queued.source_event_id },
          this.now,
        )
      }
    })
  }
}
