import { BUILTIN_SIGNAL_NAMES } from '@cas/events'
import { chatbotSignals } from '@cas/settings'
import { previewOf } from '@cas/views'
import type pg from 'pg'
import type { Interval } from '../analytics/range.ts'
import { BUCKETS, type RollupScope } from './analytics.ts'
import { type ExampleConversation, readExampleConversations } from './example-conversations.ts'
import { signalsOn } from './signal-coverage.ts'
import { OTHER_TOPIC, OTHER_TOPIC_LABEL, TOPIC_EXCERPTS } from './topics.ts'

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
  /** On for the chatbot (for the organization: for one of its chatbots at least). */
  enabled: boolean
  conversations: number
  /** The conversations checked for it: the rate's denominator. */
  conversationsChecked: number
  rate: number
  trend: { bucket: string; conversations: number; conversationsChecked: number; rate: number }[]
}

export interface TopicSignalFigures {
  id: string
  label: string
  conversations: number
  /** Per knowledge-gap signal: the topic's conversations with it, those checked for it, and the rate. */
  signals: Record<string, { conversations: number; conversationsChecked: number; rate: number }>
}

export interface NeedsAttention {
  id: string
  label: string
  conversations: number
  botFailures: number
  /** The topic's conversations checked for bot_failure: the rate's and the score's denominator. */
  conversationsChecked: number
  botFailureRate: number
  /** The lower bound of the 95 % Wilson interval of the bot-failure rate: what the ranking sorts by. */
  score: number
  examples: string[]
  /** The same conversations, each with when it started and the end user's first message in the topic. */
  exampleConversations: Pick<ExampleConversation, 'id' | 'conversationId' | 'firstMessageAt' | 'excerpt'>[]
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

/** The custom signals' labels by name, as the scope's chatbots' settings give them now. */
async function customSignalLabels(
  client: pg.ClientBase,
  orgId: string,
  chatbotId: string | undefined,
): Promise<Map<string, string>> {
  const { rows } = await client.query<{ settings: Readonly<Record<string, unknown>> }>(
    'SELECT settings FROM rm_chatbots WHERE org_id = $1 AND ($2::uuid IS NULL OR id = $2)',
    [orgId, chatbotId ?? null],
  )
  return new Map(
    rows.flatMap((r) => chatbotSignals(r.settings).custom.map((c) => [c.name, c.label] as const)),
  )
}

/**
 * Signals over the conversations whose last message is in range (as the conversation list's from/to):
 * per signal its conversations, rate and trend (per bucket of the last message's local time); per topic
 * the rates of the knowledge-gap signals; and the topics ranked by how often the bot fails their users.
 * Counted in SQL from the conversations and their signals (not from rollups), in one pass over the
 * range's conversations of the scope: what crosses to Node is a row per bucket, per signal and bucket,
 * and per topic, whatever the conversations (bench/FINDINGS.md, "The signals read").
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
  const coverage = await signalsOn(client, scope.orgId, scope.chatbotId)
  const settingsLabels = await customSignalLabels(client, scope.orgId, scope.chatbotId)
  const { rows } = await client.query<SignalsRow>(signalsSql(key.replaceAll('$TZ', tzParam), params.length), [
    ...params,
    JSON.stringify(coverage.on.map((o) => ({ c: o.chatbotId, s: o.signal, r: o.checked }))),
    coverage.configured,
  ])
  const onNames = new Set(coverage.on.map((o) => o.signal))
  const bucketOf = new Map(buckets.map((b) => [b.key.getTime(), b.bucket.toISOString()]))
  const perBucket = new Map<string, number>(buckets.map((b) => [b.bucket.toISOString(), 0]))
  interface SignalEntry {
    label: string | null
    conversations: number
    perBucket: Map<string, number>
    checkedPerBucket: Map<string, number>
  }
  const bySignal = new Map<string, SignalEntry>()
  const signalOf = (name: string) => {
    let entry = bySignal.get(name)
    if (!entry) {
      entry = { label: null, conversations: 0, perBucket: new Map(), checkedPerBucket: new Map() }
      bySignal.set(name, entry)
    }
    return entry
  }
  for (const name of [...BUILTIN_SIGNAL_NAMES, ...onNames]) signalOf(name)
  let total = 0
  // Conversations of chatbots without a read-model row yet: checked for every signal, as before settings.
  const unconfiguredPerBucket = new Map<string, number>()
  const topicRows: SignalsRow[] = []
  // Per topic, per knowledge-gap signal: the topic's conversations checked for it.
  const topicChecked = new Map<string, Map<string, number>>()
  for (const r of rows) {
    if (r.kind !== 'signal') continue
    const entry = signalOf(r.name!)
    // A custom signal's label is its most recent conversation's; a built-in one has none.
    if (!(BUILTIN_SIGNAL_NAMES as readonly string[]).includes(r.name!)) entry.label = r.label
    entry.conversations = r.n
  }
  for (const r of rows) {
    if (r.kind === 'key') {
      total += r.n
      const bucket = bucketOf.get(r.key!.getTime())
      if (bucket !== undefined) perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + r.n)
    } else if (r.kind === 'signal key') {
      const bucket = bucketOf.get(r.key!.getTime())
      const entry = signalOf(r.name!)
      if (bucket !== undefined) entry.perBucket.set(bucket, (entry.perBucket.get(bucket) ?? 0) + r.n)
    } else if (r.kind === 'checked key' || r.kind === 'unconfigured key') {
      const bucket = bucketOf.get(r.key!.getTime())
      if (bucket === undefined) continue
      const counts = r.kind === 'checked key' ? signalOf(r.name!).checkedPerBucket : unconfiguredPerBucket
      counts.set(bucket, (counts.get(bucket) ?? 0) + r.n)
    } else if (r.kind === 'topic') topicRows.push(r)
    else if (r.kind === 'topic checked') {
      let counts = topicChecked.get(r.name!)
      if (!counts) {
        counts = new Map()
        topicChecked.set(r.name!, counts)
      }
      counts.set(r.label!, r.n)
    }
  }
  const unconfigured = [...unconfiguredPerBucket.values()].reduce((a, b) => a + b, 0)
  // Topics an owner or admin hid are left out of the per-topic figures, as from the topics report; their
  // conversations still count in the signals' totals (they keep their topics and their signals).
  const { rows: hiddenRows } = await client.query<{ id: string }>(
    `SELECT id FROM rm_topics WHERE org_id = $1 AND hidden AND ($2::uuid IS NULL OR chatbot_id = $2)`,
    [scope.orgId, scope.chatbotId ?? null],
  )
  const hidden = new Set(hiddenRows.map((r) => r.id))
  const shown = topicRows.filter((r) => !hidden.has(r.name!))
  const labels = await topicLabels(
    client,
    scope.orgId,
    shown.map((r) => r.name!),
  )
  // In the order each topic is first met, most recent conversation first: ties of the ranking below
  // (two topics of one label and as many conversations) keep that order.
  const byTopic = shown
    .sort((a, b) => recentFirst(a.first_at!, a.first_id!, b.first_at!, b.first_id!))
    .map((r) => ({
      id: r.name!,
      label: labels.get(r.name!) ?? r.name!,
      conversations: r.n,
      gaps: r.gaps!,
      checked: GAP_SIGNALS.map((name) => topicChecked.get(r.name!)?.get(name) ?? 0),
      examples: r.examples!,
    }))
  const signals = [...bySignal]
    .sort(([a], [b]) => signalOrder(a, b))
    .map(([name, s]) => {
      const trend = [...perBucket.keys()].map((bucket) => {
        const k = s.perBucket.get(bucket) ?? 0
        const checked = (s.checkedPerBucket.get(bucket) ?? 0) + (unconfiguredPerBucket.get(bucket) ?? 0)
        return { bucket, conversations: k, conversationsChecked: checked, rate: rate(k, checked) }
      })
      const checked = trend.reduce((sum, p) => sum + p.conversationsChecked, 0)
      return {
        name,
        // A custom signal no conversation in range has yet is named as the settings name it.
        label: s.label ?? settingsLabels.get(name) ?? null,
        enabled: onNames.has(name) || unconfigured > 0 || coverage.configured.length === 0,
        conversations: s.conversations,
        conversationsChecked: checked,
        rate: rate(s.conversations, checked),
        trend,
      }
    })
  const topics = byTopic
    .map((t) => ({
      id: t.id,
      label: t.label,
      conversations: t.conversations,
      signals: Object.fromEntries(
        GAP_SIGNALS.map((name, i) => {
          const k = t.gaps[i] ?? 0
          const checked = t.checked[i] ?? 0
          return [name, { conversations: k, conversationsChecked: checked, rate: rate(k, checked) }]
        }),
      ),
    }))
    .sort((a, b) => b.conversations - a.conversations || (a.label < b.label ? -1 : 1))
  const failures = GAP_SIGNALS.indexOf('bot_failure')
  const needsAttention = byTopic
    .map((t) => {
      const failed = t.gaps[failures] ?? 0
      const checked = t.checked[failures] ?? 0
      return {
        id: t.id,
        label: t.label,
        conversations: t.conversations,
        botFailures: failed,
        conversationsChecked: checked,
        botFailureRate: rate(failed, checked),
        score: Math.round(wilsonLower(failed, checked) * 10_000) / 10_000,
        examples: t.examples,
      }
    })
    .filter((t) => t.botFailures > 0)
    .sort((a, b) => b.score - a.score || b.botFailures - a.botFailures || (a.label < b.label ? -1 : 1))
    .slice(0, limit)
  // The shown topics' examples in one statement, not one per topic.
  const exampleOf = await readExampleConversations(
    client,
    scope.orgId,
    needsAttention.flatMap((t) => t.examples),
  )
  const inTopic = await readMessagesInTopic(client, scope.orgId, needsAttention)
  return {
    conversations: total,
    signals,
    topics: topics.slice(0, limit),
    needsAttention: needsAttention.map((t) => ({
      ...t,
      exampleConversations: t.examples.flatMap((id) => {
        const e = exampleOf.get(id)
        // The end user's first message in this topic, as the Topics page shows it, rather than the
        // message a bot failure fired on: that one is the bot's ("I'm not sure I understand"), alike in
        // every example, where the user's words say what they came for. Not the conversation's first
        // words either: for its second topic those name another request (trial1, issues 31/32). The
        // preview stands in when no message carries the topic (a conversation placed as a whole).
        const excerpt = inTopic.get(`${t.id}|${id}`) ?? e?.excerpt ?? null
        return e ? [{ id, conversationId: e.conversationId, firstMessageAt: e.firstMessageAt, excerpt }] : []
      }),
    })),
    buckets: [...perBucket].map(([bucket, conversations]) => ({ bucket, conversations })),
  }
}

/**
 * Each shown topic's examples' first end-user message in that topic (or in a topic merged into it), one
 * line cut as a preview is (previewOf), keyed `${topic}|${conversation}`; in one statement.
 */
async function readMessagesInTopic(
  client: pg.ClientBase,
  orgId: string,
  topics: readonly { id: string; examples: readonly string[] }[],
): Promise<Map<string, string>> {
  const pairs = topics.flatMap((t) => t.examples.map((conversation) => ({ topic: t.id, conversation })))
  const out = new Map<string, string>()
  if (pairs.length === 0) return out
  const { rows } = await client.query<{ topic: string; conversation_id: string; content: string }>(
    TOPIC_EXCERPTS,
    [orgId, pairs.map((p) => p.topic), pairs.map((p) => p.conversation)],
  )
  for (const r of rows) {
    const line = previewOf(r.content)
    if (line !== undefined) out.set(`${r.topic}|${r.conversation_id}`, line)
  }
  return out
}

/** Most recent first, then by id descending (the order a conversation list shows them in). */
function recentFirst(aAt: Date, aId: string, bAt: Date, bId: string): number {
  return bAt.getTime() - aAt.getTime() || (aId < bId ? 1 : aId > bId ? -1 : 0)
}

/** The current label of each canonical topic id with an rm_topics row; the others are their own label. */
async function topicLabels(
  client: pg.ClientBase,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const labels = new Map<string, string>(ids.map((id) => [id, id === OTHER_TOPIC ? OTHER_TOPIC_LABEL : id]))
  if (ids.length === 0) return labels
  const { rows } = await client.query<{ id: string; label: string }>(
    `SELECT id, label FROM rm_topics WHERE org_id = $1 AND id = ANY($2::text[]) AND canonical_id = id`,
    [orgId, [...ids]],
  )
  for (const r of rows) labels.set(r.id, r.label)
  return labels
}

interface SignalsRow {
  kind: 'key' | 'signal' | 'signal key' | 'checked key' | 'unconfigured key' | 'topic' | 'topic checked'
  /** The signal's name or the topic's canonical id. */
  name: string | null
  key: Date | null
  n: number
  /** A custom signal's label; for 'topic checked', the knowledge-gap signal. */
  label: string | null
  first_at: Date | null
  first_id: string | null
  /** A topic's conversations with each of GAP_SIGNALS, in that order. */
  gaps: number[] | null
  /** A topic's most recent conversations with a bot failure. */
  examples: string[] | null
}

/**
 * The statement of readSignals ($1 org, $2 from, $3 to, $4 chatbot or null, then the zone if the bucket
 * key uses it, then the signals on and the chatbots with a read-model row), one row per bucket key, per
 * signal, per signal and bucket key, per canonical topic, and per topic and knowledge-gap signal.
 * `conv` is the range's conversations (`base`, one scan) with their signals as two arrays: the signals
 * of those conversations are read in one scan too (`conversation_id = ANY` of base's ids, an InitPlan run
 * once), aggregated per conversation, and met with base in a FULL JOIN, which Postgres runs only as a
 * hash or merge join: never a scan per conversation, whatever the statistics (every aggregated row's
 * conversation is in base, so the FULL JOIN adds none); so are the times their signals were decided
 * (rm_signals_decided, by its primary key). A lookup per conversation (a LATERAL aggregate,
 * before) took the primary key on good statistics; on none, or stale ones for a new organization,
 * row-level security's org_id condition made rm_conversation_signals_signal (org_id, signal,
 * conversation_id) its index: several index searches a conversation where Postgres skip-scans (18), the
 * organization's signals a conversation where it cannot (bench/FINDINGS.md, "Reads of a new organization
 * on stale statistics"). Merged topics are one JSON object read once (as rankTopics'), the topics
 * unnested per conversation. The checked counts join the conversations (per bucket; per topic, for the
 * knowledge-gap signals) with the signals on for their chatbot (`signal_on`, one row per chatbot and
 * signal, each with the times its conversations' signals were decided at that checked them, a
 * tstzmultirange; a conversation never decided is checked for none but those it carries);
 * nothing else joins two sets, so every plan is linear in the conversations.
 * The order of "first" is a conversation list's, at the millisecond a JS Date keeps.
 */
function signalsSql(key: string, before: number): string {
  const on = `$${before + 1}::jsonb`
  const configured = `$${before + 2}::uuid[]`
  const recent = `date_trunc('milliseconds', last_message_at) DESC, id DESC`
  const gapList = GAP_SIGNALS.map((s) => `'${s}'`).join(', ')
  const gaps = GAP_SIGNALS.map((s) => `count(*) FILTER (WHERE '${s}' = ANY(signals))`).join(', ')
  return `WITH base AS MATERIALIZED (
       SELECT id, chatbot_id, topics, last_message_at, date_trunc('hour', last_message_at) AS hour
         FROM rm_conversations
        WHERE org_id = $1 AND last_message_at >= $2 AND last_message_at < $3
          AND ($4::uuid IS NULL OR chatbot_id = $4)
          AND external_id IS NOT NULL
     ),
     conv AS MATERIALIZED (
       SELECT c.id, c.chatbot_id, c.topics, c.last_message_at, ${key} AS key,
              coalesce(s.signals, '{}') AS signals, coalesce(s.labels, '{}') AS labels,
              c.chatbot_id = ANY (${configured}) AS configured, d.decided_at
         FROM base c
         FULL JOIN (
           SELECT conversation_id, array_agg(signal) AS signals, array_agg(label) AS labels
             FROM rm_conversation_signals
            WHERE org_id = $1 AND conversation_id = ANY (ARRAY(SELECT id FROM base))
            GROUP BY conversation_id) s ON s.conversation_id = c.id
         FULL JOIN (
           SELECT conversation_id, decided_at FROM rm_signals_decided
            WHERE org_id = $1 AND conversation_id = ANY (ARRAY(SELECT id FROM base))) d ON d.conversation_id = c.id
     ),
     signal_on AS MATERIALIZED (
       SELECT (o ->> 'c')::uuid AS chatbot_id, o ->> 's' AS signal, (o ->> 'r')::tstzmultirange AS checked
         FROM jsonb_array_elements(${on}) AS o
     ),
     counted AS MATERIALIZED (
       SELECT c.id, c.key, c.last_message_at, s.signal, s.label
         FROM conv c CROSS JOIN LATERAL unnest(c.signals, c.labels) AS s(signal, label)
        WHERE NOT c.configured
           OR EXISTS (SELECT FROM signal_on o WHERE o.chatbot_id = c.chatbot_id AND o.signal = s.signal)
     ),
     merged AS MATERIALIZED (
       SELECT coalesce(jsonb_object_agg(t.chatbot_id::text || ' ' || t.id, t.canonical_id), '{}') AS ids
         FROM rm_topics t
        WHERE t.org_id = $1 AND t.canonical_id <> t.id
          AND EXISTS (SELECT FROM rm_topics c WHERE c.chatbot_id = t.chatbot_id AND c.id = t.canonical_id)
     ),
     signal_keys AS MATERIALIZED (
       SELECT coalesce(jsonb_object_agg(chatbot_id::text || ' ' || signal, true), '{}') AS on_keys FROM signal_on
     ),
     placed AS (
       SELECT c.id, c.chatbot_id, c.configured, c.last_message_at, c.decided_at, p.topic,
              ARRAY(SELECT x FROM unnest(c.signals) AS x
                     WHERE NOT c.configured OR sk.on_keys ? (c.chatbot_id::text || ' ' || x)) AS signals
         FROM conv c CROSS JOIN merged m CROSS JOIN signal_keys sk
         CROSS JOIN LATERAL (
           SELECT DISTINCT coalesce(m.ids ->> (c.chatbot_id::text || ' ' || k.key), k.key) COLLATE "C" AS topic
             FROM unnest(c.topics) AS k(key)) p
     ),
     topic_checked AS (
       SELECT p.topic, o.signal
         FROM placed p JOIN signal_on o ON o.chatbot_id = p.chatbot_id
        WHERE o.signal IN (${gapList}) AND (o.checked @> p.decided_at OR o.signal = ANY (p.signals))
       UNION ALL
       SELECT p.topic, g.signal FROM placed p CROSS JOIN unnest(ARRAY[${gapList}]) AS g(signal)
        WHERE NOT p.configured
     )
     SELECT 'key' AS kind, NULL::text AS name, key, count(*)::float8 AS n, NULL::text AS label,
            NULL::timestamptz AS first_at, NULL::uuid AS first_id, NULL::float8[] AS gaps, NULL::uuid[] AS examples
       FROM conv GROUP BY key
     UNION ALL
     SELECT 'signal key', signal, key, count(*)::float8, NULL, NULL, NULL, NULL, NULL
       FROM counted GROUP BY signal, key
     UNION ALL
     SELECT 'signal', signal, NULL, count(*)::float8,
            (array_agg(label ORDER BY ${recent}))[1], NULL, NULL, NULL, NULL
       FROM counted GROUP BY signal
     UNION ALL
     SELECT 'checked key', o.signal, c.key, count(*)::float8, NULL, NULL, NULL, NULL, NULL
       FROM conv c JOIN signal_on o ON o.chatbot_id = c.chatbot_id
      WHERE o.checked @> c.decided_at OR o.signal = ANY (c.signals)
      GROUP BY o.signal, c.key
     UNION ALL
     SELECT 'unconfigured key', NULL, key, count(*)::float8, NULL, NULL, NULL, NULL, NULL
       FROM conv WHERE NOT configured GROUP BY key
     UNION ALL
     SELECT 'topic', topic, NULL, count(*)::float8, NULL, max(last_message_at),
            (array_agg(id ORDER BY ${recent}))[1], ARRAY[${gaps}]::float8[],
            coalesce((array_agg(id ORDER BY ${recent}) FILTER (WHERE 'bot_failure' = ANY(signals)))[1:${EXAMPLES}], '{}')
       FROM placed GROUP BY topic
     UNION ALL
     SELECT 'topic checked', topic, NULL, count(*)::float8, signal, NULL, NULL, NULL, NULL
       FROM topic_checked GROUP BY topic, signal`
}
