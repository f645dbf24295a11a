import { withTransaction } from '@cas/db'
import { appendToStream, lockStreamForUpdate, readStream } from '@cas/eventlog'
import {
  type ChatbotEvent,
  decideTopicCommand,
  foldPendingTopicCommands,
  isTopicCommandEventType,
  type NewEvent,
  newEvent,
  parseRecordedEvent,
  pendingTopicCommandOf,
  type TopicChange,
  type TopicCommand,
  type TopicCommandEventType,
  type TopicRow,
  tidyLabel,
  topicCommandRequest,
  topicWithLabel,
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

/**
 * The long tail's label: the topics API and the dashboard show the conversations in no topic as "Other"
 * (id `other`, `?topic=other`), so no topic of a person's may take it, in any case.
 */
const OTHER_LABEL = 'other'

function refuseOtherLabel(label: string): void {
  if (tidyLabel(label).toLowerCase() === OTHER_LABEL) {
    throw new AppError(
      'conflict',
      '"Other" is the label of the conversations in no topic (the long tail): choose another label.',
    )
  }
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
 * Runs one topic command (onChatbotTopics): decideTopicCommand on the chatbot's topics as the read model
 * has them and the commands still pending leave them, refusing what is wrong there, and the command as a
 * chatbot.topic-*-requested event. The topic state is the analysis service's: it applies the event
 * (deciding again on its own state, which re-clustering may have moved meanwhile) and records what it did
 * on the chatbot's topic stream (analysis.topic-*, then analysis.topic-command-handled), which the
 * projector applies to rm_topics. The answer is the topic as the command leaves it.
 */
export async function executeTopicCommand(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  topicId: string,
  command: TopicCommand,
  trace?: EventTrace,
): Promise<{ topic: TopicView; commandId: string | null }> {
  return onChatbotTopics(deps, orgId, chatbotId, trace, (topics) => {
    const decision = decideTopicCommand(topics, topicId, command)
    if (decision.ok && command.type === 'rename') refuseOtherLabel(command.label)
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
    const topic = topics.get(topicId)!
    const request = topicCommandRequest(topic, command)
    const changed = Object.assign({}, ...decision.changes.filter((c) => c.id === topicId)) as TopicChange
    return {
      event: decision.events.length > 0 ? newEvent(request.type, request.payload) : undefined,
      result: {
        topic: {
          id: topic.id,
          label: changed.label ?? topic.label,
          pinned: changed.pinned ?? topic.pinned,
          hidden: changed.hidden ?? topic.hidden,
          configured: topic.configured,
          mergedInto: changed.mergedInto ?? topic.mergedInto,
        },
      },
    }
  })
}

/**
 * Asks for a topic made from examples (chatbot.topic-creation-requested): its id is given here, its
 * label must be no other topic's. The analysis service embeds the examples and creates it.
 */
export async function executeTopicCreation(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  request: { readonly topicId: string; readonly label: string; readonly examples: readonly string[] },
  trace?: EventTrace,
): Promise<{ topic: TopicView; commandId: string | null }> {
  return onChatbotTopics(deps, orgId, chatbotId, trace, (topics) => {
    const label = tidyLabel(request.label)
    refuseOtherLabel(label)
    const other = topicWithLabel(topics, label)
    if (other) throw new AppError('conflict', `Another topic of this chatbot (${other.id}) has this label.`)
    const examples = request.examples.map((e) => e.trim())
    return {
      event: newEvent('chatbot.topic-creation-requested', { topicId: request.topicId, label, examples }),
      result: {
        topic: {
          id: request.topicId,
          label,
          pinned: true,
          hidden: false,
          configured: false,
          mergedInto: null,
        },
      },
    }
  })
}

/**
 * Asks for the chatbot's captured messages to be analysed again by the analyzer the analysis service runs
 * now (chatbot.reanalysis-requested). One re-analysis at a time: refused (conflict) while the last one
 * asked for has not been started by the analysis service (rm_reanalysis does not hold it yet) or is running.
 */
export async function executeReanalysisRequest(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  request: { readonly reanalysisId: string; readonly since?: string },
  trace?: EventTrace,
): Promise<{ reanalysisId: string }> {
  const { result } = await onChatbot(deps, orgId, chatbotId, trace, async (client, records) => {
    const last = records
      .map((r) => parseRecordedEvent(r) as ChatbotEvent)
      .filter((e) => e.type === 'chatbot.reanalysis-requested')
      .at(-1)
    if (last) {
      const { rows } = await client.query<{ reanalysis_id: string; status: string }>(
        'SELECT reanalysis_id, status FROM rm_reanalysis WHERE chatbot_id = $1',
        [chatbotId],
      )
      const row = rows[0]
      if (!row || row.reanalysis_id !== last.payload.reanalysisId || row.status === 'running') {
        throw new AppError(
          'conflict',
          `A re-analysis of this chatbot (${last.payload.reanalysisId}) is still running: wait until it has finished.`,
        )
      }
    }
    return {
      event: newEvent('chatbot.reanalysis-requested', {
        reanalysisId: request.reanalysisId,
        ...(request.since ? { since: request.since } : {}),
      }),
      result: { reanalysisId: request.reanalysisId },
    }
  })
  return result
}

/**
 * Runs one command on a chatbot's topics in one transaction, as the chatbot's other commands run: under
 * the chatbot stream's lock, `decide` sees the chatbot's topics as the read model has them (rm_topics,
 * built from the analysis service's events) with the topic commands the analysis has not handled yet
 * (those after rm_topic_commands' version on the chatbot's stream) applied in order, and throws for what
 * is wrong there; the command event it returns (none when the command changes nothing) is appended to the
 * chatbot's stream with its audit entry. So a command sent right after another is decided on what the
 * first will do: two opposite merges sent at once get one 200 and one 400, not two 200s of which the
 * analysis silently refuses one.
 */
async function onChatbotTopics<Result>(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  trace: EventTrace | undefined,
  decide: (topics: ReadonlyMap<string, TopicRow>) => { event: NewEvent | undefined; result: Result },
): Promise<Result & { commandId: string | null }> {
  const { result, commandId } = await onChatbot(deps, orgId, chatbotId, trace, async (client, records) => {
    const { topics, handledThrough } = await readTopics(client, chatbotId)
    const pending = records
      .filter((r) => r.streamVersion > handledThrough)
      .map((r) => parseRecordedEvent(r) as ChatbotEvent)
      .filter((e): e is Extract<ChatbotEvent, { type: TopicCommandEventType }> =>
        isTopicCommandEventType(e.type),
      )
      .map(pendingTopicCommandOf)
    return decide(foldPendingTopicCommands(topics, pending))
  })
  return { ...result, commandId }
}

/**
 * Runs one command on a chatbot in one transaction, under its stream's lock: `decide` sees the stream
 * and throws for what is wrong; the command event it returns (none when the command changes nothing) is
 * appended to the chatbot's stream with its audit entry. commandId is that event's id (null without one).
 */
async function onChatbot<Result>(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  trace: EventTrace | undefined,
  decide: (
    client: pg.ClientBase,
    records: Awaited<ReturnType<typeof readStream>>,
  ) => Promise<{ event: NewEvent | undefined; result: Result }>,
): Promise<{ result: Result; commandId: string | null }> {
  return withTransaction(deps.pool, async (client) => {
    await lockStreamForUpdate(client, 'chatbot', chatbotId)
    const records = await readStream(client, 'chatbot', chatbotId)
    const chatbot = records
      .map((r) => parseRecordedEvent(r) as ChatbotEvent)
      .reduce(evolve, initialChatbotState)
    if (chatbot.status !== 'active' || chatbot.orgId !== orgId) {
      throw new AppError('not_found', 'No chatbot with this id.')
    }
    const { event, result } = await decide(client, records)
    let commandId: string | null = null
    if (event) {
      const appended = await appendToStream(
        client,
        {
          streamType: 'chatbot',
          streamId: chatbotId,
          orgId,
          chatbotId,
          expectedVersion: records.length,
          events: [event],
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
      commandId = events[0]!.id
    }
    return { result, commandId }
  })
}

/**
 * The chatbot's topics as the read model has them (merged ones count in another: canonical_id), and the
 * version on the chatbot's stream of the last topic command they hold. One statement, so one snapshot:
 * the projector writes both in one transaction. Should a batch boundary ever split a command's topic
 * events from its outcome, the fold re-applies a command the rows already hold, which changes nothing
 * (the same label, a topic already merged away or created is skipped).
 */
async function readTopics(
  client: pg.ClientBase,
  chatbotId: string,
): Promise<{ topics: Map<string, TopicRow>; handledThrough: number }> {
  const { rows: read } = await client.query<{
    handled: number
    topics: {
      id: string
      label: string
      configured: boolean
      canonical_id: string
      retired: boolean
      pinned: boolean
      hidden: boolean
    }[]
  }>(
    `SELECT coalesce((SELECT last_command_version FROM rm_topic_commands WHERE chatbot_id = $1), 0) AS handled,
            coalesce((SELECT json_agg(json_build_object('id', id, 'label', label, 'configured', configured,
                        'canonical_id', canonical_id, 'retired', retired_at IS NOT NULL, 'pinned', pinned,
                        'hidden', hidden))
                        FROM rm_topics WHERE chatbot_id = $1), '[]') AS topics`,
    [chatbotId],
  )
  const { handled, topics: rows } = read[0]!
  const topics = new Map(
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
  return { topics, handledThrough: handled }
}
