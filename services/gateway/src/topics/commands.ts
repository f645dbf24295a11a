import { withTransaction } from '@cas/db'
import { appendToStream, lockStreamForUpdate, readStream } from '@cas/eventlog'
import {
  type ChatbotEvent,
  decideTopicCommand,
  newEvent,
  parseRecordedEvent,
  type TopicCommand,
  type TopicRow,
  topicCommandRequest,
} from '@cas/events'
import { AppError, type EventTrace } from '@cas/http'
import type pg from 'pg'
import { auditEntriesOf } from '../audit/entries.ts'
import { recordAudit } from '../audit/record.ts'
import { evolve, initialChatbotState } from '../chatbots/chatbot.ts'

export interface TopicCommandDeps {
  readonly pool: pg.Pool
  readonly now: () => Date
}

export interface TopicView {
  readonly id: string
  readonly label: string
  readonly pinned: boolean
  readonly hidden: boolean
  readonly configured: boolean
  readonly mergedInto: string | null
}

/**
 * Runs one topic command in one transaction, as the chatbot's other commands run: under the chatbot
 * stream's lock, it decides (decideTopicCommand) on the chatbot's topics as the read model has them
 * (rm_topics, built from the analysis service's events), refuses what is already wrong there, and
 * appends the command as a chatbot.topic-*-requested event to the chatbot's stream, with its audit entry.
 * The topic state is the analysis service's: it applies the event (deciding again on its own state) and
 * records what it did on the chatbot's topic stream (analysis.topic-*), which the projector applies to
 * rm_topics. The answer is the topic as the command leaves it.
 */
export async function executeTopicCommand(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  topicId: string,
  command: TopicCommand,
  trace?: EventTrace,
): Promise<{ topic: TopicView }> {
  return withTransaction(deps.pool, async (client) => {
    await lockStreamForUpdate(client, 'chatbot', chatbotId)
    const records = await readStream(client, 'chatbot', chatbotId)
    const chatbot = records
      .map((r) => parseRecordedEvent(r) as ChatbotEvent)
      .reduce(evolve, initialChatbotState)
    if (chatbot.status !== 'active' || chatbot.orgId !== orgId) {
      throw new AppError('not_found', 'No chatbot with this id.')
    }
    const topics = await readTopics(client, chatbotId)
    const decision = decideTopicCommand(topics, topicId, command)
    if (!decision.ok) {
      switch (decision.reason) {
        case 'not_found':
          throw new AppError('not_found', 'No topic with this id.')
        case 'gone':
          throw new AppError('conflict', decision.message)
        case 'configured':
          throw new AppError(
            'conflict',
            "This topic is one of the chatbot's own (settings.topics): change it in the chatbot's settings.",
          )
        case 'label_taken':
          throw new AppError('conflict', `Another topic of this chatbot (${decision.other}) has this label.`)
        case 'bad_target':
          throw new AppError('invalid_request', decision.message, [
            { path: '/into', message: decision.message },
          ])
      }
    }
    if (decision.events.length > 0) {
      const request = topicCommandRequest(topicId, command)
      const appended = await appendToStream(
        client,
        {
          streamType: 'chatbot',
          streamId: chatbotId,
          orgId,
          chatbotId,
          expectedVersion: records.length,
          events: [newEvent(request.type, request.payload)],
          metadata: trace,
        },
        { now: deps.now },
      )
      // The gateway's chatbot row follows its stream's version (read-your-writes of the chatbot).
      await client.query('UPDATE chatbots SET stream_version = $2 WHERE id = $1', [
        chatbotId,
        appended.streamVersion,
      ])
      const events = appended.records.map((r) => parseRecordedEvent(r) as ChatbotEvent)
      await recordAudit(client, auditEntriesOf(events, { chatbotName: chatbot.name }))
    }
    const topic = topics.get(topicId)!
    const changed = Object.assign(
      {},
      ...decision.changes.filter((c) => c.id === topicId),
    ) as Partial<TopicRow>
    return {
      topic: {
        id: topic.id,
        label: changed.label ?? topic.label,
        pinned: changed.pinned ?? topic.pinned,
        hidden: changed.hidden ?? topic.hidden,
        configured: topic.configured,
        mergedInto: (changed as { mergedInto?: string }).mergedInto ?? topic.mergedInto,
      },
    }
  })
}

/** The chatbot's topics as the read model has them: merged ones count in another (canonical_id). */
async function readTopics(client: pg.ClientBase, chatbotId: string): Promise<Map<string, TopicRow>> {
  const { rows } = await client.query<{
    id: string
    label: string
    configured: boolean
    canonical_id: string
    retired: boolean
    pinned: boolean
    hidden: boolean
  }>(
    `SELECT id, label, configured, canonical_id, retired_at IS NOT NULL AS retired, pinned, hidden
       FROM rm_topics WHERE chatbot_id = $1`,
    [chatbotId],
  )
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        label: r.label,
        configured: r.configured,
        mergedInto: r.canonical_id === r.id ? null : r.canonical_id,
        retired: r.retired,
        pinned: r.pinned,
        hidden: r.hidden,
      },
    ]),
  )
}
