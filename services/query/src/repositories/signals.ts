import { BUILTIN_SIGNAL_NAMES } from '@cas/events'
import type pg from 'pg'
import type { Interval } from '../analytics/range.ts'
import { BUCKETS, type RollupScope } from './analytics.ts'
import { conversationTopics, resolveTopics } from './topics.ts'

/** A conversation's signal as the API shows it. */
export interface ConversationSignal {
  name: string
  label: string | null
  confidence: number
  evidence: string[]
  refinedBy: string | null
}

interface SignalRow {
  conversation_id: string
  signal: string
  label: string | null
  confidence: number
  evidence: string[]
  refined_by: string | null
}

/** The signals of the given conversations, built-in ones first (in their documented order), then by name. */
export async function signalsOf(
  client: pg.ClientBase,
  orgId: string,
  conversationIds: readonly string[],
): Promise<Map<string, ConversationSignal[]>> {
  const out = new Map<string, ConversationSignal[]>(conversationIds.map((id) => [id, []]))
  if (conversationIds.length === 0) return out
  const { rows } = await client.query<SignalRow>(
    `SELECT conversation_id, signal, label, confidence, evidence, refined_by FROM rm_conversation_signals
      WHERE org_id = $1 AND conversation_id = ANY($2::uuid[])`,
    [orgId, [...conversationIds]],
  )
  for (const r of rows.sort((a, b) => signalOrder(a.signal, b.signal))) {
    out.get(r.conversation_id)?.push({
      name: r.signal,
      label: r.label,
      confidence: Math.round(r.confidence * 100) / 100,
      evidence: r.evidence,
      refinedBy: r.refined_by,
    })
  }
  return out
}

export function signalOrder(a: string, b: string): number {
  const rank = (s: string) => {
    const i = (BUILTIN_SIGNAL_NAMES as readonly string[]).indexOf(s)
    return i === -1 ? BUILTIN_SIGNAL_NAMES.length : i
  }
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)
}

/** The signals of the knowledge gaps: what a topic's rates are given for. */
export const GAP_SIGNALS = ['bot_failure', 'escalation', 'repetition', 'frustration', 'abandonment'] as const

export interface SignalFigures {
  name: string
  label: string | null
  conversations: number
  rate: number
  trend: { bucket: string; conversations: number; rate: number }[]
}

export interface TopicSignalFigures {
  id: string
  label: string
  conversations: number
  signals: Record<string, { conversations: number; rate: number }>
}

export interface NeedsAttention {
  id: string
  label: string
  conversations: number
  botFailures: number
  botFailureRate: number
  /** The lower bound of the 95 % Wilson interval of the bot-failure rate: what the ranking sorts by. */
  score: number
  examples: string[]
}

export interface SignalsReport {
  conversations: number
  signals: SignalFigures[]
  topics: TopicSignalFigures[]
  needsAttention: NeedsAttention[]
  buckets: { bucket: string; conversations: number }[]
}

const rate = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10_000) / 10_000)

/** Wilson's lower bound (95 %): a topic with 1 failure in 1 conversation does not outrank 30 in 60. */
function wilsonLower(k: number, n: number): number {
  if (n === 0) return 0
  const z = 1.96
  const p = k / n
  const centre = p + (z * z) / (2 * n)
  const spread = z * Math.sqrt((p * (1 - p) + (z * z) / (4 * n)) / n)
  return (centre - spread) / (1 + (z * z) / n)
}

const EXAMPLES = 3

/**
 * Signals over the conversations whose last message is in range (as the conversation list's from/to):
 * per signal its conversations, rate and trend (per bucket of the last message's local time); per topic
 * the rates of the knowledge-gap signals; and the topics ranked by how often the bot fails their users.
 * Read from the conversations and their signals (not from rollups): one pass over the range's
 * conversations of the scope.
 */
