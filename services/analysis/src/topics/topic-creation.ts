import { appendToStreams } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import type pg from 'pg'
import type { Analyzer } from '../analyzer.ts'
import type { TopicRef } from '../summary.ts'
import { decideTopicCreation, type ExamplePoint } from './create-topic.ts'
import { moveResultEvents } from './reclusterer.ts'
import { assignThemes } from './theme-store.ts'
import type { TopicCommandOutcome } from './topic-commands.ts'
import type { TopicStore } from './topic-store.ts'
import { readWindow } from './topic-window.ts'

export interface TopicCreationRequest {
  readonly orgId: string
  readonly chatbotId: string
  readonly topicId: string
  readonly label: string
  readonly examples: readonly string[]
}

/**
 * The examples' embeddings and terms, as the analyzer gives them for end users' requests (the same
 * request embedding a message is placed by). Outside any transaction: the model's time holds no lock.
 * Examples the model judges social ("hi", "thanks!") give nothing; each is read as a conversation's first
 * request.
 */
export async function embedExamples(
  analyzer: Analyzer,
  examples: readonly string[],
): Promise<ExamplePoint[]> {
  const results = await analyzer.analyzeMessages(
    // Each example stands alone (turnBefore: a conversation's first message), not as a conversation's
    // follow-ups, which make a topic only when they clearly ask (topics/requests.ts).
    examples.map((content, i) => ({ id: `example-${i}`, role: 'user' as const, content, turnBefore: {} })),
    {},
  )
  return results.flatMap((r) => (r.embedding && r.terms ? [{ embedding: r.embedding, terms: r.terms }] : []))
}

/**
 * Creates a topic from an owner's or admin's examples (create-topic.ts decides), in the caller's
 * transaction: with the chatbot's topic state locked, the topic is written with its label pinned, the
 * requests of the chatbot's window that lie clearly nearer it move into it (their results, and an
 * analysis.messages-analyzed and analysis.conversation-analyzed event per conversation), and
 * analysis.topic-created-by-user (then the themes, regrouped) goes on the chatbot's topic stream first.
 */
export async function createTopicFromExamples(
  client: pg.ClientBase,
  deps: {
    readonly analyzer: Analyzer
    readonly store: TopicStore
    readonly window: number
    readonly now: () => Date
  },
  request: TopicCreationRequest,
  examples: readonly ExamplePoint[],
  metadata: Record<string, string>,
): Promise<TopicCommandOutcome> {
  const semantic = deps.analyzer.semantic
  if (!semantic) return { applied: false, reason: 'no_language_model' }
  const chatbots = [{ chatbotId: request.chatbotId, orgId: request.orgId }]
  const locked = (await deps.store.lock(client, chatbots, semantic.model)).get(request.chatbotId)!
  const window = await readWindow(client, request.chatbotId, deps.window)
  const creation = decideTopicCreation(
    locked.state,
    { topicId: request.topicId, label: request.label, examples },
    window,
  )
  if (!creation.ok) return { applied: false, reason: creation.reason }
  await deps.store.save(client, locked, creation.decision)
  const topic: TopicRef = { id: request.topicId, label: request.label }
  const appends = await moveResultEvents(
    client,
    creation.decision.reassigned.map((r) => ({
      conversationId: r.conversationId,
      messageId: r.messageId,
      topic,
      metadata,
    })),
    deps.analyzer.info,
  )
  const themes = await assignThemes(client, locked.state)
  appends.unshift({
    streamType: 'analysis',
    streamId: request.chatbotId,
    orgId: request.orgId,
    chatbotId: request.chatbotId,
    expectedVersion: 'any',
    events: [
      newEvent(creation.event.type, creation.event.payload, metadata),
      ...(themes ? [newEvent(themes.type, themes.payload, metadata)] : []),
    ],
  })
  await appendToStreams(client, appends, { now: deps.now })
  return {
    applied: true,
    events: appends.reduce((n, a) => n + a.events.length, 0),
    moved: creation.decision.reassigned.length,
  }
}
