import { appendToStream } from '@cas/eventlog'
import { decideTopicCommand, newEvent, type TopicChange, type TopicCommand, type TopicRow } from '@cas/events'
import type pg from 'pg'

/** What applying one topic command did: the events it appended, or why it changed nothing. */
export type TopicCommandOutcome =
  | {
      readonly applied: true
      readonly events: number
      /** A topic creation: the requests it moved into the new topic. */
      readonly moved?: number
    }
  | { readonly applied: false; readonly reason: string }

/**
 * Applies one owner's or admin's command (a chatbot.topic-*-requested event) to the chatbot's topic state,
 * in the caller's transaction: it takes the state's lock (topic_models FOR UPDATE, as each placement and
 * re-clustering does), decides on the topics as they are now (decideTopicCommand, the rule the gateway
 * checked the command with against the read model), changes the rows as the decision says, gives the
 * state a new token (so that no process goes on with a cached copy) and appends the events to the
 * chatbot's topic stream, in order with the analysis' own topic events; the projector applies them. A
 * command the topics no longer allow (its topic merged away since it was asked, say) changes nothing.
 */
export async function applyTopicCommand(
  client: pg.ClientBase,
  target: { readonly orgId: string; readonly chatbotId: string; readonly topicId: string },
  command: TopicCommand,
  metadata: Readonly<Record<string, string>>,
  now: () => Date,
): Promise<TopicCommandOutcome> {
  const { orgId, chatbotId, topicId } = target
  const { rowCount: model } = await client.query(
    'SELECT 1 FROM topic_models WHERE chatbot_id = $1 AND org_id = $2 FOR UPDATE',
    [chatbotId, orgId],
  )
  const topics = model ? await readTopics(client, chatbotId) : new Map<string, TopicRow>()
  const decision = decideTopicCommand(topics, topicId, command)
  if (!decision.ok) return { applied: false, reason: decision.reason }
  if (decision.events.length === 0) return { applied: true, events: 0 }
  for (const change of decision.changes) await applyChange(client, chatbotId, change)
  await client.query('UPDATE topic_models SET token = gen_random_uuid() WHERE chatbot_id = $1', [chatbotId])
  await appendToStream(
    client,
    {
      streamType: 'analysis',
      streamId: chatbotId,
      orgId,
      chatbotId,
      expectedVersion: 'any',
      events: decision.events.map((e) => newEvent(e.type, e.payload)),
      metadata,
    },
    { now },
  )
  return { applied: true, events: decision.events.length }
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
 * are added to the target's (as the topic model's own merges do, topic-model.ts), so that messages like
 * the merged topic's join the target; messages waiting attached to it are attached to the target.
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
