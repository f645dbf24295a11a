import type { AppendRequest } from '@cas/eventlog'
import { appendToStreams } from '@cas/eventlog'
import { analyzerId, type NewEvent, newEvent } from '@cas/events'
import type pg from 'pg'
import type { AnalysisContext, Analyzer, MessageAnalysis } from './analyzer.ts'
import { type AnalysisJob, completeJobs, lockClaims, traceOf } from './jobs.ts'
import type { ScoredMessage } from './signals/cues.ts'
import type { RefinePolicy } from './signals/llm-refine.ts'
import { decideSignals } from './signals/store.ts'
import { type StoredResult, summarizeConversation, type TopicRef } from './summary.ts'
import { type Placement, placeTopics } from './topics/placement.ts'
import { bytesOf, moveResults, type TopicStore } from './topics/topic-store.ts'

/**
 * The analysis job runner's commit (job-runner.ts): a group of analysed jobs' results, their topics, their
 * conversations' summaries and signals, and their events, in the caller's transaction; the jobs whose
 * claim another worker took meanwhile are left out (returned). Its SQL and row building are here.
 */

/** What the commit needs of the runner. */
export interface CommitDeps {
  readonly analyzer: Analyzer
  readonly topicStore: TopicStore
  readonly maxTopics: number | undefined
  readonly signalRefine: RefinePolicy | undefined
  readonly now: () => Date
}

export interface Analyzed {
  readonly job: AnalysisJob
  readonly results: readonly MessageAnalysis[]
  readonly context: AnalysisContext
  /** The signals' cues of each message (the language model's), in the job's order. */
  readonly scored: readonly (ScoredMessage | undefined)[]
}

interface ResultOut {
  readonly messageId: string
  readonly sentiment: MessageAnalysis['sentiment']
  readonly topics: TopicRef[]
  /** End users' messages only (analysis.messages-analyzed v4). */
  readonly language?: string
}

interface StoredRow {
  conversation_id: string
  role: StoredResult['role']
  score: number
  topics: string[]
  topic_labels: string[]
}

/**
 * Every result of the given conversations: an index probe per conversation. Written as `= ANY` the
 * planner estimates the rows from the table's statistics, and with statistics taken while the table was
 * small (autovacuum analyses it a minute apart at best) the conversations asked for can be its most
 * common values, estimated at thousands of rows each: it then scanned the whole table (seen under the
 * benchmark's load: 100–170 ms a commit). A probe per conversation has no such alternative: `OFFSET 0`
 * keeps the subquery from being merged into a join (lookups.int.test.ts).
 */
export const CONVERSATIONS_RESULTS = `SELECT c.id AS conversation_id, r.role, r.score, r.topics, r.topic_labels
   FROM unnest($1::uuid[]) AS c(id)
   CROSS JOIN LATERAL (
     SELECT r.role, r.score, r.topics, r.topic_labels FROM analysis_results r WHERE r.conversation_id = c.id
     OFFSET 0
   ) r`

/**
 * The commit's results, one row per message ($3 … $12, $14, $17: arrays in the messages' order). $13: the
 * rows' signal cues as one JSON array, each row's at its ordinal, JSON null for none (stored as SQL NULL):
 * as an array of JSON texts, node-postgres escaped each one again into an array literal, most of what the
 * main thread allocated to build the statement (bench/FINDINGS.md "perf450"). $15/$18: every embedding and
 * slot-question vector in one binary parameter, each row its offset ($14/$17) and size ($16/$19).
 */
export const RESULTS_INSERT = `INSERT INTO analysis_results (conversation_id, message_id, org_id, chatbot_id, role, score, label, topics,
         topic_labels, analyzer, analyzed_at, sent_at, position, cues, vector, embedding, slot_question)
       SELECT r.conversation_id, r.id, r.org_id, r.chatbot_id, r.role, r.score, r.label,
              ARRAY(SELECT jsonb_array_elements(r.topics) ->> 'id'),
              ARRAY(SELECT jsonb_array_elements(r.topics) ->> 'label'), $1, $2, r.sent_at, r.position,
              nullif($13::jsonb -> (r.n::int - 1), 'null'::jsonb),
              NULL, substring($15::bytea FROM r.at + 1 FOR $16::int),
              substring($18::bytea FROM r.slot_at + 1 FOR $19::int)
         FROM unnest($3::uuid[], $4::text[], $5::uuid[], $6::uuid[], $7::text[], $8::float8[], $9::text[], $10::jsonb[],
                     $11::timestamptz[], $12::int[], $14::int[], $17::int[]) WITH ORDINALITY
              AS r(conversation_id, id, org_id, chatbot_id, role, score, label, topics, sent_at, position, at, slot_at,
                   n)
       ON CONFLICT (conversation_id, message_id) DO UPDATE SET score = EXCLUDED.score, label = EXCLUDED.label,
         topics = EXCLUDED.topics, topic_labels = EXCLUDED.topic_labels, analyzer = EXCLUDED.analyzer,
         analyzed_at = EXCLUDED.analyzed_at, sent_at = EXCLUDED.sent_at, position = EXCLUDED.position,
         cues = EXCLUDED.cues, vector = NULL, embedding = EXCLUDED.embedding, slot_question = EXCLUDED.slot_question`

