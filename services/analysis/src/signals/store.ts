import type { AppendRequest } from '@cas/eventlog'
import { analyzerId, newEvent } from '@cas/events'
import { type ChatbotSignalSettings, chatbotSignals } from '@cas/settings'
import type pg from 'pg'
import type { AnalyzerInfo, MessageRole } from '../analyzer.ts'
import { chatbotSettings } from '../chatbot-settings.ts'
import { vectorOf } from '../topics/topic-store.ts'
import type { MessageCues } from './cues.ts'
import { type ConversationMessage, detectSignals, type SignalSettings } from './detect.ts'
import { applyVerdicts, type RefinedSignal, type RefinePolicy, type Verdict } from './llm-refine.ts'

/** A conversation whose signals are to be decided again, and the metadata of the events it may cause. */
export interface SignalTarget {
  readonly conversationId: string
  readonly orgId: string
  readonly chatbotId: string
  readonly metadata: Record<string, string>
}

interface ResultRow {
  conversation_id: string
  message_id: string
  role: MessageRole
  at: Date
  cues: MessageCues | null
  /** Rows analysed before embeddings were kept as bytes (migration 0039). */
  vector: number[] | null
  embedding: Buffer | null
}

interface StateRow {
  conversation_id: string
  analyzer: string
  signals: RefinedSignal[]
  settled: boolean
  llm_verdicts: Verdict[]
}

/** JSON with each object's keys sorted: the stored signals come back from jsonb in its key order. */
const canonical = (signals: readonly RefinedSignal[]) =>
  JSON.stringify(
    signals.map((s) => Object.fromEntries(Object.entries(s).sort(([a], [b]) => (a < b ? -1 : 1)))),
  )

export function signalSettingsOf(settings: ChatbotSignalSettings): SignalSettings {
  return {
    disabled: new Set(settings.disabled),
    custom: settings.custom,
    quietPeriodMs: settings.quietPeriodMs,
  }
}

/**
 * Decides the signals of the given conversations again from their stored results (in the caller's
 * transaction, after the results it writes), records them, and returns the analysis.signals-detected
 * appends of those whose signals changed (or were decided by another analyzer). Each conversation's state row is
 * locked first, in id order, so that a commit and the sweep never interleave on one conversation.
 * With `refine` (SIGNALS_LLM_REFINE=borderline), the LLM's verdicts on borderline signals apply, and a
 * conversation with borderline signals not yet judged is marked for the refiner (llm-refine.ts).
 */
export async function decideSignals(
  client: pg.ClientBase,
  targets: readonly SignalTarget[],
  analyzer: AnalyzerInfo,
  now: Date,
  refine?: RefinePolicy,
  /**
   * The vectors of results the caller has just written, by `conversationId|messageId`: read back from
   * their rows otherwise (as text: 384 numbers parsed per message, the most costly part of a commit's
   * reads). The same float32 values either way.
   */
  written: ReadonlyMap<string, Float32Array> = new Map(),
): Promise<AppendRequest[]> {
  if (targets.length === 0) return []
  const ids = [...new Set(targets.map((t) => t.conversationId))].sort()
  const { rows: states } = await client.query<StateRow>({
    name: 'cas-signals-state-lock',
    text: `SELECT conversation_id, analyzer, signals, settled, llm_verdicts FROM analysis_signal_state
      WHERE conversation_id = ANY($1::uuid[]) ORDER BY conversation_id FOR UPDATE`,
    values: [ids],
  })
  const stateOf = new Map(states.map((s) => [s.conversation_id, s]))
  const messages = await conversationMessages(client, ids, written)
  const settings = await chatbotSettings(
    client,
    targets.map((t) => t.chatbotId),
  )
  const analyzerName = analyzerId(analyzer)
  const appends: AppendRequest[] = []
  const rows: {
    target: SignalTarget
    signals: RefinedSignal[]
    dueAt: Date | null
    settled: boolean
    refineDue: boolean
    verdicts: Verdict[]
  }[] = []
  const seen = new Set<string>()
  for (const target of targets) {
    if (seen.has(target.conversationId)) continue
    seen.add(target.conversationId)
    const options = signalSettingsOf(chatbotSignals(settings.get(target.chatbotId) ?? {}))
    const local = detectSignals(messages.get(target.conversationId) ?? [], options, now)
    const before = stateOf.get(target.conversationId)
    const refined = refine
      ? applyVerdicts(local.signals, before?.llm_verdicts ?? [], analyzerName, refine.borderlineBelow)
      : undefined
    const detection = { ...local, signals: refined?.signals ?? local.signals }
    rows.push({
      target,
      ...detection,
      refineDue: (refined?.pending.length ?? 0) > 0,
      verdicts: refined?.used ?? [],
    })
    // Announced when they change, or when another analyzer decides them; a conversation that never had
    // a signal causes no event (its absence in the read model says as much).
    const same = canonical(before?.signals ?? []) === canonical(detection.signals)
    const sameAnalyzer = before?.analyzer === analyzerName
    if (same && (sameAnalyzer || detection.signals.length === 0)) continue
    appends.push({
      streamType: 'analysis',
      streamId: target.conversationId,
      orgId: target.orgId,
      chatbotId: target.chatbotId,
      expectedVersion: 'any',
      events: [
        newEvent(
          'analysis.signals-detected',
          {
            analyzer: { name: analyzer.name, version: analyzer.version },
            signals: detection.signals,
            settled: detection.settled,
          },
          target.metadata,
        ),
      ],
    })
  }
  await client.query({
    name: 'cas-signals-state-upsert',
    text: `INSERT INTO analysis_signal_state (conversation_id, org_id, chatbot_id, analyzer, signals, due_at, settled, updated_at,
       refine_due, llm_verdicts)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::jsonb[], $6::timestamptz[], $7::boolean[],
                          $8::timestamptz[], $9::boolean[], $10::jsonb[])
     ON CONFLICT (conversation_id) DO UPDATE SET analyzer = EXCLUDED.analyzer, signals = EXCLUDED.signals,
       due_at = EXCLUDED.due_at, settled = EXCLUDED.settled, updated_at = EXCLUDED.updated_at,
       refine_due = EXCLUDED.refine_due, llm_verdicts = EXCLUDED.llm_verdicts`,
    values: [
      rows.map((r) => r.target.conversationId),
      rows.map((r) => r.target.orgId),
      rows.map((r) => r.target.chatbotId),
      rows.map(() => analyzerName),
      rows.map((r) => JSON.stringify(r.signals)),
      rows.map((r) => r.dueAt),
      rows.map((r) => r.settled),
      rows.map(() => now),
      rows.map((r) => r.refineDue),
      rows.map((r) => JSON.stringify(r.verdicts)),
    ],
  })
  return appends
}

