import { randomUUID } from 'node:crypto'
import type { AppendRequest } from '@cas/eventlog'
import { type NewEvent, newEvent } from '@cas/events'
import type pg from 'pg'
import type { AnalysisContext, MessageAnalysis, SemanticAbilities } from '../analyzer.ts'
import { type AnalysisJob, traceOf } from '../jobs.ts'
import type { TopicRef } from '../summary.ts'
import { configuredTopicId } from './ids.ts'
import { assignThemes } from './theme-store.ts'
import {
  type ConfiguredTopic,
  DEFAULT_TOPIC_OPTIONS,
  decideTopics,
  type NewPoint,
  OTHER_TOPIC,
  placedBefore,
  pointKey,
  type TopicState,
} from './topic-model.ts'
import type { TopicStore } from './topic-store.ts'
import { addToWindow } from './topic-window.ts'

export interface Placement {
  /** The topic of each end-user message of the jobs that has one, by `conversationId|messageId`. */
  readonly topicsOf: Map<string, TopicRef>
  /** Messages of earlier jobs that a new topic took. */
  readonly reassigned: {
    conversationId: string
    messageId: string
    topic: TopicRef
    metadata: Record<string, string>
  }[]
  /** The topic events, one stream per chatbot (streamId: the chatbot's id). */
  readonly topicAppends: AppendRequest[]
}

interface Analyzed {
  readonly job: AnalysisJob
  readonly results: readonly MessageAnalysis[]
  readonly context: AnalysisContext
}

/**
 * Places the jobs' end-user messages in their chatbots' topics (topic-model.ts), inside the commit's
 * transaction: each chatbot's topic state is locked, decided on and written back. Nothing to do without
 * a semantic analyzer (the lexical and LLM analyzers name their topics themselves).
 */
export async function placeTopics(
  client: pg.ClientBase,
  semantic: SemanticAbilities | undefined,
  store: TopicStore,
  analyzed: readonly Analyzed[],
  options: { maxTopics?: number | undefined; now: Date },
): Promise<Placement> {
  const placement: Placement = { topicsOf: new Map(), reassigned: [], topicAppends: [] }
  if (!semantic) return placement
  const byChatbot = new Map<string, Analyzed[]>()
  for (const a of analyzed) {
    const list = byChatbot.get(a.job.chatbotId) ?? []
    list.push(a)
    byChatbot.set(a.job.chatbotId, list)
  }
  const locked = await store.lock(
    client,
    analyzed.map((a) => ({ chatbotId: a.job.chatbotId, orgId: a.job.orgId })),
    semantic.model,
  )
  for (const [chatbotId, jobs] of byChatbot) {
    const { state } = locked.get(chatbotId)!
    const points: NewPoint[] = jobs.flatMap(({ job, results }) => {
      const content = new Map(job.messages.map((m) => [m.id, m.content]))
      return results.flatMap((r) =>
        r.embedding && r.terms
          ? [
              {
                conversationId: job.conversationId,
                messageId: r.messageId,
                embedding: r.embedding,
                terms: r.terms,
                text: content.get(r.messageId) ?? '',
              },
            ]
          : [],
      )
    })
    const before = await placedEarlier(client, state, points)
    const configured = await configuredTopics(chatbotId, jobs[0]!.context, state, semantic)
    const fresh = points.filter((p) => !before.has(pointKey(p)))
    const decision = await decideTopics(
      state,
      fresh,
      configured,
      { newId: randomUUID, cluster: semantic.cluster },
      { ...DEFAULT_TOPIC_OPTIONS, maxTopics: options.maxTopics ?? DEFAULT_TOPIC_OPTIONS.maxTopics },
    )
    await store.save(client, locked.get(chatbotId)!, decision)
    // What the next re-clustering clusters: every request (the analyzer gives each one terms to be named by).
    const settling = await addToWindow(
      client,
      { chatbotId, orgId: jobs[0]!.job.orgId },
      fresh.filter((p) => p.terms.length > 0),
      options.now,
    )
    const ref = (id: string): TopicRef => ({
      id,
      label: id === OTHER_TOPIC ? OTHER_TOPIC : (state.topics.get(id)?.label ?? id),
    })
    for (const [key, id] of [...before, ...decision.assigned]) {
      const [conversationId, messageId] = key.split('\u0000') as [string, string]
      placement.topicsOf.set(`${conversationId}|${messageId}`, ref(id))
    }
    // What the decision was caused by: the first job it placed messages of.
    const cause = traceOf(jobs[0]!.job)
    for (const r of decision.reassigned) {
      placement.reassigned.push({
        conversationId: r.conversationId,
        messageId: r.messageId,
        topic: ref(r.topicId),
        metadata: cause,
      })
    }
    // Topics found, relabeled or merged: the themes may change too (theme-store.ts), after them on the stream.
    // Read with this decision's placements and moves, which the job's commit writes to analysis_results after.
    const pending = new Map([...before, ...decision.assigned])
    for (const r of decision.reassigned) pending.set(pointKey(r), r.topicId)
    const themes = decision.events.length > 0 ? await assignThemes(client, state, pending) : undefined
    const events: NewEvent[] = (themes ? [...decision.events, themes] : decision.events).map((e) =>
      newEvent(e.type, e.payload, cause),
    )
    // The first request since the last re-clustering: its topics are settling until the next one.
    if (settling)
      events.push(newEvent('analysis.topics-settling', { since: options.now.toISOString() }, cause))
    if (events.length > 0) {
      placement.topicAppends.push({
        streamType: 'analysis',
        streamId: chatbotId,
        orgId: jobs[0]!.job.orgId,
        chatbotId,
        expectedVersion: 'any',
        events,
      })
    }
  }
  return placement
}

