import { withTransaction } from '@cas/db'
import { appendToStream } from '@cas/eventlog'
import { newEvent } from '@cas/events'
import { AppError, type EventTrace } from '@cas/http'
import type pg from 'pg'
import { decideTopicCommand, type TopicChange, type TopicCommand, type TopicRow } from './topic-decision.ts'

export interface TopicCommandDeps {
  readonly pool: pg.Pool
  readonly now: () => Date
}

export interface TopicCommandResult {
  readonly topic: {
    readonly id: string
    readonly label: string
    readonly pinned: boolean
    readonly hidden: boolean
    readonly configured: boolean
    readonly mergedInto: string | null
  }
}

/**
 * Runs one topic command (topic-decision.ts decides) in one transaction: it takes the chatbot's topic
 * state lock (topic_models FOR UPDATE, as the analysis service does for each placement and re-clustering),
 * changes the analysis service's topic rows (topic_clusters) as the events say, gives the state a new token
 * (so that no analysis process goes on with a cached copy), and appends the events to the chatbot's topic
 * stream (analysis, streamId = the chatbot's id), where they stay in order with the analysis' own topic
 * events; the projector applies them to rm_topics. The state is the analysis service's, written here under
 * its lock so that a command's effect is there when the answer is: the next placement or re-clustering
 * sees it.
 */
export async function executeTopicCommand(
  deps: TopicCommandDeps,
  orgId: string,
  chatbotId: string,
  topicId: string,
  command: TopicCommand,
  trace?: EventTrace,
): Promise<TopicCommandResult> {
  return withTransaction(deps.pool, async (client) => {
    const { rowCount: chatbot } = await client.query('SELECT 1 FROM chatbots WHERE id = $1 AND org_id = $2', [
      chatbotId,
      orgId,
    ])
    if (!chatbot) throw new AppError('not_found', 'No chatbot with this id.')
    const { rowCount: model } = await client.query(
      'SELECT 1 FROM topic_models WHERE chatbot_id = $1 AND org_id = $2 FOR UPDATE',
      [chatbotId, orgId],
    )
    const topics = model ? await readTopics(client, chatbotId) : new Map<string, TopicRow>()
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
      for (const change of decision.changes) await applyChange(client, chatbotId, change)
      await client.query('UPDATE topic_models SET token = gen_random_uuid() WHERE chatbot_id = $1', [
        chatbotId,
      ])
      await appendToStream(
        client,
        {
          streamType: 'analysis',
          streamId: chatbotId,
          orgId,
          chatbotId,
          expectedVersion: 'any',
          events: decision.events.map((e) => newEvent(e.type, e.payload)),
          metadata: trace,
        },
        { now: deps.now },
      )
    }
    const after = (await readTopics(client, chatbotId)).get(topicId)!
    return {
      topic: {
        id: after.id,
        label: after.label,
        pinned: after.pinned,
        hidden: after.hidden,
        configured: after.configured,
        mergedInto: after.mergedInto,
      },
    }
  })
}

async function readTopics(client: pg.ClientBase, chatbotId: string): Promise<Map<string, TopicRow>> {
  const { rows } = await client.query<{
    id: string
    label: string
    configured: boolean
    merged_into: string | null
    retired: boolean
    pinned: boolean
    hidden: boolean
  }>(
    `SELECT id, label, configured, merged_into, retired, pinned, hidden FROM topic_clusters
      WHERE chatbot_id = $1 ORDER BY seq`,
    [chatbotId],
  )
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        label: r.label,
        configured: r.configured,
        mergedInto: r.merged_into,
        retired: r.retired,
        pinned: r.pinned,
        hidden: r.hidden,
      },
    ]),
  )
}

async function applyChange(client: pg.ClientBase, chatbotId: string, change: TopicChange): Promise<void> {
  if (change.label !== undefined) {
    await client.query('UPDATE topic_clusters SET label = $3 WHERE chatbot_id = $1 AND id = $2', [
      chatbotId,
      change.id,
      change.label,
    ])
  }
  if (change.pinned !== undefined) {
    await client.query('UPDATE topic_clusters SET pinned = $3 WHERE chatbot_id = $1 AND id = $2', [
      chatbotId,
      change.id,
      change.pinned,
    ])
  }
  if (change.hidden !== undefined) {
    await client.query('UPDATE topic_clusters SET hidden = $3 WHERE chatbot_id = $1 AND id = $2', [
      chatbotId,
      change.id,
      change.hidden,
    ])
  }
  if (change.mergedInto !== undefined) await mergeRows(client, chatbotId, change.id, change.mergedInto)
}

/**
 * The merged topic's members count in the target from now on: its embedding sum, size, spread and terms
 * are added to the target's (as the analysis service's own merges do, topic-model.ts), so that messages
 * like the merged topic's join the target; messages waiting attached to it are attached to the target.
 */
async function mergeRows(
  client: pg.ClientBase,
  chatbotId: string,
  from: string,
  into: string,
): Promise<void> {
  const { rows } = await client.query<{
    id: string
    embedding_sum: Buffer
    size: number
    terms: Record<string, number>
    spread_count: number
    spread_sum: number
    spread_squares: number
  }>(
    `SELECT id, embedding_sum, size, terms, spread_count, spread_sum, spread_squares FROM topic_clusters
      WHERE chatbot_id = $1 AND id = ANY($2::uuid[])`,
    [chatbotId, [from, into]],
  )
  const source = rows.find((r) => r.id === from)!
  const target = rows.find((r) => r.id === into)!
  const sum = floats(target.embedding_sum)
  const add = floats(source.embedding_sum)
  if (sum.length === add.length) for (let i = 0; i < sum.length; i++) sum[i]! += add[i]!
  const terms = { ...target.terms }
  for (const [term, n] of Object.entries(source.terms)) terms[term] = (terms[term] ?? 0) + n
  await client.query(
    `UPDATE topic_clusters SET embedding_sum = $3, size = size + $4, terms = $5, spread_count = spread_count + $6,
       spread_sum = spread_sum + $7, spread_squares = spread_squares + $8
     WHERE chatbot_id = $1 AND id = $2`,
    [
      chatbotId,
      into,
      Buffer.from(sum.buffer, sum.byteOffset, sum.byteLength),
      source.size,
      JSON.stringify(terms),
      source.spread_count,
      source.spread_sum,
      source.spread_squares,
    ],
  )
  await client.query('UPDATE topic_clusters SET merged_into = $3 WHERE chatbot_id = $1 AND id = $2', [
    chatbotId,
    from,
    into,
  ])
  await client.query('UPDATE topic_pool SET attached_to = $3 WHERE chatbot_id = $1 AND attached_to = $2', [
    chatbotId,
    from,
    into,
  ])
}

/** An embedding sum's float32 bytes (a copy: the driver's Buffer may not be aligned for a view). */
function floats(bytes: Buffer): Float32Array {
  const copy = new Uint8Array(bytes)
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4)
}
