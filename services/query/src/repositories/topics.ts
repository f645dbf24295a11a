import { OTHER_TOPIC_ID } from '@cas/events'
import type pg from 'pg'
import { DAY_MS, type Interval } from '../analytics/range.ts'
import { BUCKETS, type RollupScope } from './analytics.ts'
import { readExampleConversations } from './example-conversations.ts'

export const OTHER_TOPIC = OTHER_TOPIC_ID
/** How "other" is named wherever a label is shown: the overview, the Topics page, a conversation's topics. */
export const OTHER_TOPIC_LABEL = 'Other'

/**
 * Topics as the read models hold them: results name a topic by id (rm_topics gives its label, and the
 * topic a merged one now counts in: canonical_id); "other" is the long tail; a key phrase of the lexical
 * or LLM analyzer is its own id and label, with no rm_topics row. Every figure of a topic is its
 * canonical topic's: merged topics count in the one they merged into.
 */

/**
 * The topic rows of a range, per chatbot and topic id: messages (analyzed end-user messages) and the sum
 * of their sentiment. Whole UTC days come from the daily counts, the hours of a partial first or last day
 * from the hourly ones. Parameters after the caller's `base` ones ($1 org, $2 from, $3 to): the day bounds.
 */
export function rangeTopicRowsSql(scope: RollupScope, base: number, chatbotParam: string | null) {
  const from = scope.from.getTime()
  const to = scope.to.getTime()
  let firstDay = Math.ceil(from / DAY_MS) * DAY_MS
  let endDay = Math.floor(to / DAY_MS) * DAY_MS
  if (firstDay >= endDay) firstDay = endDay = to
  const byChatbot = chatbotParam === null ? '' : `AND chatbot_id = ${chatbotParam}`
  const sql = `SELECT chatbot_id, topic, messages, sentiment_sum FROM rm_daily_topics
                WHERE org_id = $1 AND day >= $${base + 1}::timestamptz AND day < $${base + 2}::timestamptz ${byChatbot}
               UNION ALL
               SELECT chatbot_id, topic, messages, sentiment_sum FROM rm_hourly_topics
                WHERE org_id = $1 ${byChatbot}
                  AND (hour >= $2::timestamptz AND hour < $${base + 1}::timestamptz
                       OR hour >= $${base + 2}::timestamptz AND hour < $3::timestamptz)`
  return { sql, params: [new Date(firstDay).toISOString(), new Date(endDay).toISOString()] }
}

export interface TopicRef {
  readonly id: string
  readonly label: string
}

/**
 * The canonical topic and current label of each of the given topic ids (a merged topic's: the topic it
 * merged into). Ids without a row (key phrases, "other") are their own label.
 */