export async function commitResults(
  client: pg.ClientBase,
  group: readonly Analyzed[],
  deps: CommitDeps,
): Promise<Set<string>> {
  const { info } = deps.analyzer
  const now = deps.now()
  const locked = await lockClaims(
    client,
    group.map((a) => a.job),
  )
  const fenced = new Set([...locked].flatMap(([id, ours]) => (ours ? [] : [id])))
  const kept = group.filter((a) => locked.get(a.job.id) === true)
  if (kept.length === 0) return fenced
  const placement = await placeTopics(client, deps.analyzer.semantic, deps.topicStore, kept, {
    maxTopics: deps.maxTopics,
    now,
  })
  const outs = kept.map(({ job, results }) => {
    const messages = new Map(job.messages.map((m) => [m.id, m]))
    return results.map((result): ResultOut => {
      const message = messages.get(result.messageId)
      const topics = topicsOf(job, result, message?.role, placement)
      const out = { messageId: result.messageId, sentiment: result.sentiment, topics }
      // The analyzer detected it, in its thread (MessageAnalysis.language).
      return message?.role === 'user' && result.language !== undefined
        ? { ...out, language: result.language }
        : out
    })
  })
  const rows = kept.flatMap(({ job, scored, results }, i) =>
    outs[i]!.map((out, position) => {
      const message = job.messages[position]!
      const cue = scored[position]
      return {
        job,
        out,
        role: message.role,
        sentAt: validDate(message.sentAt),
        position,
        cues: cue ? cue.cues : null,
        vectorOf: cue?.vector,
        slotQuestion: results[position]!.slotQuestion,
      }
    }),
  )
  // Every embedding in one binary parameter (no text form to print and parse), each row its offset.
  const embeddings = embeddingBytes(rows.map((r) => r.vectorOf))
  const slotQuestions = embeddingBytes(rows.map((r) => r.slotQuestion))
  await client.query({
    name: 'cas-analysis-results-insert',
    text: RESULTS_INSERT,
    values: [
      analyzerId(info),
      now,
      rows.map((r) => r.job.conversationId),
      rows.map((r) => r.out.messageId),
      rows.map((r) => r.job.orgId),
      rows.map((r) => r.job.chatbotId),
      rows.map((r) => r.role),
      rows.map((r) => r.out.sentiment.score),
      rows.map((r) => r.out.sentiment.label),
      rows.map((r) => JSON.stringify(r.out.topics)),
      rows.map((r) => r.sentAt),
      rows.map((r) => r.position),
      JSON.stringify(rows.map((r) => r.cues)),
      embeddings.offsets,
      embeddings.bytes,
      embeddings.size,
      slotQuestions.offsets,
      slotQuestions.bytes,
      slotQuestions.size,
    ],
  })
  // Earlier messages a new topic took: their results get the topic, their conversations a results event.
  const moved = await moveResults(client, placement.reassigned)
  const jobConversations = new Set(kept.map((a) => a.job.conversationId))
  const conversations = [...new Set([...jobConversations, ...moved.keys()])]
  const { rows: stored } = await client.query<StoredRow>({
    name: 'cas-analysis-conversation-results',
    text: CONVERSATIONS_RESULTS,
    values: [conversations],
  })
  const byConversation = new Map<string, StoredResult[]>()
  for (const row of stored) {
    const list = byConversation.get(row.conversation_id) ?? []
    list.push({ role: row.role, score: row.score, topics: refsOf(row.topics, row.topic_labels) })
    byConversation.set(row.conversation_id, list)
  }
  const analyzer = { name: info.name, version: info.version }
  // signalsDecided: a job's conversation has its signals decided again below (decideSignals), in this
  // transaction; one no job of the commit analyses, whose earlier messages a new topic took, only has
  // results moved, which must not make it count as decided (rm_signals_decided: checked for a signal).
  const resultEvents = (
    conversationId: string,
    results: readonly ResultOut[],
    metadata: Record<string, string>,
    signalsDecided: boolean,
  ): NewEvent[] => [
    newEvent('analysis.messages-analyzed', { analyzer, results, signalsDecided }, metadata),
    newEvent(
      'analysis.conversation-analyzed',
      { analyzer, ...summarizeConversation(byConversation.get(conversationId) ?? []) },
      metadata,
    ),
  ]
  const appends: AppendRequest[] = [...placement.topicAppends]
  for (const [i, { job }] of kept.entries()) {
    const own = outs[i]!
    const alsoMoved = (moved.get(job.conversationId)?.results ?? []).filter(
      (m) => !own.some((o) => o.messageId === m.messageId),
    )
    appends.push(
      analysisAppend(job, resultEvents(job.conversationId, [...own, ...alsoMoved], traceOf(job), true)),
    )
  }
  for (const [conversationId, m] of moved) {
    if (jobConversations.has(conversationId)) continue
    appends.push({
      streamType: 'analysis',
      streamId: conversationId,
      orgId: m.orgId,
      chatbotId: m.chatbotId,
      expectedVersion: 'any',
      events: resultEvents(conversationId, m.results, m.metadata, false),
    })
  }
  // The signals of the jobs' conversations, decided again with their new messages.
  const signalAppends = await decideSignals(
    client,
    kept.map(({ job }) => ({
      conversationId: job.conversationId,
      orgId: job.orgId,
      chatbotId: job.chatbotId,
      metadata: traceOf(job),
    })),
    info,
    now,
    deps.signalRefine,
    // The vectors just written: not read back.
    new Map(
      rows.flatMap((r) => (r.vectorOf ? [[`${r.job.conversationId}|${r.out.messageId}`, r.vectorOf]] : [])),
    ),
  )
  // One append per stream: a conversation's signals go after its results.
  for (const signalAppend of signalAppends) {
    const i = appends.findIndex((a) => a.streamType === 'analysis' && a.streamId === signalAppend.streamId)
    if (i === -1) appends.push(signalAppend)
    else appends[i] = { ...appends[i]!, events: [...appends[i]!.events, ...signalAppend.events] }
  }
  await appendToStreams(client, appends, { now: deps.now })
  await completeJobs(
    client,
    kept.map((a) => a.job.id),
    now,
  )
  return fenced
}