/**
 * The chatbot's own topics (settings.topics: label → keywords), each with the embedding of its label and
 * keywords; only those new to the state need one (it seeds their centroid), so only those are embedded.
 */
async function configuredTopics(
  chatbotId: string,
  context: AnalysisContext,
  state: TopicState,
  semantic: SemanticAbilities,
): Promise<ConfiguredTopic[]> {
  const entries = Object.entries(context.topics ?? {})
    .map(([label, keywords]) => ({
      label: label.trim().replace(/\s+/g, ' '),
      keywords: keywords.map((k) => k.trim()).filter((k) => k !== ''),
    }))
    .filter((t) => t.label !== '' && t.keywords.length > 0)
  const withIds = entries.map((t) => ({ ...t, id: configuredTopicId(chatbotId, t.label) }))
  const unseen = withIds.filter((t) => !state.topics.has(t.id))
  const seeds = await semantic.embedTexts(unseen.map((t) => `${t.label}: ${t.keywords.join(', ')}`))
  const seedOf = new Map(unseen.map((t, i) => [t.id, seeds[i]!]))
  const dimensions = seeds[0]?.length ?? 0
  return withIds.map((t) => ({ ...t, seed: seedOf.get(t.id) ?? new Float32Array(dimensions) }))
}

/**
 * The topic each message was given when analysed before, if it was: one primary-key probe per message. A
 * plain join of analysis_results with the batch's keys lets the planner read the whole table instead
 * (a hash or merge join): at 100,000 results a batch of 2,000 messages took 60 ms that way, 9 ms by
 * probes, at 300,000 results 145 ms. The `LIMIT` keeps the lookup a subquery the planner cannot merge
 * into a join (as SEEN_STREAM_VERSIONS in libs/eventlog; lookups.int.test.ts).
 */
export const PLACED_EARLIER = `SELECT p.conversation_id, p.message_id, r.topic
       FROM unnest($1::uuid[], $2::text[]) AS p(conversation_id, message_id)
       CROSS JOIN LATERAL (
         SELECT r.topics[1] AS topic FROM analysis_results r
          WHERE r.conversation_id = p.conversation_id AND r.message_id = p.message_id
            AND cardinality(r.topics) > 0
          LIMIT 1
       ) r`

/** The points whose messages this state placed before (a re-analysis with the same model), and where. */
async function placedEarlier(
  client: pg.ClientBase,
  state: TopicState,
  points: readonly NewPoint[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  if (points.length === 0) return found
  const { rows } = await client.query<{ conversation_id: string; message_id: string; topic: string }>({
    name: 'cas-topics-placed-earlier',
    text: PLACED_EARLIER,
    values: [points.map((p) => p.conversationId), points.map((p) => p.messageId)],
  })
  for (const row of rows) {
    const point = { conversationId: row.conversation_id, messageId: row.message_id }
    const topic = placedBefore(state, point, row.topic)
    if (topic !== undefined) found.set(pointKey(point), topic)
  }
  return found
}