export async function resolveTopics(
  client: pg.ClientBase,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, TopicRef>> {
  const resolved = new Map<string, TopicRef>(ids.map((id) => [id, ownRef(id)]))
  if (ids.length === 0) return resolved
  const { rows } = await client.query<{ id: string; canonical: string; label: string }>(
    `SELECT t.id, c.id AS canonical, c.label FROM rm_topics t
       JOIN rm_topics c ON c.chatbot_id = t.chatbot_id AND c.id = t.canonical_id
      WHERE t.org_id = $1 AND t.id = ANY($2::text[])`,
    [orgId, [...new Set(ids)]],
  )
  for (const r of rows) resolved.set(r.id, { id: r.canonical, label: r.label })
  return resolved
}

/** A topic id without an rm_topics row: a key phrase is its own label; "other" is called Other. */
const ownRef = (id: string): TopicRef => ({ id, label: id === OTHER_TOPIC ? OTHER_TOPIC_LABEL : id })

/** A conversation's topics as the API shows them: canonical, labelled as now, each once, in order. */
export function conversationTopics(ids: readonly string[], resolved: Map<string, TopicRef>): TopicRef[] {
  const seen = new Set<string>()
  const out: TopicRef[] = []
  for (const id of ids) {
    const ref = resolved.get(id) ?? ownRef(id)
    if (seen.has(ref.id)) continue
    seen.add(ref.id)
    out.push(ref)
  }
  return out
}

/**
 * The topic ids a `topic=` filter stands for: "other" (any case) the long tail alone; else the value itself (a topic id, a key phrase), every
 * topic whose label contains it in any case ("bill" finds "Billing" and "Bills and refunds"), every key
 * phrase of the lexical or LLM analyzer containing it (they have no rm_topics row: found among the topic
 * ids of the daily counts), "other" for part of its label Other, and every topic counting in the same
 * canonical topic as one of those.
 */
export async function topicFilterIds(
  client: pg.ClientBase,
  orgId: string,
  chatbotId: string | undefined,
  topic: string,
): Promise<string[]> {
  // "other" is the long tail's id (the Topics page, Needs attention and the per-topic signals link to it):
  // it stands for that topic alone, not also for every label containing it ("birth mother", "another").
  if (topic.toLowerCase() === OTHER_TOPIC) return [OTHER_TOPIC]
  const { rows } = await client.query<{ id: string }>(
    `SELECT t.id FROM rm_topics t
      WHERE t.org_id = $1 AND ($3::uuid IS NULL OR t.chatbot_id = $3)
        AND (t.chatbot_id, t.canonical_id) IN (
          SELECT chatbot_id, canonical_id FROM rm_topics
           WHERE org_id = $1 AND ($3::uuid IS NULL OR chatbot_id = $3) AND (id = $2 OR label ILIKE $4))
     UNION
     SELECT d.topic FROM rm_daily_topics d
      WHERE d.org_id = $1 AND ($3::uuid IS NULL OR d.chatbot_id = $3) AND d.topic ILIKE $4
        AND NOT EXISTS (SELECT FROM rm_topics t WHERE t.chatbot_id = d.chatbot_id AND t.id = d.topic)`,
    [orgId, topic, chatbotId ?? null, `%${likeEscaped(topic)}%`],
  )
  // "other" is labelled Other (ownRef): part of that label finds it too.
  const other = OTHER_TOPIC_LABEL.toLowerCase().includes(topic.toLowerCase()) ? [OTHER_TOPIC] : []
  return [...new Set([topic, ...other, ...rows.map((r) => r.id)])]
}

/**
 * Whether the chatbot's (or the organization's) topics are settling: requests placed since the last
 * re-clustering, when the latest ran, and whether the last run failed and is retried (rm_topic_reclustering,
 * projected from the analysis service's analysis.topics-settling, -reclustered and -recluster-failed).
 */
export async function readReclustering(
  client: pg.ClientBase,
  orgId: string,
  chatbotId: string | undefined,
): Promise<{
  settling: boolean
  lastReclusteredAt: string | null
  retrying: { attempts: number; nextAttemptAt: string } | null
}> {
  const { rows } = await client.query<{
    settling: boolean
    last: Date | null
    attempts: number | null
    next: Date | null
  }>(
    `SELECT coalesce(bool_or(settling), false) AS settling, max(last_reclustered_at) AS last,
            max(failed_attempts) FILTER (WHERE failed_attempts > 0) AS attempts,
            min(next_attempt_at) FILTER (WHERE failed_attempts > 0) AS next
       FROM rm_topic_reclustering WHERE org_id = $1 AND ($2::uuid IS NULL OR chatbot_id = $2)`,
    [orgId, chatbotId ?? null],
  )
  const row = rows[0]!
  return {
    settling: row.settling,
    lastReclusteredAt: row.last?.toISOString() ?? null,
    retrying:
      row.attempts !== null && row.next !== null
        ? { attempts: row.attempts, nextAttemptAt: row.next.toISOString() }
        : null,
  }
}

/** A value matched literally inside a LIKE pattern (the default escape character is the backslash). */
export function likeEscaped(value: string): string {
  return value.replace(/[\\%_]/g, '\\$&')
}

export interface TopicSummary {
  id: string
  chatbotId: string
  label: string
  keywords: string[]
  configured: boolean
  /** The theme the topic is grouped in (themes.ts of the analysis service); null when none. */
  theme: TopicRef | null
  conversations: number
  messages: number
  share: number
  averageSentiment: number | null
  trend: { bucket: string; messages: number }[]
  examples: {
    id: string
    conversationId: string
    lastMessageAt: string
    sentiment: 'positive' | 'neutral' | 'negative' | null
    excerpt: string | null
  }[]
}

export interface ThemeSummary {
  id: string
  chatbotId: string
  label: string
  /** Conversations with a message in range in any of its topics (each once). */
  conversations: number
  /** Its topics' end-user messages in range. */
  messages: number
  share: number
  /** Its topics with conversations in range, as ranked. */
  topicIds: string[]
}

export interface TopicsReport {
  /** Conversations with a message in range that have a topic ("other" included). */
  conversationsWithTopics: number
  topics: TopicSummary[]
  themes: ThemeSummary[]
  other: Omit<
    TopicSummary,
    'id' | 'chatbotId' | 'label' | 'keywords' | 'configured' | 'examples' | 'theme'
  > | null
  /** The scope's topics an owner or admin hid: in neither `topics` nor `themes`. */
  hiddenTopics: { id: string; chatbotId: string; label: string }[]
  /**
   * The scope's topics a lead keeps (renamed, created from examples or merged into: pinned), neither hidden
   * nor merged away, with no conversation in range: listed so that a correction can still be found.
   */
  quietTopics: { id: string; chatbotId: string; label: string }[]
}

const EXAMPLES = 3
const EXCERPT_CHARS = 200

type Example = { id: string; conversationId: string; lastMessageAt: string; sentiment: string | null }

/** A topic as ranked: its conversations with a message in range first (rankTopics). */
export interface RankedTopic {
  id: string
  chatbotId: string
  label: string
  keywords: string[]
  configured: boolean
  conversations: number
  messages: number
  sentimentSum: number
  /** The most recent conversations, when asked for (withExamples). */
  examples: Example[]
}

export interface TopicRanking {
  /** Conversations with a message in range that have a topic ("other" included). */
  conversationsWithTopics: number
  /** Every topic but "other", most conversations first, then most messages, then by label and id. */
  ranked: RankedTopic[]
  /** "other", the long tail: the conversations in no topic close enough. */
  other: { conversations: number; messages: number; sentimentSum: number } | null
  /** The themes with conversations in range (withThemes; else none), as readThemes orders them. */
  themes: ThemeCount[]
}

/** A theme (rm_themes) and its conversations with a message in range (each once). */
interface ThemeCount {
  id: string
  chatbotId: string
  label: string
  topicIds: string[]
  conversations: number
}

/**
 * The `active` CTE: the scope's conversations with a message in range ($1 org, $2 from, $3 to) that have a
 * topic. Their ids come from the activity rows: a conversation active in range has exactly one hour in
 * range whose next_hour is at or after `to`, or null (the chain rm_hourly_activity keeps:
 * projections/reach.ts), so each is found once, without a DISTINCT or a semi-join. The conversations are
 * then read in one scan, by `id = ANY` of those ids (an InitPlan, run once): whichever index the planner
 * takes, rm_conversations is read once, never once per conversation. A lookup per conversation (a LATERAL
 * subquery behind OFFSET 0, before) was right only on good statistics: on stale ones (a new organization's
 * first burst, estimated at one row) the planner ran each lookup on an index led by org_id
 * (rm_conversations_end_user), through the query's org condition or row-level security's, and read all
 * the organization's rows for each of its conversations; a join of the two sides instead, on none, nested
 * the conversations over the whole range's activity (bench/FINDINGS.md, "The Topics page's reads" and
 * "Reads of a new organization on stale statistics").
 */
const activeConversations = (byChatbot: string, byActivityChatbot: string) => `active AS (
       SELECT c.id, c.chatbot_id, c.last_message_at, c.topics
         FROM rm_conversations c
        WHERE c.id = ANY (ARRAY(
                SELECT h.conversation_id FROM rm_hourly_activity h
                 WHERE h.org_id = $1 ${byActivityChatbot} AND h.hour >= $2::timestamptz AND h.hour < $3::timestamptz
                   AND (h.next_hour IS NULL OR h.next_hour >= $3::timestamptz)))
          AND c.org_id = $1 ${byChatbot}
          AND c.external_id IS NOT NULL AND cardinality(c.topics) > 0
          AND c.last_message_at >= $2::timestamptz AND c.first_message_at < $3::timestamptz
     )`

/**
 * The `merged` CTE: a topic id counts in its rm_topics row's canonical_id; only merged topics differ from
 * their id, so they alone are looked up, in one small JSON object read once (`chatbot topic` → canonical
 * id): a lookup per row that costs the same whatever the planner believes of the sizes, where the join
 * with rm_topics it replaces, planned on no statistics, compared every row's topic with every topic.
 */
const mergedTopics = `merged AS MATERIALIZED (
       SELECT coalesce(jsonb_object_agg(chatbot_id::text || ' ' || id, canonical_id), '{}') AS ids
         FROM rm_topics WHERE org_id = $1 AND canonical_id <> id
     )`

/** `AND` the topic (a theme's topic id: a canonical one) is not hidden. */
const notHidden = (chatbot: string, topic: string) =>
  `AND NOT EXISTS (SELECT FROM rm_topics h WHERE h.chatbot_id = ${chatbot} AND h.id = ${topic} AND h.hidden)`

/** A topic id's canonical one, given the `merged` CTE as `m` and the row's chatbot and topic id. */
const canonical = (chatbot: string, topic: string) =>
  `coalesce(m.ids ->> (${chatbot}::text || ' ' || ${topic}), ${topic})`

/** The `merged` and `placed` CTEs: each active conversation once per canonical topic it is in. */
const placedConversations = `${mergedTopics}, placed AS (
       SELECT DISTINCT a.id, a.chatbot_id, a.last_message_at, ${canonical('a.chatbot_id', 'k.key')} COLLATE "C" AS topic
         FROM active a CROSS JOIN merged m CROSS JOIN LATERAL unnest(a.topics) AS k(key)
     )`

/**
 * The `themed` CTE: each chatbot's topics' themes, as one JSON object read once (`chatbot topic` → theme
 * ids), for the same reason as `merged`. A hidden topic is in none: a theme's totals are those of the
 * topics it shows (its messages and topicIds leave hidden ones out too), as the theme= filter lists.
 */
const themedTopics = `themed AS MATERIALIZED (
       SELECT coalesce(jsonb_object_agg(key, ids), '{}') AS ids FROM (
         SELECT th.chatbot_id::text || ' ' || k.id AS key, jsonb_agg(th.id) AS ids
           FROM rm_themes th CROSS JOIN LATERAL unnest(th.topic_ids) AS k(id)
          WHERE th.org_id = $1 ${notHidden('th.chatbot_id', 'k.id')} GROUP BY 1) t
     )`

/**
 * The themes' conversations (a conversation in two of a theme's topics once), as one JSON array of
 * { id, chatbotId, label, topicIds, conversations }, most conversations first, then by chatbot and the
 * grouping's order. Given the `placed` and `themed` CTEs.
 */
const themeCounts = `(SELECT coalesce(jsonb_agg(jsonb_build_object('id', th.id, 'chatbotId', th.chatbot_id,
                                  'label', th.label, 'topicIds', th.topic_ids, 'conversations', n.conversations)
                                ORDER BY n.conversations DESC, th.chatbot_id, th.position), '[]')
          FROM (SELECT p.chatbot_id, x.theme COLLATE "C" AS theme, count(DISTINCT p.id)::float8 AS conversations
                  FROM placed p CROSS JOIN themed
                  CROSS JOIN LATERAL jsonb_array_elements_text(themed.ids -> (p.chatbot_id::text || ' ' || p.topic)) AS x(theme)
                 GROUP BY 1, 2) n
          JOIN rm_themes th ON th.chatbot_id = n.chatbot_id AND th.id = n.theme AND th.org_id = $1)`

/**
 * The topics of the scope's conversations with a message in range, ranked: each canonical topic's
 * conversations (those whose topics include it), its analyzed end-user messages in range and the sum of
 * their sentiment, "other" apart. The one ranking of the Topics page (readTopics) and of the overview's
 * top topics (readOverview), so that the two always agree (issue 30: the overview counted messages).
 */
export async function rankTopics(
  client: pg.ClientBase,
  scope: RollupScope,
  options: { withExamples?: boolean; withThemes?: boolean } = {},
): Promise<TopicRanking> {
  const params: unknown[] = [scope.orgId, scope.from.toISOString(), scope.to.toISOString()]
  let chatbot: string | null = null
  if (scope.chatbotId !== undefined) {
    params.push(scope.chatbotId)
    chatbot = `$${params.length}::uuid`
  }
  const byChatbot = chatbot === null ? '' : `AND c.chatbot_id = ${chatbot}`
  const byActivityChatbot = chatbot === null ? '' : `AND h.chatbot_id = ${chatbot}`
  // The examples' ids only: their rows are read once the ranking is known (a JSON object built for every
  // conversation of every topic, to keep three, was a third of this statement's time at 50,000).
  const examples = options.withExamples
    ? `(array_agg(id ORDER BY last_message_at DESC, id DESC))[1:${EXAMPLES}]`
    : `'{}'::uuid[]`
  // Conversations with a message in range, and the canonical topics they are in (and their themes).
  const { rows: perTopic } = await client.query<{
    topic: string
    chatbot_id: string
    conversations: number
    examples: string[]
    themes?: ThemeCount[]
  }>(
    `WITH ${activeConversations(byChatbot, byActivityChatbot)}, ${placedConversations}
          ${options.withThemes ? `, ${themedTopics}` : ''}
     SELECT topic, min(chatbot_id::text) AS chatbot_id, count(*)::float8 AS conversations,
            ${examples} AS examples,
            (SELECT count(*)::float8 FROM active) AS with_topics
            ${options.withThemes ? `, ${themeCounts} AS themes` : ''}
       FROM placed GROUP BY topic`,
    params,
  )
  const conversationsWithTopics = (perTopic[0] as { with_topics?: number } | undefined)?.with_topics ?? 0
  const rowsSql = rangeTopicRowsSql(scope, params.length, chatbot)
  const { rows: sums } = await client.query<{ topic: string; messages: number; sentiment_sum: number }>(
    `WITH ${mergedTopics}
     SELECT ${canonical('r.chatbot_id', 'r.topic')} AS topic, sum(r.messages)::float8 AS messages,
            sum(r.sentiment_sum)::float8 AS sentiment_sum
       FROM (${rowsSql.sql}) r CROSS JOIN merged m
      GROUP BY 1`,
    [...params, ...rowsSql.params],
  )
  const sumsOf = new Map(sums.map((s) => [s.topic, s]))
  const { rows: described } = await client.query<{
    id: string
    label: string
    keywords: string[]
    configured: boolean
    hidden: boolean
  }>(
    `SELECT id, label, keywords, configured, hidden FROM rm_topics WHERE org_id = $1 AND id = ANY($2::text[])`,
    [scope.orgId, perTopic.map((t) => t.topic)],
  )
  const descriptionOf = new Map(described.map((d) => [d.id, d]))
  const exampleOf = await readExampleConversations(
    client,
    scope.orgId,
    perTopic.flatMap((t) => t.examples),
  )
  const figures = (topic: string) => ({
    messages: sumsOf.get(topic)?.messages ?? 0,
    sentimentSum: sumsOf.get(topic)?.sentiment_sum ?? 0,
  })
  // A topic an owner or admin hid is left out (its conversations keep it, and count in the shares).
  const ranked = perTopic
    .filter((t) => t.topic !== OTHER_TOPIC && !descriptionOf.get(t.topic)?.hidden)
    .map((t) => {
      const d = descriptionOf.get(t.topic)
      return {
        id: t.topic,
        chatbotId: t.chatbot_id,
        label: d?.label ?? t.topic,
        keywords: d?.keywords ?? [],
        configured: d?.configured ?? false,
        conversations: t.conversations,
        ...figures(t.topic),
        examples: t.examples.flatMap((id) => {
          const e = exampleOf.get(id)
          return e
            ? [
                {
                  id,
                  conversationId: e.conversationId,
                  lastMessageAt: e.lastMessageAt,
                  sentiment: e.sentiment,
                },
              ]
            : []
        }),
      }
    })
    .sort(
      (a, b) =>
        b.conversations - a.conversations ||
        b.messages - a.messages ||
        (a.label < b.label ? -1 : a.label > b.label ? 1 : a.id < b.id ? -1 : 1),
    )
  const otherRow = perTopic.find((t) => t.topic === OTHER_TOPIC)
  return {
    conversationsWithTopics,
    ranked,
    other: otherRow ? { conversations: otherRow.conversations, ...figures(OTHER_TOPIC) } : null,
    themes: perTopic[0]?.themes ?? [],
  }
}

/**
 * The topics of the scope's conversations with a message in range, most conversations first (rankTopics):
 * each canonical topic's conversations, messages, share of the conversations with a topic, the end
 * users' mean sentiment, messages per bucket, and the most recent conversations as examples with the
 * first end-user message of theirs in the topic. "other" apart.
 */
export async function readTopics(
  client: pg.ClientBase,
  scope: RollupScope,
  interval: Interval,
  tz: string,
  limit: number,
): Promise<TopicsReport> {
  const {
    conversationsWithTopics,
    ranked: all,
    other,
    themes: themeCounts,
  } = await rankTopics(client, scope, { withExamples: true, withThemes: true })
  const figures = (f: { conversations: number; messages: number; sentimentSum: number }) => ({
    conversations: f.conversations,
    messages: f.messages,
    share:
      conversationsWithTopics === 0
        ? 0
        : Math.round((f.conversations / conversationsWithTopics) * 10_000) / 10_000,
    averageSentiment: f.messages === 0 ? null : Math.round((f.sentimentSum / f.messages) * 10_000) / 10_000,
  })
  const ranked = all.slice(0, limit)
  const params: unknown[] = [scope.orgId, scope.from.toISOString(), scope.to.toISOString()]
  let chatbot: string | null = null
  if (scope.chatbotId !== undefined) {
    params.push(scope.chatbotId)
    chatbot = `$${params.length}::uuid`
  }
  const shown = [...ranked.map((t) => t.id), ...(other ? [OTHER_TOPIC] : [])]
  const trends = await readTopicTrends(client, params, chatbot, interval, tz, shown)
  const excerpts = await readExcerpts(client, scope.orgId, ranked)
  const themes = rankedThemes(themeCounts, all)
  const themeOf = new Map(
    themes.flatMap((th) => th.topicIds.map((id) => [id, { id: th.id, label: th.label }])),
  )
  // Hidden topics, and the pinned ones no conversation in range is in (trial8: a renamed topic a
  // re-analysis emptied was in neither list, so its correction could be neither found nor undone).
  const { rows: kept } = await client.query<{
    id: string
    chatbot_id: string
    label: string
    hidden: boolean
  }>(
    `SELECT id, chatbot_id, label, hidden FROM rm_topics
      WHERE org_id = $1 AND ($2::uuid IS NULL OR chatbot_id = $2) AND (hidden OR pinned) AND canonical_id = id
        AND retired_at IS NULL
      ORDER BY lower(label), id`,
    [scope.orgId, scope.chatbotId ?? null],
  )
  const inRange = new Set(all.map((t) => `${t.chatbotId}|${t.id}`))
  const listed = (h: (typeof kept)[number]) => ({ id: h.id, chatbotId: h.chatbot_id, label: h.label })
  return {
    conversationsWithTopics,
    hiddenTopics: kept.filter((h) => h.hidden).map(listed),
    quietTopics: kept.filter((h) => !h.hidden && !inRange.has(`${h.chatbot_id}|${h.id}`)).map(listed),
    themes: themes.map((th) => ({
      id: th.id,
      chatbotId: th.chatbotId,
      label: th.label,
      conversations: th.conversations,
      messages: th.messages,
      share: figures({ ...th, sentimentSum: 0 }).share,
      topicIds: th.topicIds,
    })),
    topics: ranked.map((t) => ({
      id: t.id,
      chatbotId: t.chatbotId,
      label: t.label,
      keywords: t.keywords,
      configured: t.configured,
      theme: themeOf.get(t.id) ?? null,
      ...figures(t),
      trend: trends.get(t.id) ?? [],
      examples: t.examples.map((e) => ({
        id: e.id,
        conversationId: e.conversationId,
        lastMessageAt: new Date(e.lastMessageAt).toISOString(),
        sentiment: e.sentiment as TopicSummary['examples'][number]['sentiment'],
        excerpt: excerpts.get(`${t.id}|${e.id}`) ?? null,
      })),
    })),
    other: other ? { ...figures(other), trend: trends.get(OTHER_TOPIC) ?? [] } : null,
  }
}

/**
 * The themes of the ranked topics (rm_themes), each with its conversations with a message in range (a
 * conversation in two of its topics counts once: rankTopics' withThemes), its topics' messages, and its
 * ranked topics; most conversations first, then in the order the grouping gave them.
 */
function rankedThemes(
  counts: readonly ThemeCount[],
  ranked: readonly RankedTopic[],
): {
  id: string
  chatbotId: string
  label: string
  conversations: number
  messages: number
  topicIds: string[]
}[] {
  if (ranked.length === 0) return []
  return counts.map((r) => {
    const own = new Set(r.topicIds)
    const topics = ranked.filter((t) => t.chatbotId === r.chatbotId && own.has(t.id))
    return {
      id: r.id,
      chatbotId: r.chatbotId,
      label: r.label,
      conversations: r.conversations,
      messages: topics.reduce((sum, t) => sum + t.messages, 0),
      topicIds: topics.map((t) => t.id),
    }
  })
}

/**
 * The topic ids a `theme=` filter stands for: the theme's topics but hidden ones, and every topic counting
 * in one of them (merged into it); undefined when the organization (or its chatbot) has no such theme now.
 * One statement: the theme's rows, each with its topics (none for a theme whose topics are all hidden).
 */
export async function themeFilterIds(
  client: pg.ClientBase,
  orgId: string,
  chatbotId: string | undefined,
  theme: string,
): Promise<string[] | undefined> {
  const { rows } = await client.query<{ id: string | null }>(
    `SELECT t.id FROM rm_themes th
       LEFT JOIN LATERAL (
         SELECT t.id FROM rm_topics t
          WHERE t.org_id = $1 AND t.chatbot_id = th.chatbot_id AND t.canonical_id IN (
                  SELECT k.id FROM unnest(th.topic_ids) AS k(id) WHERE true ${notHidden('th.chatbot_id', 'k.id')})
       ) t ON true
      WHERE th.org_id = $1 AND th.id = $2 AND ($3::uuid IS NULL OR th.chatbot_id = $3)`,
    [orgId, theme, chatbotId ?? null],
  )
  if (rows.length === 0) return undefined
  return rows.flatMap((r) => (r.id === null ? [] : [r.id]))
}

/** Messages per bucket of each shown topic, a point for every bucket (0 where none). */
async function readTopicTrends(
  client: pg.ClientBase,
  baseParams: readonly unknown[],
  chatbot: string | null,
  interval: Interval,
  tz: string,
  topics: readonly string[],
): Promise<Map<string, { bucket: string; messages: number }[]>> {
  const trends = new Map<string, { bucket: string; messages: number }[]>()
  if (topics.length === 0) return trends
  const params = [...baseParams, [...topics]]
  const topicsParam = `$${params.length}::text[]`
  const { series, key } = BUCKETS[interval]
  if (series.includes('$TZ')) params.push(tz)
  const tzParam = `$${params.length}::text`
  const byChatbot = chatbot === null ? '' : `AND h.chatbot_id = ${chatbot}`
  const { rows } = await client.query<{ topic: string; bucket: Date; messages: number | null }>(
    `WITH buckets AS (${series.replaceAll('$TZ', tzParam)}),
          ${mergedTopics},
          counts AS (
            SELECT ${canonical('h.chatbot_id', 'h.topic')} AS topic, ${key.replaceAll('$TZ', tzParam)} AS key,
                   sum(h.messages)::float8 AS messages
              FROM rm_hourly_topics h CROSS JOIN merged m
             WHERE h.org_id = $1 AND h.hour >= $2::timestamptz AND h.hour < $3::timestamptz ${byChatbot}
             GROUP BY 1, 2)
     SELECT s.topic, b.bucket, c.messages
       FROM unnest(${topicsParam}) AS s(topic) CROSS JOIN buckets b
       LEFT JOIN counts c ON c.topic = s.topic AND c.key = b.key
      ORDER BY s.topic, b.key`,
    params,
  )
  for (const r of rows) {
    const points = trends.get(r.topic) ?? []
    points.push({ bucket: r.bucket.toISOString(), messages: r.messages ?? 0 })
    trends.set(r.topic, points)
  }
  return trends
}

/**
 * Each pair's excerpt ($2 topics, $3 conversations, of organization $1): the conversation's first user
 * message on the topic (or on a topic merged into it), found through the primary key's conversation_id.
 */
export const TOPIC_EXCERPTS = `SELECT p.topic, p.conversation_id, m.content
       FROM unnest($2::text[], $3::uuid[]) AS p(topic, conversation_id)
       CROSS JOIN LATERAL (
         SELECT m.content FROM rm_messages m
          WHERE m.conversation_id = p.conversation_id AND m.org_id = $1 AND m.role = 'user'
            AND m.content IS NOT NULL
            AND (p.topic = ANY(m.topics) OR EXISTS (SELECT 1 FROM rm_topics t WHERE t.id = ANY(m.topics)
                                                     AND t.canonical_id = p.topic AND t.org_id = $1))
          ORDER BY m.sent_at, m.arrival LIMIT 1) m`

/** Each example's first end-user message in its topic (in any topic that counts in it), cut short. */
async function readExcerpts(
  client: pg.ClientBase,
  orgId: string,
  topics: readonly { id: string; examples: readonly { id: string }[] }[],
): Promise<Map<string, string>> {
  const pairs = topics.flatMap((t) => t.examples.map((e) => ({ topic: t.id, conversation: e.id })))
  const excerpts = new Map<string, string>()
  if (pairs.length === 0) return excerpts
  const { rows } = await client.query<{ topic: string; conversation_id: string; content: string }>(
    TOPIC_EXCERPTS,
    [orgId, pairs.map((p) => p.topic), pairs.map((p) => p.conversation)],
  )
  for (const r of rows) excerpts.set(`${r.topic}|${r.conversation_id}`, r.content.slice(0, EXCERPT_CHARS))
  return excerpts
}
