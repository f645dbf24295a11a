import { appendToStream } from '@cas/eventlog'
import { newEvent, type TopicCommandEventType } from '@cas/events'
import type { TopicCommandOutcome } from './topic-commands.ts'

/**
 * What a topic command's analysis.topic-command-handled says: applied, unchanged or refused, and why; for
 * an applied creation, how many requests moved into the new topic (0 too: the dashboard says so).
 */
export function outcomeOf(outcome: TopicCommandOutcome): {
  readonly outcome: 'applied' | 'unchanged' | 'refused'
  readonly reason?: string
  readonly moved?: number
} {
  if (!outcome.applied) return { outcome: 'refused', reason: outcome.reason }
  return {
    outcome: outcome.events > 0 ? 'applied' : 'unchanged',
    ...(outcome.moved !== undefined ? { moved: outcome.moved } : {}),
  }
}

/**
 * Appends analysis.topic-command-handled on the chatbot's topic stream in the caller's transaction (the
 * one that applied the command, after its events): data teams see every command's fate, refusals too,
 * and the projector keeps how far the chatbot's topic commands are handled (rm_topic_commands), which the
 * gateway decides new commands with.
 */
export async function recordTopicCommandOutcome(
  client: Parameters<typeof appendToStream>[0],
  command: {
    readonly orgId: string
    readonly chatbotId: string
    readonly type: TopicCommandEventType
    readonly eventId: string
    readonly streamVersion: number
  },
  result: {
    readonly outcome: 'applied' | 'unchanged' | 'refused' | 'failed'
    readonly reason?: string
    readonly moved?: number
  },
  metadata: Readonly<Record<string, string>>,
  now: () => Date,
): Promise<void> {
  await appendToStream(
    client,
    {
      streamType: 'analysis',
      streamId: command.chatbotId,
      orgId: command.orgId,
      chatbotId: command.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent('analysis.topic-command-handled', {
          commandEventId: command.eventId,
          commandStreamVersion: command.streamVersion,
          commandType: command.type,
          outcome: result.outcome,
          ...(result.reason ? { reason: result.reason } : {}),
          moved: result.moved ?? null,
        }),
      ],
      metadata,
    },
    { now },
  )
}