export async function readSignals(
  client: pg.ClientBase,
  scope: RollupScope,
  interval: Interval,
  tz: string,
  limit: number,
): Promise<SignalsReport> {
  const { series, key } = BUCKETS[interval]
  const params: unknown[] = [scope.orgId, scope.from, scope.to, scope.chatbotId ?? null]
  if (series.includes('$TZ')) params.push(tz)
  const tzParam = `$${params.length}::text`
  // The same parameters as below: each is typed once, so the statement mentions the unused ones.
  const { rows: buckets } = await client.query<{ key: Date; bucket: Date }>(
    `WITH b AS (${series.replaceAll('$TZ', tzParam)})
     SELECT key, bucket FROM b WHERE $1::uuid IS NOT NULL AND ($4::uuid IS NULL OR $4::uuid IS NOT NULL)
      ORDER BY key`,
    params,
  )
  const { rows } = await client.query<{
    id: string
    topics: string[]
    key: Date
    last_message_at: Date
    signals: string[]
    labels: (string | null)[]
  }>(
    `SELECT c.id, c.topics, c.last_message_at, ${key.replaceAll('$TZ', tzParam)} AS key,
            coalesce(array_agg(s.signal) FILTER (WHERE s.signal IS NOT NULL), '{}') AS signals,
            coalesce(array_agg(s.label) FILTER (WHERE s.signal IS NOT NULL), '{}') AS labels
       FROM (SELECT id, topics, last_message_at, date_trunc('hour', last_message_at) AS hour
               FROM rm_conversations
              WHERE org_id = $1 AND last_message_at >= $2 AND last_message_at < $3
                AND ($4::uuid IS NULL OR chatbot_id = $4)
                AND external_id IS NOT NULL) c
       LEFT JOIN rm_conversation_signals s ON s.conversation_id = c.id AND s.org_id = $1
      GROUP BY c.id, c.topics, c.last_message_at, c.hour`,
    params,
  )
  const bucketOf = new Map(buckets.map((b) => [b.key.getTime(), b.bucket.toISOString()]))
  const perBucket = new Map<string, number>(buckets.map((b) => [b.bucket.toISOString(), 0]))
  const bySignal = new Map<string, { label: string | null; ids: string[]; perBucket: Map<string, number> }>()
  for (const name of BUILTIN_SIGNAL_NAMES) bySignal.set(name, { label: null, ids: [], perBucket: new Map() })
  const resolved = await resolveTopics(
    client,
    scope.orgId,
    rows.flatMap((r) => r.topics),
  )
  // Topics an owner or admin hid are left out of the per-topic figures, as from the topics report; their
  // conversations still count in the signals' totals (they keep their topics and their signals).
  const { rows: hiddenRows } = await client.query<{ id: string }>(
    `SELECT id FROM rm_topics WHERE org_id = $1 AND hidden AND ($2::uuid IS NULL OR chatbot_id = $2)`,
    [scope.orgId, scope.chatbotId ?? null],
  )
  const hidden = new Set(hiddenRows.map((r) => r.id))
  const byTopic = new Map<string, { label: string; ids: string[]; signals: Map<string, string[]> }>()
  // Most recent first, so that a topic's examples are its latest conversations.
  rows.sort((a, b) => b.last_message_at.getTime() - a.last_message_at.getTime() || (a.id < b.id ? 1 : -1))
  for (const r of rows) {
    const bucket = bucketOf.get(r.key.getTime())
    if (bucket !== undefined) perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + 1)
    r.signals.forEach((name, i) => {
      let entry = bySignal.get(name)
      if (!entry) {
        entry = { label: r.labels[i] ?? null, ids: [], perBucket: new Map() }
        bySignal.set(name, entry)
      }
      entry.ids.push(r.id)
      if (bucket !== undefined) entry.perBucket.set(bucket, (entry.perBucket.get(bucket) ?? 0) + 1)
    })
    for (const topic of conversationTopics(r.topics, resolved)) {
      if (hidden.has(topic.id)) continue
      let entry = byTopic.get(topic.id)
      if (!entry) {
        entry = { label: topic.label, ids: [], signals: new Map() }
        byTopic.set(topic.id, entry)
      }
      entry.ids.push(r.id)
      for (const name of r.signals) {
        const list = entry.signals.get(name) ?? []
        list.push(r.id)
        entry.signals.set(name, list)
      }
    }
  }
  const total = rows.length
  const signals = [...bySignal]
    .sort(([a], [b]) => signalOrder(a, b))
    .map(([name, s]) => ({
      name,
      label: s.label,
      conversations: s.ids.length,
      rate: rate(s.ids.length, total),
      trend: [...perBucket].map(([bucket, n]) => {
        const k = s.perBucket.get(bucket) ?? 0
        return { bucket, conversations: k, rate: rate(k, n) }
      }),
    }))
  const topics = [...byTopic]
    .map(([id, t]) => ({
      id,
      label: t.label,
      conversations: t.ids.length,
      signals: Object.fromEntries(
        GAP_SIGNALS.map((name) => {
          const k = t.signals.get(name)?.length ?? 0
          return [name, { conversations: k, rate: rate(k, t.ids.length) }]
        }),
      ),
    }))
    .sort((a, b) => b.conversations - a.conversations || (a.label < b.label ? -1 : 1))
  const needsAttention = [...byTopic]
    .map(([id, t]) => {
      const failed = t.signals.get('bot_failure') ?? []
      return {
        id,
        label: t.label,
        conversations: t.ids.length,
        botFailures: failed.length,
        botFailureRate: rate(failed.length, t.ids.length),
        score: Math.round(wilsonLower(failed.length, t.ids.length) * 10_000) / 10_000,
        examples: failed.slice(0, EXAMPLES),
      }
    })
    .filter((t) => t.botFailures > 0)
    .sort((a, b) => b.score - a.score || b.botFailures - a.botFailures || (a.label < b.label ? -1 : 1))
  return {
    conversations: total,
    signals,
    topics: topics.slice(0, limit),
    needsAttention: needsAttention.slice(0, limit),
    buckets: [...perBucket].map(([bucket, conversations]) => ({ bucket, conversations })),
  }
}