/**
 * The stored messages of the conversations, in conversation order: by sentAt (the analysis time for a
 * message analysed before sentAt was kept), then place in their capture.
 */
export async function conversationMessages(
  client: pg.ClientBase,
  ids: readonly string[],
  written: ReadonlyMap<string, Float32Array>,
): Promise<Map<string, ConversationMessage[]>> {
  const { rows } = await client.query<ResultRow & { known: boolean }>({
    name: 'cas-signals-conversation-messages',
    text: `SELECT c.id AS conversation_id, r.message_id, r.role, r.at, r.cues,
            CASE WHEN r.known THEN NULL ELSE r.vector END AS vector,
            CASE WHEN r.known THEN NULL ELSE r.embedding END AS embedding, r.known
       FROM unnest($1::uuid[]) AS c(id)
       CROSS JOIN LATERAL (
         SELECT r.message_id, r.role, coalesce(r.sent_at, r.analyzed_at) AS at, r.position, r.cues, r.vector,
                r.embedding,
                (r.embedding IS NOT NULL OR r.vector IS NOT NULL)
                  AND (c.id::text || '|' || r.message_id) = ANY($2::text[]) AS known
           FROM analysis_results r WHERE r.conversation_id = c.id OFFSET 0
       ) r
      ORDER BY c.id, r.at, r.position, r.message_id`,
    values: [ids, [...written.keys()]],
  })
  const out = new Map<string, ConversationMessage[]>()
  for (const row of rows) {
    const list = out.get(row.conversation_id) ?? []
    const vector = row.known
      ? written.get(`${row.conversation_id}|${row.message_id}`)
      : row.embedding
        ? vectorOf(row.embedding)
        : row.vector
          ? Float32Array.from(row.vector)
          : undefined
    list.push({
      id: row.message_id,
      role: row.role,
      sentAt: row.at,
      cues: row.cues ?? undefined,
      vector,
    })
    out.set(row.conversation_id, list)
  }
  return out
}

/**
 * The sweep: conversations whose quiet period has passed since their signals were last decided, decided
 * again as of `now` (abandonment), at most `limit` at a time; skips those a commit holds. Returns the
 * appends to make in the same transaction.
 */
export async function sweepDueSignals(
  client: pg.ClientBase,
  analyzer: AnalyzerInfo,
  now: Date,
  limit: number,
  refine?: RefinePolicy,
): Promise<AppendRequest[]> {
  const { rows } = await client.query<{ conversation_id: string; org_id: string; chatbot_id: string }>({
    name: 'cas-signals-sweep-due',
    text: `SELECT conversation_id, org_id, chatbot_id FROM analysis_signal_state
      WHERE NOT settled AND due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    values: [now, limit],
  })
  return decideSignals(
    client,
    rows.map((r) => ({
      conversationId: r.conversation_id,
      orgId: r.org_id,
      chatbotId: r.chatbot_id,
      metadata: {},
    })),
    analyzer,
    now,
    refine,
  )
}
