import { assertNever, type ConsumerPipeline, ok, pipeline, type Step } from '@cas/eventlog'
import type { RecordedEvent } from '@cas/events'
import { type Keyring, openStep } from '@cas/keyring'
import { rememberChatbotSettings } from './chatbot-settings.ts'
import { type CommandEvent, queueCommands } from './command-runner.ts'
import { enqueueJobs, forgetChatbot, forgetConversation, jobFromCapture, type NewJob } from './jobs.ts'

/**
 * The analysis consumer's steps (ConsumerPipeline in @cas/eventlog): open each event (a deleted
 * chatbot's do not open, its key destroyed: dropped as `chatbot_deleted`, quietly), then handle it.
 */
export function analysisPipeline(opts: {
  readonly consumer: string
  readonly keyring: Keyring
  readonly now: () => Date
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void
}): ConsumerPipeline<void> {
  return pipeline({ consumer: opts.consumer, quiet: ['chatbot_deleted'], log: opts.log })
    .pipe(openStep(opts.keyring))
    .pipe(handleStep(opts.now))
}

/**
 * Queues a job for every conversation.messages-captured event that asked for analysis, and every
 * owner's or admin's command event (command-runner.ts), in the transaction that records the checkpoint; keeps what the analysis reads of a chatbot's settings; forgets
 * what an erasure or a deletion takes away. Every event type is named: a new one fails to compile here
 * until it is decided what analysis does with it.
 */
function handleStep(now: () => Date): Step<RecordedEvent, void> {
  return async (items, client) => {
    const jobs: NewJob[] = []
    const commands: CommandEvent[] = []
    for (const { value: event } of items) {
      switch (event.type) {
        case 'chatbot.created':
        case 'chatbot.settings-changed':
          // What the analysis reads of a chatbot's settings (its own topics), kept from its events.
          await rememberChatbotSettings(client, event.chatbotId, event.payload.settings)
          break
        case 'conversation.erased':
          await forgetConversation(client, event.chatbotId, event.streamId)
          break
        case 'chatbot.deleted':
          // Deleting a chatbot deletes its analysis results too (spec.md), and the message content queued.
          await forgetChatbot(client, event.chatbotId)
          break
        case 'conversation.messages-captured':
          if (!event.payload.analysisRequested) break
          jobs.push(
            jobFromCapture(event, { sourceEventId: event.id, requestedAt: new Date(event.occurredAt) }),
          )
          break
        // Owners' and admins' commands on the chatbot's topics: applied by the command runner.
        case 'chatbot.topic-rename-requested':
        case 'chatbot.topic-hide-requested':
        case 'chatbot.topic-unhide-requested':
        case 'chatbot.topic-merge-requested':
        case 'chatbot.topic-creation-requested':
        case 'chatbot.reanalysis-requested':
          commands.push(event)
          break
        // Nothing for analysis to do.
        case 'chatbot.renamed':
        case 'chatbot.key-rotated':
        case 'conversation.started':
        case 'conversation.metadata-updated':
          break
        // Not on the streams this consumer reads (conversation, chatbot).
        case 'analysis.conversation-analyzed':
        case 'analysis.messages-analyzed':
        case 'analysis.failed':
        case 'analysis.signals-detected':
        case 'analysis.themes-assigned':
        case 'analysis.topic-discovered':
        case 'analysis.topic-relabeled':
        case 'analysis.topic-merged':
        case 'analysis.topic-split':
        case 'analysis.topic-retired':
        case 'analysis.topic-renamed-by-user':
        case 'analysis.topic-hidden':
        case 'analysis.topic-unhidden':
        case 'analysis.topic-merged-by-user':
        case 'analysis.topics-settling':
        case 'analysis.topics-reclustered':
        case 'analysis.topics-recluster-failed':
        case 'analysis.topic-created-by-user':
        case 'analysis.topic-command-handled':
        case 'analysis.reanalysis-started':
        case 'analysis.reanalysis-progressed':
        case 'analysis.reanalysis-finished':
        case 'analysis.reanalysis-failed':
        case 'organization.created':
        case 'organization.member-invited':
        case 'organization.invitation-revoked':
        case 'organization.member-joined':
        case 'organization.member-role-changed':
        case 'organization.member-removed':
        case 'organization.deleted':
          break
        default:
          assertNever(event, 'event')
      }
    }
    if (commands.length > 0) await queueCommands(client, commands)
    if (jobs.length > 0) await enqueueJobs(client, jobs, now())
    return items.map(() => ok(undefined))
  }
}