export function analysisAppend(job: AnalysisJob, events: readonly NewEvent[]): AppendRequest {
  return {
    streamType: 'analysis',
    streamId: job.conversationId,
    orgId: job.orgId,
    chatbotId: job.chatbotId,
    expectedVersion: 'any',
    events,
  }
}

/** A result's topics: the end user's messages only, as placed (semantic analyzer) or as the analyzer named them. */
function topicsOf(
  job: AnalysisJob,
  result: MessageAnalysis,
  role: string | undefined,
  placement: Placement,
): TopicRef[] {
  if (role !== 'user') return []
  const placed = placement.topicsOf.get(`${job.conversationId}|${result.messageId}`)
  if (placed) return [placed]
  return result.topics.map((label) => ({ id: label, label }))
}

/**
 * The embeddings as one buffer of float32 bytes (the machine's order, as topic-store.ts's bytesOf keeps
 * them) and each one's byte offset in it (null for none); `size` is the bytes of one embedding.
 */
function embeddingBytes(vectors: readonly (Float32Array | undefined)[]) {
  const size = (vectors.find((v) => v !== undefined)?.length ?? 0) * 4
  const present = vectors.filter((v) => v !== undefined)
  const bytes = Buffer.allocUnsafe(present.length * size)
  let at = 0
  const offsets = vectors.map((v) => {
    if (v === undefined) return null
    if (v.length * 4 !== size) throw new Error('embeddings of different lengths in one commit')
    bytesOf(v).copy(bytes, at)
    at += size
    return at - size
  })
  return { bytes, offsets, size }
}

/** A captured sentAt as a Date; null when absent (a job queued before sentAt was kept) or unreadable. */
export function validDate(value: string | undefined): Date | null {
  if (value === undefined) return null
  const d = new Date(value)
  return Number.isNaN(d.getTime()) ? null : d
}

function refsOf(ids: readonly string[], labels: readonly string[]): TopicRef[] {
  return ids.map((id, i) => ({ id, label: labels[i] ?? id }))
}
